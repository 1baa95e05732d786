import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { reports } from "./admin.ts";
import { bool } from "./columns.ts";
import { statuses } from "./statuses.ts";

// What is written for a reader: home and list feeds, notifications, conversations, filters.

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
    /** mention | status | reblog | follow | follow_request | favourite | poll | update | quote | quoted_update | admin.sign_up | admin.report */
    type: text("type").notNull(),
    statusId: integer("status_id").references(() => statuses.id, { onDelete: "cascade" }),
    /** The report an `admin.report` is about (its sender is the reporter); it goes with the report. */
    reportId: integer("report_id").references(() => reports.id, { onDelete: "cascade" }),
    /**
     * Mastodon 4.3's grouping key for favourite, reblog and follow: `<type>[-<status id>]-<hour>`,
     * the hour being when the group began (a group spans at most 12 hours). Null for the types
     * that are not grouped and for filtered ones: their group is `ungrouped-<id>`.
     */
    groupKey: text("group_key"),
    /** Held back by the recipient's notification policy: listed only under its request. */
    filtered: bool("filtered").notNull().default(false),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("notifications_account").on(t.accountId, t.id),
    index("notifications_activity").on(t.accountId, t.fromAccountId, t.type),
    index("notifications_group").on(t.accountId, t.groupKey),
  ],
);

export type NotificationRow = typeof notifications.$inferSelect;

/**
 * Mastodon 4.3's notification policy: for each kind of sender, accept | filter | drop. No row is
 * the defaults (private mentions from strangers and limited accounts filtered, the rest accepted).
 */
export const notificationPolicies = sqliteTable("notification_policies", {
  accountId: integer("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  forNotFollowing: text("for_not_following").notNull().default("accept"),
  forNotFollowers: text("for_not_followers").notNull().default("accept"),
  forNewAccounts: text("for_new_accounts").notNull().default("accept"),
  forPrivateMentions: text("for_private_mentions").notNull().default("filter"),
  forLimitedAccounts: text("for_limited_accounts").notNull().default("filter"),
});

export type NotificationPolicyRow = typeof notificationPolicies.$inferSelect;

/**
 * A sender whose private or unsolicited mentions the policy held back, waiting for the recipient
 * to accept or dismiss them (Mastodon makes requests of mentions only). How many are held is
 * counted when read, so that dismissals, withdrawals and deleted statuses never leave it stale.
 */
export const notificationRequests = sqliteTable(
  "notification_requests",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromAccountId: integer("from_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    lastStatusId: integer("last_status_id").references(() => statuses.id, { onDelete: "set null" }),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("notification_requests_pair").on(t.accountId, t.fromAccountId)],
);

export type NotificationRequestRow = typeof notificationRequests.$inferSelect;

/** Senders whose request was accepted: their notifications pass the policy from then on. */
export const notificationPermissions = sqliteTable(
  "notification_permissions",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    fromAccountId: integer("from_account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.fromAccountId] })],
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
