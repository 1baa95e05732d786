import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bool } from "./columns.ts";

/**
 * What one process keeps in memory and several processes on one PostgreSQL share instead
 * (docs/scaling.md, "Shared state across processes"). The embedded server never writes these
 * tables: they are in the SQLite schema so that both schemas stay one description.
 */

/**
 * Rate-limit counters (src/infra/pg-rate-counters.ts): one per bucket, key and fixed window,
 * counted by every process. UNLOGGED on PostgreSQL (a hand-written line in its migration):
 * counters of a few minutes are not worth the WAL, and a crash that empties them only forgives
 * a window.
 */
export const rateLimitCounters = sqliteTable(
  "rate_limit_counters",
  {
    bucket: text("bucket").notNull(),
    /** The account id or address the bucket counts, as text. */
    key: text("key").notNull(),
    /** The window's number: floor(time / period). */
    window: integer("window").notNull(),
    count: integer("count").notNull(),
    /** When the window ends (ms): the sweep drops counters past it. */
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.key, t.window] })],
);

/**
 * Claims of the timer wheel's due jobs (src/infra/pg-timer-claims.ts): the process whose claim
 * of a timer (its key and due time) holds runs it; the others wait for its lease to end.
 */
export const timerClaims = sqliteTable(
  "timer_claims",
  {
    /** The wheel's key, `kind:id`. */
    key: text("key").notNull(),
    dueAt: integer("due_at").notNull(),
    claimedBy: text("claimed_by").notNull(),
    /** The lease's end, on the database's clock (ms). */
    claimedUntil: integer("claimed_until").notNull(),
    done: bool("done").notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.key, t.dueAt] })],
);

/** The id workers' numbers (src/infra/pg-id-worker.ts): one row per number a live process leases. */
export const idWorkers = sqliteTable("id_workers", {
  worker: integer("worker").primaryKey(),
  holder: text("holder").notNull(),
  /** The lease's end, on the database's clock (ms). */
  leasedUntil: integer("leased_until").notNull(),
});
