import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { bool } from "./columns.ts";

// Lists brought in from a CSV file (Mastodon's export formats): the import and its entries,
// kept until every entry is worked off, so that an import outlives a restart.

/**
 * One uploaded file (Mastodon's BulkImport): its type, whether it replaces what the account
 * had (overwrite) or adds to it (merge). `queued` while an overwrite's removals are still to
 * be done, `running` while entries wait, `finished` once none does.
 */
export const imports = sqliteTable(
  "imports",
  {
    id: integer("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** following | blocks | mutes | domain_blocks | bookmarks | lists */
    type: text("type").notNull(),
    overwrite: bool("overwrite").notNull().default(false),
    /** queued | running | finished */
    state: text("state").notNull(),
    totalItems: integer("total_items").notNull(),
    createdAt: integer("created_at").notNull(),
    finishedAt: integer("finished_at"),
  },
  (t) => [index("imports_account").on(t.accountId, t.id)],
);

/**
 * One line of an import. Entries that need another server (`host` set) are worked off at a
 * bounded rate per host and in all; the others at once. What became of it stays for the report.
 */
export const importRows = sqliteTable(
  "import_rows",
  {
    id: integer("id").primaryKey(),
    importId: integer("import_id")
      .notNull()
      .references(() => imports.id, { onDelete: "cascade" }),
    /** The line of the file it came from (1 is the first line, a header included). */
    line: integer("line").notNull(),
    /** JSON of the entry as read (ImportEntry in src/services/portability/formats.ts). */
    data: text("data").notNull(),
    /** The other server the entry needs (an account's domain, a status's host); null when it needs none. */
    host: text("host"),
    /** pending | done | failed */
    state: text("state").notNull().default("pending"),
    /** Why it failed: unknown_account | server_down | refused | not_found | invalid */
    failure: text("failure"),
    detail: text("detail"),
    /** The account it came to (following and lists): whether it was accepted is read from the follows. */
    targetAccountId: integer("target_account_id"),
    processedAt: integer("processed_at"),
  },
  (t) => [index("import_rows_import").on(t.importId, t.state), index("import_rows_pending").on(t.state, t.host, t.id)],
);

export type ImportRow = typeof imports.$inferSelect;
export type ImportRowRow = typeof importRows.$inferSelect;
