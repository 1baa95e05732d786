import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { statuses } from "./statuses.ts";

// What came in from an account's archive (rookery accounts import-archive).

/**
 * Statuses imported from an archive, by the address they had on the server they were written
 * on: a second import of the same archive finds them here and adds nothing. The row outlives
 * a status deleted since (status_id set null), so that a post deleted after its import is not
 * brought back by the next one.
 */
export const statusOrigins = sqliteTable(
  "status_origins",
  {
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The Note's id in the archive (its address on the old server). */
    uri: text("uri").notNull(),
    statusId: integer("status_id").references(() => statuses.id, { onDelete: "set null" }),
    importedAt: integer("imported_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.uri] }), index("status_origins_status").on(t.statusId)],
);

export type StatusOriginRow = typeof statusOrigins.$inferSelect;
