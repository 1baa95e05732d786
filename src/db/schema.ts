import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Times are integer milliseconds since the epoch; ids come from src/ids.ts.
const bool = (name: string) => integer(name, { mode: "boolean" });

/**
 * The public profile, of local accounts (domain null) and of remote actors seen through
 * federation (domain set, keyed by their actor IRI in uri). A username is unique per domain.
 */
export const accounts = sqliteTable(
  "accounts",
  {
    id: integer("id").primaryKey(),
    username: text("username").notNull(),
    displayName: text("display_name").notNull().default(""),
    /**
     * The note as the user wrote it, and as HTML rendered once when it was saved. A remote
     * account has no note of ours: note_html is its actor's summary, cleaned (sanitizeRemoteHtml).
     */
    note: text("note").notNull().default(""),
    noteHtml: text("note_html").notNull().default(""),
    /** JSON: [{name, value, valueHtml, verifiedAt}]; a remote account's value is its cleaned HTML, as valueHtml. */
    fields: text("fields").notNull().default("[]"),
    /** Remote accounts: JSON [{shortcode, url, static_url, visible_in_picker}], the custom emojis of their name, note and fields. */
    emojis: text("emojis").notNull().default("[]"),
    locked: bool("locked").notNull().default(false),
    bot: bool("bot").notNull().default(false),
    discoverable: bool("discoverable").notNull().default(true),
    indexable: bool("indexable").notNull().default(true),
    hideCollections: bool("hide_collections").notNull().default(false),
    avatarFile: text("avatar_file"),
    headerFile: text("header_file"),
    /** Remote accounts only: their avatar and header, shown at their own server's URLs (not downloaded). */
    avatarRemoteUrl: text("avatar_remote_url"),
    headerRemoteUrl: text("header_remote_url"),
    createdAt: integer("created_at").notNull(),
    followersCount: integer("followers_count").notNull().default(0),
    followingCount: integer("following_count").notNull().default(0),
    statusesCount: integer("statuses_count").notNull().default(0),
    lastStatusAt: integer("last_status_at"),
    /** Remote accounts only: the actor's IRI, its host (with port) as in acct, and its endpoints. */
    uri: text("uri"),
    domain: text("domain"),
    url: text("url"),
    inboxUrl: text("inbox_url"),
    sharedInboxUrl: text("shared_inbox_url"),
    followersUrl: text("followers_url"),
    /** When the actor document was last fetched (epoch ms). */
    fetchedAt: integer("fetched_at"),
    /** The account it moved to (a remote account's Move): shown as `moved`. */
    movedToAccountId: integer("moved_to_account_id"),
  },
  (t) => [
    uniqueIndex("accounts_username_domain_lower").on(sql`lower(${t.username})`, sql`lower(coalesce(${t.domain}, ''))`),
    uniqueIndex("accounts_uri").on(t.uri),
  ],
);

/** Sign-in credentials and private settings of a local account. */
export const users = sqliteTable(
  "users",
  {
    accountId: integer("account_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    locale: text("locale"),
    defaultPrivacy: text("default_privacy").notNull().default("public"),
    defaultSensitive: bool("default_sensitive").notNull().default(false),
    defaultLanguage: text("default_language"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_lower").on(sql`lower(${t.email})`)],
);

export const applications = sqliteTable("applications", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  website: text("website"),
  /** Newline-separated, as the app registered them. */
  redirectUris: text("redirect_uris").notNull(),
  /** Space-separated. */
  scopes: text("scopes").notNull(),
  clientId: text("client_id").notNull().unique(),
  clientSecretHash: text("client_secret_hash").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const accessTokens = sqliteTable(
  "oauth_access_tokens",
  {
    id: integer("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    applicationId: integer("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    /** Null for client_credentials tokens, which act for the app alone. */
    accountId: integer("account_id").references(() => accounts.id, { onDelete: "cascade" }),
    scopes: text("scopes").notNull(),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("oauth_access_tokens_account").on(t.accountId), index("oauth_access_tokens_app").on(t.applicationId)],
);

export const authorizationCodes = sqliteTable("oauth_authorization_codes", {
  id: integer("id").primaryKey(),
  codeHash: text("code_hash").notNull().unique(),
  applicationId: integer("application_id")
    .notNull()
    .references(() => applications.id, { onDelete: "cascade" }),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  redirectUri: text("redirect_uri").notNull(),
  scopes: text("scopes").notNull(),
  codeChallenge: text("code_challenge"),
  codeChallengeMethod: text("code_challenge_method"),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
  /** The token the code was exchanged for: revoked if the code is ever presented again. */
  tokenId: integer("token_id"),
});

/** Browser sessions of the sign-in and consent pages (never used by the API). */
export const webSessions = sqliteTable("web_sessions", {
  id: integer("id").primaryKey(),
  tokenHash: text("token_hash").notNull().unique(),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
});

const followColumns = {
  id: integer("id").primaryKey(),
  accountId: integer("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  targetAccountId: integer("target_account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  showReblogs: bool("show_reblogs").notNull().default(true),
  notify: bool("notify").notNull().default(false),
  /** JSON array of ISO 639-1 codes, or null for all languages. */
  languages: text("languages"),
  createdAt: integer("created_at").notNull(),
};

export const follows = sqliteTable("follows", followColumns, (t) => [
  uniqueIndex("follows_pair").on(t.accountId, t.targetAccountId),
  index("follows_target").on(t.targetAccountId, t.id),
]);

export const followRequests = sqliteTable("follow_requests", followColumns, (t) => [
  uniqueIndex("follow_requests_pair").on(t.accountId, t.targetAccountId),
  index("follow_requests_target").on(t.targetAccountId, t.id),
]);

export const markers = sqliteTable(
  "markers",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    timeline: text("timeline").notNull(),
    lastReadId: text("last_read_id").notNull(),
    version: integer("version").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.timeline] })],
);

export type AccountRow = typeof accounts.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApplicationRow = typeof applications.$inferSelect;
export type AccessTokenRow = typeof accessTokens.$inferSelect;

/** Server-wide values made once and kept: the signing secret, the VAPID key pair. */
export const instanceSettings = sqliteTable("instance_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

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
    /** Remote statuses: JSON [{shortcode, url, static_url, visible_in_picker}], the custom emojis of their server they use. */
    emojis: text("emojis").notNull().default("[]"),
    hasMedia: bool("has_media").notNull().default(false),
    hasPoll: bool("has_poll").notNull().default(false),
    repliesCount: integer("replies_count").notNull().default(0),
    reblogsCount: integer("reblogs_count").notNull().default(0),
    favouritesCount: integer("favourites_count").notNull().default(0),
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

/** A user's home timeline, filled on write: reading it is one range scan. */
export const homeFeed = sqliteTable(
  "home_feed",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    /** Who posted the entry (the booster, for a boost): unfollow removes by it. */
    authorId: integer("author_id").notNull(),
    /** Author of the original (the same as author_id unless a boost): mutes and blocks remove by either. */
    originAuthorId: integer("origin_author_id").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.statusId] }),
    index("home_feed_author").on(t.accountId, t.authorId),
    index("home_feed_origin").on(t.accountId, t.originAuthorId),
  ],
);

export const blocks = sqliteTable(
  "blocks",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: integer("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("blocks_pair").on(t.accountId, t.targetAccountId), index("blocks_target").on(t.targetAccountId)],
);

export const mutes = sqliteTable(
  "mutes",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    targetAccountId: integer("target_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    hideNotifications: bool("hide_notifications").notNull().default(true),
    expiresAt: integer("expires_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("mutes_pair").on(t.accountId, t.targetAccountId)],
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

export const notifications = sqliteTable(
  "notifications",
  {
    id: integer("id").primaryKey(),
    /** The recipient. */
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromAccountId: integer("from_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** mention | status | reblog | follow | follow_request | favourite | poll | update */
    type: text("type").notNull(),
    statusId: integer("status_id").references(() => statuses.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("notifications_account").on(t.accountId, t.id), index("notifications_activity").on(t.accountId, t.fromAccountId, t.type)],
);

export type StatusRow = typeof statuses.$inferSelect;
export type PollRow = typeof polls.$inferSelect;
export type NotificationRow = typeof notifications.$inferSelect;

/**
 * Uploaded media. While `processing` is queued or in_progress the raw upload waits in
 * `upload_file` (the queue's persistent job); `file` is the processed original.
 */
export const mediaAttachments = sqliteTable(
  "media_attachments",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    statusId: integer("status_id").references(() => statuses.id, { onDelete: "set null" }),
    /** Held by a scheduled status until it is published. */
    scheduledStatusId: integer("scheduled_status_id").references(() => scheduledStatuses.id, { onDelete: "set null" }),
    /** Order among the status's attachments. */
    position: integer("position").notNull().default(0),
    /** image | gifv | video | audio | unknown */
    type: text("type").notNull(),
    /** queued | in_progress | complete | failed */
    processing: text("processing").notNull(),
    uploadFile: text("upload_file"),
    file: text("file"),
    preview: text("preview"),
    /** A custom thumbnail stands in for the generated preview. */
    thumbnail: text("thumbnail"),
    /** JSON: {original?, small?, focus?} as the Attachment entity shows it. */
    meta: text("meta").notNull().default("{}"),
    description: text("description"),
    blurhash: text("blurhash"),
    createdAt: integer("created_at").notNull(),
    /** When a deleted status let go of it: the start of its redraft grace period. */
    detachedAt: integer("detached_at"),
    /** Random key of the attachment's short page URL (`text_url`), as Mastodon gives local media. */
    shortcode: text("shortcode"),
    /** Media of remote statuses: shown at its own server's URL, not downloaded. */
    remoteUrl: text("remote_url"),
  },
  (t) => [
    index("media_attachments_status").on(t.statusId, t.position),
    uniqueIndex("media_attachments_shortcode").on(t.shortcode),
    index("media_attachments_account").on(t.accountId, t.id),
    index("media_attachments_unattached").on(t.createdAt).where(sql`status_id IS NULL`),
    index("media_attachments_scheduled").on(t.scheduledStatusId),
  ],
);

export type MediaRow = typeof mediaAttachments.$inferSelect;

/** Statuses to publish later; `params` is the ScheduledStatus entity's params, as Mastodon keeps them. */
export const scheduledStatuses = sqliteTable(
  "scheduled_statuses",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    scheduledAt: integer("scheduled_at").notNull(),
    /** What the client sent, for display (the entity's `params`). */
    params: text("params").notNull(),
    /** The same, read and checked: what gets published. */
    input: text("input").notNull(),
    applicationId: integer("application_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("scheduled_statuses_account").on(t.accountId, t.id), index("scheduled_statuses_due").on(t.scheduledAt)],
);

export type ScheduledStatusRow = typeof scheduledStatuses.$inferSelect;

/**
 * Idempotency-Keys of POST /api/v1/statuses: what the first request with a key made, kept
 * for an hour. Written in the transaction that makes the status, so a retry after a
 * restart still finds it. Ids are plain integers: a status deleted since answers 404.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** Exactly one of the two is set. */
    statusId: integer("status_id"),
    scheduledStatusId: integer("scheduled_status_id"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_expiry").on(t.expiresAt)],
);

export const lists = sqliteTable(
  "lists",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    /** followed | list | none */
    repliesPolicy: text("replies_policy").notNull().default("list"),
    /** Members' posts go to this list instead of the home timeline. */
    exclusive: bool("exclusive").notNull().default(false),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("lists_account").on(t.accountId, t.id)],
);

export const listAccounts = sqliteTable(
  "list_accounts",
  {
    listId: integer("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.listId, t.accountId] }), index("list_accounts_account").on(t.accountId)],
);

/** A list's timeline, filled on write like the home timeline. */
export const listFeed = sqliteTable(
  "list_feed",
  {
    listId: integer("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    authorId: integer("author_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.listId, t.statusId] }), index("list_feed_author").on(t.listId, t.authorId)],
);

/** A direct-message thread as one participant sees it. */
export const accountConversations = sqliteTable(
  "account_conversations",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The thread (statuses.conversation_id). */
    conversationId: integer("conversation_id").notNull(),
    /** JSON: the other participants' ids, sorted. */
    participantIds: text("participant_ids").notNull(),
    /** JSON: the thread's direct statuses this participant can see. */
    statusIds: text("status_ids").notNull().default("[]"),
    lastStatusId: integer("last_status_id").notNull(),
    unread: bool("unread").notNull().default(false),
  },
  (t) => [
    uniqueIndex("account_conversations_thread").on(t.accountId, t.conversationId, t.participantIds),
    index("account_conversations_recent").on(t.accountId, t.lastStatusId),
  ],
);

export const customFilters = sqliteTable(
  "custom_filters",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    /** JSON: home | notifications | public | thread | account */
    context: text("context").notNull(),
    /** warn | hide | blur */
    action: text("action").notNull().default("warn"),
    expiresAt: integer("expires_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("custom_filters_account").on(t.accountId)],
);

export const customFilterKeywords = sqliteTable(
  "custom_filter_keywords",
  {
    id: integer("id").primaryKey(),
    filterId: integer("filter_id")
      .notNull()
      .references(() => customFilters.id, { onDelete: "cascade" }),
    keyword: text("keyword").notNull(),
    wholeWord: bool("whole_word").notNull().default(true),
  },
  (t) => [index("custom_filter_keywords_filter").on(t.filterId)],
);

export const customFilterStatuses = sqliteTable(
  "custom_filter_statuses",
  {
    id: integer("id").primaryKey(),
    filterId: integer("filter_id")
      .notNull()
      .references(() => customFilters.id, { onDelete: "cascade" }),
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
  },
  (t) => [uniqueIndex("custom_filter_statuses_pair").on(t.filterId, t.statusId)],
);

export type ListRow = typeof lists.$inferSelect;
export type AccountConversationRow = typeof accountConversations.$inferSelect;
export type CustomFilterRow = typeof customFilters.$inferSelect;

/**
 * A local account's ActivityPub key pairs (RSA for draft-cavage signatures, Ed25519 for
 * object proofs), made once on first need. Private keys are JWK and never leave the server.
 */
export const accountKeys = sqliteTable(
  "account_keys",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** "RSASSA-PKCS1-v1_5" or "Ed25519". */
    algorithm: text("algorithm").notNull(),
    publicKey: text("public_key").notNull(),
    privateKey: text("private_key").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.algorithm] })],
);

/** Fedify's key-value cache (remote documents, idempotence of inbox activities). Values are JSON. */
export const fedifyKv = sqliteTable(
  "fedify_kv",
  {
    /** JSON array of the key's parts. */
    key: text("key").primaryKey(),
    value: text("value").notNull(),
    /** Epoch ms; null never expires. */
    expiresAt: integer("expires_at"),
  },
  (t) => [index("fedify_kv_expires").on(t.expiresAt)],
);

/** Fedify's message queue (outgoing deliveries, incoming activities): survives restarts. */
export const fedifyMessages = sqliteTable(
  "fedify_messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** JSON of the message. */
    message: text("message").notNull(),
    /** Epoch ms before which the message is not handed out. */
    runAt: integer("run_at").notNull(),
    /** Messages of one ordering key are handled one at a time, in order. */
    orderingKey: text("ordering_key"),
    /** Epoch ms until which a worker holds the message; past it, a crashed worker's message is handed out again. */
    lockedUntil: integer("locked_until"),
    createdAt: integer("created_at").notNull(),
  },
  // ordering_key, id: a claim looks for an earlier message of the same key; without this index
  // that scan read every delayed retry (8–9 ms a claim behind 5,000 of them, 0.1 ms with it).
  (t) => [index("fedify_messages_run_at").on(t.runAt, t.id), index("fedify_messages_ordering_key").on(t.orderingKey, t.id)],
);

export type AccountKeyRow = typeof accountKeys.$inferSelect;
