import type { SQL } from "bun";
import { log } from "../log.ts";
import type { PgListener } from "./pg-listener.ts";

/** The channel every process LISTENs to for the timers the others set. */
export const TIMERS_CHANNEL = "rookery_timers";
/** PostgreSQL refuses a notification of 8000 bytes or more: a turn's timers go in notifications below this. */
const PAYLOAD_LIMIT = 7900;

/**
 * The timers every process holds: those that stand for rows of the database (a scheduled
 * status, a poll's end, a quote's check, a push delivery's next attempt). Stream keep-alives are
 * each process's own, and the hourly sweeps each process schedules for itself.
 */
const SHARED_KINDS = new Set(["scheduled", "poll", "quote-check", "push"]);

/**
 * How a timer wheel (timer-wheel.ts) shares the timers it is given with the other processes'
 * wheels, so that every process holds every timer and the claims (pg-timer-claims.ts) pick the
 * one that runs it: a timer set in one process is no longer lost with it (kill -9) until a
 * process starts again and reads the rows.
 */
export interface TimerShare {
  /** This process set the timer `key` (due at `dueAt`) or dropped it (null): the others are told once what made it committed. */
  told(key: string, dueAt: number | null): void;
  /** What places a timer another process set or dropped: the wheel, once, in its constructor. */
  hear(place: (key: string, dueAt: number | null) => void): void;
}

export interface PgTimerRelayOptions {
  /** The pool the notifications go through. */
  sql: SQL;
  /** This process's LISTEN connection (shared with the stream events and the cache generations). */
  listener: PgListener;
  /** Names this process in its notifications, so that it skips its own. */
  origin: string;
  /** Runs a task once the current transaction commits, at once outside one (DatabasePort.afterCommit). */
  afterCommit: (task: () => void) => void;
}

/**
 * Timers set in one process told to the others by NOTIFY. A timer is told once the write that
 * made it commits: a timer heard before its row exists would run, find nothing, and be marked
 * done under its claim, which the writer's own wheel would then find done and drop. A timer
 * another process hears for a write that rolled back runs, finds nothing, and does nothing (the
 * handlers read their row and claim it in the write: scheduled.ts, polls.ts).
 *
 * Nothing is stored: a notification missed while the listen connection was down is made up for
 * by reading the rows again (`start`'s `resync`), as a process does when it starts. Timers read
 * from the rows (a restore) are not told: every process reads them itself.
 */
export class PgTimerRelay implements TimerShare {
  private pending: string[] = [];
  private flushing: Promise<void> | null = null;
  private places: ((key: string, dueAt: number | null) => void)[] = [];

  constructor(private options: PgTimerRelayOptions) {}

  hear(place: (key: string, dueAt: number | null) => void): void {
    this.places.push(place);
  }

  told(key: string, dueAt: number | null): void {
    if (!SHARED_KINDS.has(key.slice(0, key.indexOf(":")))) return;
    this.options.afterCommit(() => this.queue(`${key} ${dueAt ?? "-"}`));
  }

  /** LISTENs; `resync` reads the rows again after a reconnection (what was told meanwhile is lost). */
  async start(resync: () => void): Promise<void> {
    await this.options.listener.listen(TIMERS_CHANNEL, (payload) => this.heard(payload), resync);
  }

  /** The timers of one turn go in as few notifications as fit. */
  private queue(line: string) {
    this.pending.push(line);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Resolves once every timer told so far is notified (tests, stopping). */
  async published(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    const lines = this.pending;
    this.pending = [];
    const payloads: string[] = [];
    let current = this.options.origin;
    for (const line of lines) {
      if (current.length + 1 + line.length > PAYLOAD_LIMIT) {
        payloads.push(current);
        current = this.options.origin;
      }
      current += `\n${line}`;
    }
    payloads.push(current);
    try {
      await this.options.sql`SELECT count(pg_notify(${TIMERS_CHANNEL}, p)) FROM json_array_elements_text(${JSON.stringify(payloads)}::text::json) AS t(p)`;
    } catch (e) {
      // The others learn of these timers when they next read the rows (a start, a reconnection).
      log("error", "timers: telling the other processes failed", { timers: lines.length, error: String(e).split("\n")[0] });
    }
    this.flushing = this.pending.length > 0 ? this.flush() : null;
  }

  /** `<origin>\n<key> <due ms or ->...` */
  private heard(payload: string) {
    const [origin, ...lines] = payload.split("\n");
    if (origin === this.options.origin) return;
    for (const line of lines) {
      const space = line.lastIndexOf(" ");
      const key = line.slice(0, space);
      const due = line.slice(space + 1);
      const dueAt = due === "-" ? null : Number(due);
      if (!SHARED_KINDS.has(key.slice(0, key.indexOf(":"))) || (dueAt !== null && !Number.isFinite(dueAt))) continue;
      for (const place of this.places) place(key, dueAt);
    }
  }
}
