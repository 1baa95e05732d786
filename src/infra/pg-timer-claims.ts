import type { SQL } from "bun";
import { hostname } from "node:os";
import type { Clock } from "../clock.ts";
import { log } from "../log.ts";

/** The database's clock in epoch ms: leases are measured on it, one clock for every machine. */
const DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/** What a process that fires a timer may do with it. */
export type ClaimAnswer =
  /** Run it; then `finish` (or, if the handler threw, `finish` all the same: a throw is not retried). */
  | { run: true; renew(): Promise<boolean> }
  /** Another process runs it (or ran it): look again at `retryAt` (the local clock), or never (null: done). */
  | { run: false; retryAt: number | null };

/**
 * How a timer wheel (timer-wheel.ts) makes sure a due timer runs once when several processes
 * hold it. The single process on SQLite has none: its wheel runs every timer it holds.
 */
export interface TimerClaims {
  /** Asks to run the timer `key` due at `dueAt`. */
  claim(key: string, dueAt: number): Promise<ClaimAnswer>;
  /** The claimed timer has run: no process runs it again. */
  finish(key: string, dueAt: number): Promise<void>;
  /** How often a running timer's claim is renewed, in ms. */
  readonly renewEveryMs: number;
}

export interface PgTimerClaimsOptions {
  sql: SQL;
  /** The wheel's clock: what `retryAt` is measured on. */
  clock: Clock;
  /** This process, for the operator reading timer_claims; the host and process id by default. */
  holder?: string;
  /** How long a claim holds a running timer without renewal; renewed every third of it. */
  leaseMs?: number;
}

/**
 * Timer claims in PostgreSQL (table timer_claims, a row per timer key and due time). Each
 * process's wheel stays its own local alarm; when it fires, one statement decides who runs the
 * timer: an INSERT of the claim that, on conflict, takes the row over only if it is not done and
 * its lease is over. Two processes firing at once serialize on the row: the second sees the
 * first's live lease and gets nothing back. The loser keeps the timer in its wheel, due again at
 * the lease's end: if the winner finished, the claim answers "done" and the timer is dropped; if
 * the winner died (kill -9), its lease ran out and the loser runs the timer. A running timer's
 * lease is renewed while its handler runs, so a slow job is not taken over.
 *
 * Done rows stay a day (so a process still holding the timer learns it is done), then `sweep`
 * drops them.
 */
export class PgTimerClaims implements TimerClaims {
  private readonly sql: SQL;
  private readonly clock: Clock;
  readonly holder: string;
  private readonly leaseMs: number;
  readonly renewEveryMs: number;

  constructor(options: PgTimerClaimsOptions) {
    this.sql = options.sql;
    this.clock = options.clock;
    this.holder = options.holder ?? `${hostname()}:${process.pid}`;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.renewEveryMs = Math.max(1, Math.floor(this.leaseMs / 3));
  }

  async claim(key: string, dueAt: number): Promise<ClaimAnswer> {
    // One round trip: the claim, or (when another holds it) what the row says, with the lease's
    // time left measured on the database's clock.
    const [row] = await this.sql.unsafe(
      `WITH claimed AS (
         INSERT INTO timer_claims (key, due_at, claimed_by, claimed_until) VALUES ($1, $2, $3, ${DB_NOW} + $4)
         ON CONFLICT (key, due_at) DO UPDATE SET claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until
         WHERE NOT timer_claims.done AND timer_claims.claimed_until < ${DB_NOW}
         RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM claimed) AS won,
              (SELECT done FROM timer_claims WHERE key = $1 AND due_at = $2) AS done,
              (SELECT claimed_until - ${DB_NOW} FROM timer_claims WHERE key = $1 AND due_at = $2) AS left_ms`,
      [key, dueAt, this.holder, this.leaseMs],
    );
    if (row.won) return { run: true, renew: () => this.renew(key, dueAt) };
    // A claim made by another process while this statement waited on the row is invisible to the
    // statement's snapshot (done and left_ms null): a second statement sees it.
    const seen = row.done !== null ? row : (await this.sql.unsafe(`SELECT done, claimed_until - ${DB_NOW} AS left_ms FROM timer_claims WHERE key = $1 AND due_at = $2`, [key, dueAt]))[0];
    if (seen?.done) return { run: false, retryAt: null };
    const left = seen ? Math.max(0, Number(seen.left_ms)) : 0;
    return { run: false, retryAt: this.clock.now() + left + 1 };
  }

  private async renew(key: string, dueAt: number): Promise<boolean> {
    try {
      const rows = await this.sql.unsafe(
        `UPDATE timer_claims SET claimed_until = ${DB_NOW} + $1 WHERE key = $2 AND due_at = $3 AND claimed_by = $4 AND NOT done RETURNING 1`,
        [this.leaseMs, key, dueAt, this.holder],
      );
      if (rows.length === 0) log("warn", "timer: a claim was lost while its job ran; another process may run it again", { timer: key });
      return rows.length > 0;
    } catch (e) {
      log("warn", "timer: a claim could not be renewed", { timer: key, error: String(e).split("\n")[0] });
      return true;
    }
  }

  async finish(key: string, dueAt: number): Promise<void> {
    await this.sql`UPDATE timer_claims SET done = true WHERE key = ${key} AND due_at = ${dueAt} AND claimed_by = ${this.holder}`;
  }

  /** Drops the claims of timers done more than a day ago; answers how many. */
  async sweep(): Promise<number> {
    const rows = await this.sql`DELETE FROM timer_claims WHERE done AND due_at < ${this.clock.now() - 24 * 60 * 60 * 1000} RETURNING 1`;
    return rows.length;
  }
}
