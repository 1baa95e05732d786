import { integer, sqliteTable } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { statuses } from "./statuses.ts";

// What was fetched from other servers to fill a thread or a profile (src/services/remote/
// thread-fill.ts, account-history.ts), and when: each is done at most once per period.

/** When the replies of a remote thread (its top status) were last fetched (Mastodon's fetched_replies_at). */
export const replyFetches = sqliteTable("reply_fetches", {
  statusId: integer("status_id")
    .primaryKey()
    .references(() => statuses.id, { onDelete: "cascade" }),
  fetchedAt: integer("fetched_at").notNull(),
});

/** When a remote account's pinned posts and recent public posts were last fetched. */
export const historyFetches = sqliteTable("history_fetches", {
  accountId: integer("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  fetchedAt: integer("fetched_at").notNull(),
});

/**
 * Statuses fetched to fill a thread or a profile, not delivered: they go into no home feed,
 * neither when fetched nor when their author is followed later (HomeFeedService.backfill).
 */
export const backfilledStatuses = sqliteTable("backfilled_statuses", {
  statusId: integer("status_id")
    .primaryKey()
    .references(() => statuses.id, { onDelete: "cascade" }),
});
