import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { applications } from "./auth.ts";
import { bool } from "./columns.ts";

// Statuses and what hangs on them: mentions, tags, favourites, bookmarks, pins, polls, edits.

/**
 * Statuses, boosts included (a boost is a row with reblog_of_id). Mentions and hashtags are
 * also kept on the row as JSON so one query renders a status; the mentions and status_tags
 * tables serve the lookups (who is mentioned, which statuses carry a tag).
 */
export const statuses = sqliteTable(
  "statuses",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    applicationId: integer("application_id").references(() => applications.id, { onDelete: "set null" }),
    /** Source text as written (after trimming); empty for boosts. */
    text: text("text").notNull().default(""),
    contentHtml: text("content_html").notNull().default(""),
    spoilerText: text("spoiler_text").notNull().default(""),
    sensitive: bool("sensitive").notNull().default(false),
    /** public | unlisted | private | direct */
    visibility: text("visibility").notNull(),
    language: text("language"),
    inReplyToId: integer("in_reply_to_id"),
    inReplyToAccountId: integer("in_reply_to_account_id"),
    /** Remote statuses: the IRI of what they reply to, kept while that is not stored here (a thread to fetch). */
    inReplyToUri: text("in_reply_to_uri"),
    reblogOfId: integer("reblog_of_id"),
    /** The thread root's id (its own for a root): what a conversation mute applies to. */
    conversationId: integer("conversation_id").notNull(),
    /** JSON [{id, username}] of mentioned local accounts, in order of appearance. */
    mentions: text("mentions").notNull().default("[]"),
    /** JSON [normalised tag name]. */
    tags: text("tags").notNull().default("[]"),
    /** JSON [{shortcode, url, static_url, visible_in_picker}], the custom emojis of its server it uses (a local status's found when it is written). */
    emojis: text("emojis").notNull().default("[]"),
    hasMedia: bool("has_media").notNull().default(false),
    hasPoll: bool("has_poll").notNull().default(false),
    /** JSON of the PreviewCard of its first link (preview_cards), once fetched; kept here so one query renders a status. */
    card: text("card"),
    repliesCount: integer("replies_count").notNull().default(0),
    reblogsCount: integer("reblogs_count").notNull().default(0),
    favouritesCount: integer("favourites_count").notNull().default(0),
    /** Accepted quotes of it (Mastodon's quotes_count). */
    quotesCount: integer("quotes_count").notNull().default(0),
    /**
     * Who may quote it, as Mastodon's QuoteApproval lists it: JSON {automatic: [...], manual:
     * [...]} of "public" | "followers" | "following" | "unsupported_policy": a local status's
     * from its quote_approval_policy, a remote one's from its interactionPolicy.canQuote. Null
     * when none was stated (statuses from before quotes, remote ones without a policy): then
     * only the author may quote it, as in Mastodon.
     */
    quoteApproval: text("quote_approval"),
    createdAt: integer("created_at").notNull(),
    /** When the author last edited it; null if never. */
    editedAt: integer("edited_at"),
    /** Statuses of remote accounts: their object IRI and web page; null for local ones. */
    uri: text("uri"),
    url: text("url"),
  },
  (t) => [
    uniqueIndex("statuses_uri").on(t.uri),
    index("statuses_account").on(t.accountId, t.id),
    index("statuses_reblog_of").on(t.reblogOfId, t.accountId),
    // One boost of a status per account, as Mastodon keeps: two boosts at once (a double tap
    // on PostgreSQL, where both find none) make one. Boosts alone are in it.
    uniqueIndex("statuses_account_reblog_of").on(t.accountId, t.reblogOfId).where(sql`reblog_of_id IS NOT NULL`),
    index("statuses_in_reply_to").on(t.inReplyToId),
    index("statuses_in_reply_to_uri").on(t.inReplyToUri).where(sql`in_reply_to_uri IS NOT NULL`),
    index("statuses_conversation").on(t.conversationId),
    // The public timeline: public originals that are not replies to others.
    index("statuses_public")
      .on(t.id)
      .where(sql`visibility = 'public' AND reblog_of_id IS NULL AND (in_reply_to_id IS NULL OR in_reply_to_account_id = account_id)`),
  ],
);

export const mentions = sqliteTable(
  "mentions",
  {
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.statusId, t.accountId] }), index("mentions_account").on(t.accountId, t.statusId)],
);

export const tags = sqliteTable("tags", {
  id: integer("id").primaryKey(),
  /** Normalised (lower case, folded): the key lookups use. */
  name: text("name").notNull().unique(),
  createdAt: integer("created_at").notNull(),
});

export const statusTags = sqliteTable(
  "status_tags",
  {
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.statusId, t.tagId] }), index("status_tags_tag").on(t.tagId, t.statusId)],
);

/** Hashtags an account follows: their public statuses come to its home timeline. */
export const tagFollows = sqliteTable(
  "tag_follows",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("tag_follows_account_tag").on(t.accountId, t.tagId), index("tag_follows_tag").on(t.tagId)],
);

const accountStatusColumns = {
  id: integer("id").primaryKey(),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  statusId: integer("status_id")
    .notNull()
    .references(() => statuses.id, { onDelete: "cascade" }),
  createdAt: integer("created_at").notNull(),
};

export const favourites = sqliteTable("favourites", accountStatusColumns, (t) => [
  uniqueIndex("favourites_pair").on(t.accountId, t.statusId),
  index("favourites_account").on(t.accountId, t.id),
  index("favourites_status").on(t.statusId, t.id),
]);

export const bookmarks = sqliteTable("bookmarks", accountStatusColumns, (t) => [
  uniqueIndex("bookmarks_pair").on(t.accountId, t.statusId),
  index("bookmarks_account").on(t.accountId, t.id),
]);

export const statusPins = sqliteTable("status_pins", accountStatusColumns, (t) => [
  uniqueIndex("status_pins_pair").on(t.accountId, t.statusId),
]);

export const conversationMutes = sqliteTable(
  "conversation_mutes",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    conversationId: integer("conversation_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.conversationId] })],
);

export const polls = sqliteTable("polls", {
  id: integer("id").primaryKey(),
  statusId: integer("status_id")
    .notNull()
    .unique()
    .references(() => statuses.id, { onDelete: "cascade" }),
  accountId: integer("account_id").notNull(),
  /** JSON [title] */
  options: text("options").notNull(),
  /** JSON [count per option], kept in step with poll_votes. */
  tallies: text("tallies").notNull(),
  multiple: bool("multiple").notNull().default(false),
  hideTotals: bool("hide_totals").notNull().default(false),
  votesCount: integer("votes_count").notNull().default(0),
  votersCount: integer("voters_count").notNull().default(0),
  expiresAt: integer("expires_at").notNull(),
  /** Set once the poll-ended notifications went out. */
  endedAt: integer("ended_at"),
  createdAt: integer("created_at").notNull(),
});

/**
 * A status's versions, as StatusEdit entities show them: the first edit also records the
 * original. Text and media descriptions are kept as they were, rendered HTML included.
 */
export const statusEdits = sqliteTable(
  "status_edits",
  {
    id: integer("id").primaryKey(),
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    accountId: integer("account_id").notNull(),
    text: text("text").notNull(),
    contentHtml: text("content_html").notNull(),
    spoilerText: text("spoiler_text").notNull(),
    sensitive: bool("sensitive").notNull(),
    /** JSON [attachment id] in order. */
    mediaIds: text("media_ids").notNull().default("[]"),
    /** JSON [description or null], beside media_ids. */
    mediaDescriptions: text("media_descriptions").notNull().default("[]"),
    /** JSON [option title], or null without a poll. */
    pollOptions: text("poll_options"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("status_edits_status").on(t.statusId, t.id)],
);

export type StatusEditRow = typeof statusEdits.$inferSelect;

export const pollVotes = sqliteTable(
  "poll_votes",
  {
    id: integer("id").primaryKey(),
    pollId: integer("poll_id")
      .notNull()
      .references(() => polls.id, { onDelete: "cascade" }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    choice: integer("choice").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("poll_votes_choice").on(t.pollId, t.accountId, t.choice)],
);

export type StatusRow = typeof statuses.$inferSelect;
export type PollRow = typeof polls.$inferSelect;

/**
 * Hashtags an account features on its profile (Mastodon's FeaturedTag). `name` is the tag
 * as the user wrote it (its case kept for display); the counts are read from status_tags.
 */
export const featuredTags = sqliteTable(
  "featured_tags",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    tagId: integer("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("featured_tags_account_tag").on(t.accountId, t.tagId)],
);

export type FeaturedTagRow = typeof featuredTags.$inferSelect;
