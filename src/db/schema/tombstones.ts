import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";

/**
 * Remote statuses their authors deleted (Mastodon's Tombstone): a Create of one is not taken
 * again, whoever delivers it (an author's Linked Data signature is believed from anyone, and a
 * relay may deliver a Delete before its Create), nor is it fetched back. Kept for Deletes by
 * accounts stored here, of objects on their own server; they go with the account.
 */
export const tombstones = sqliteTable(
  "tombstones",
  {
    uri: text("uri").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("tombstones_account").on(t.accountId)],
);
