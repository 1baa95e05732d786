import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts.ts";
import { statuses } from "./statuses.ts";
import { bool } from "./columns.ts";

// Quote posts, as Mastodon 4.5 keeps them (its Quote model) and FEP-044f federates them.

/**
 * One status quoting another. The quoting status is `status_id` (one quote per status); the
 * quoted one is `quoted_status_id` once it is stored here, `quoted_uri` naming it until then
 * (a remote quote of a post not fetched yet). `state` follows Mastodon's: pending (a request
 * sent, no answer), accepted, rejected, revoked (accepted, then withdrawn by the quoted
 * author), deleted (the quoted status is gone).
 *
 * `activity_uri` is the QuoteRequest's id (local quotes of remote posts) or the one received
 * (remote quotes of local posts); `approval_uri` is the QuoteAuthorization stamp: the one the
 * quoted author's server issued (remote quoted posts), or ours (local quoted posts, served
 * at /users/:name/quote_authorizations/:id). `legacy` marks quotes read from servers that
 * do not ask (quoteUrl, _misskey_quote, quoteUri without a stamp), shown only as links.
 */
export const quotes = sqliteTable(
  "quotes",
  {
    id: integer("id").primaryKey(),
    statusId: integer("status_id")
      .notNull()
      .references(() => statuses.id, { onDelete: "cascade" }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    quotedStatusId: integer("quoted_status_id").references(() => statuses.id, { onDelete: "set null" }),
    quotedAccountId: integer("quoted_account_id").references(() => accounts.id, { onDelete: "set null" }),
    /** The quoted object's IRI as the quoting post named it (remote quotes); null for local ones. */
    quotedUri: text("quoted_uri"),
    /** pending | accepted | rejected | revoked | deleted */
    state: text("state").notNull().default("pending"),
    activityUri: text("activity_uri"),
    approvalUri: text("approval_uri"),
    legacy: bool("legacy").notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("quotes_status").on(t.statusId),
    index("quotes_quoted_status").on(t.quotedStatusId, t.id),
    index("quotes_quoted_account").on(t.quotedAccountId),
    uniqueIndex("quotes_activity_uri").on(t.activityUri),
    // Not unique: any post may name any stamp; only the one it proved counts.
    index("quotes_approval_uri").on(t.approvalUri),
    index("quotes_quoted_uri").on(t.quotedUri),
  ],
);

export type QuoteRow = typeof quotes.$inferSelect;

/**
 * A remote quote to be checked again (Mastodon's RefetchAndVerifyQuoteWorker): its quoted post
 * could not be had, or its stamp's server did not answer. `attempts` made so far, the next at
 * `due_at` (on the timer wheel, rebuilt from here at start). Gone with its quote.
 */
export const quoteChecks = sqliteTable("quote_checks", {
  quoteId: integer("quote_id")
    .primaryKey()
    .references(() => quotes.id, { onDelete: "cascade" }),
  attempts: integer("attempts").notNull().default(0),
  dueAt: integer("due_at").notNull(),
});
