import type { SQL } from "bun";
import { log } from "../log.ts";
import { EventBus, type DomainEvent } from "./events.ts";
import type { PgListener } from "./pg-listener.ts";

/** The channel every process LISTENs to for the others' stream events. */
export const EVENTS_CHANNEL = "rookery_stream_events";
/**
 * The longest notification sent whole. PostgreSQL refuses a payload of 8000 bytes or more; the
 * margin is for the sequence number and the origin in front of the event. A longer event (a
 * status's row with thousands of home feeds it went into) travels as its number alone and is
 * read from the table by whoever hears it.
 */
export const INLINE_LIMIT = 7900;

export interface PgEventRelayOptions {
  /** The pool the events are written and read through. */
  sql: SQL;
  /** This process's LISTEN connection (shared with the cache generations); none for a command, which only publishes (never started). */
  listener?: PgListener;
  /** Names this process in what it publishes, so that it skips its own events when they come back. */
  origin: string;
  /** Where another process's event goes: this process's stream fan-out, as a local event after commit. */
  tell?: (event: DomainEvent) => void;
  /** How often the table is read for events a notification did not bring (a reconnection, a missed one). */
  pollMs?: number;
  /** How long events are kept for the others to catch up. */
  keepMs?: number;
  /** How long a number missing between two others is waited for (a write committing late) before it counts as never written. */
  holeMs?: number;
}

/**
 * Stream events across processes on one PostgreSQL. What streams hear of (the events passed,
 * once committed, to the stream fan-out) is written by the process that committed it into an
 * UNLOGGED table, numbered by a sequence, and NOTIFYed in the same statement (whole when small,
 * its number alone otherwise). Every other process hears it, skips its own, and tells its own
 * fan-out, which renders it from the database as it renders a local event.
 *
 * What a process has applied is the numbers up to `seen`, less the `holes` (numbers skipped by
 * a notification or a read: a write not yet committed, or one that failed). Each notification,
 * each poll and each reconnection reads what is above `seen` or in a hole; a hole still empty
 * after `holeMs` is forgotten. So an event is told once, and one published while this process's
 * listen connection was down is told when it is back (or at the next poll).
 */
export class PgEventRelay {
  private seen = 0;
  private holes = new Map<number, number>();
  /** Events heard while a read was under way, told with its rows in their order. */
  private waiting: { seq: number; body: string }[] = [];
  private publishing: string[] = [];
  private flushing: Promise<void> | null = null;
  private catching: Promise<void> | null = null;
  private catchAgain = false;
  private poll: ReturnType<typeof setInterval> | null = null;
  private prune: ReturnType<typeof setInterval> | null = null;
  private readonly pollMs: number;
  private readonly keepMs: number;
  private readonly holeMs: number;

  constructor(private options: PgEventRelayOptions) {
    this.pollMs = options.pollMs ?? 1000;
    this.keepMs = options.keepMs ?? 5 * 60_000;
    this.holeMs = options.holeMs ?? 10_000;
  }

  /** Makes the table if needed, listens, and starts from the newest event: what came before is not told. */
  async start(): Promise<void> {
    const { sql, listener } = this.options;
    if (!listener) throw new Error("a relay without a listen connection only publishes");
    await PgEventRelay.makeTable(sql);
    await listener.listen(EVENTS_CHANNEL, (payload) => this.heard(payload), () => this.catchUp());
    const [row] = await sql`SELECT coalesce(max(seq), 0) AS seq FROM rookery_stream_events`;
    this.seen = Math.max(this.seen, Number(row.seq));
    this.poll = setInterval(() => this.catchUp(), this.pollMs);
    this.prune = setInterval(() => void this.pruneOld(), Math.min(this.keepMs, 60_000));
  }

  /**
   * The table the events are written to. Not in the migrations: a table only processes sharing
   * PostgreSQL need, UNLOGGED (no WAL written for it; a crash of PostgreSQL empties it, and with
   * it every stream is cut anyway). Made by whichever process publishes first, a command too.
   */
  static async makeTable(sql: SQL): Promise<void> {
    await sql.unsafe(`CREATE UNLOGGED TABLE IF NOT EXISTS rookery_stream_events (
      seq bigserial PRIMARY KEY, origin text NOT NULL, body text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
    await sql.unsafe(`CREATE INDEX IF NOT EXISTS rookery_stream_events_at ON rookery_stream_events (at)`);
  }

  /** Publishes, once committed, what streams hear of (registered by the table in consequences.ts, with the stream events' names). */
  subscribe(events: EventBus, types: readonly DomainEvent["type"][]) {
    for (const type of types) events.afterCommit(type, (e) => this.publish(e));
  }

  /** Queues an event: the events of one turn go in one statement, in their order. */
  publish(event: DomainEvent): void {
    this.publishing.push(JSON.stringify(event));
    if (!this.flushing) this.flushing = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Resolves once everything published so far is written and notified (tests, stopping). */
  async published(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    const bodies = this.publishing;
    this.publishing = [];
    try {
      // The rows are numbered in the bodies' order and notified in that order, at commit.
      await this.options.sql`
        WITH e AS (
          INSERT INTO rookery_stream_events (origin, body)
          SELECT ${this.options.origin}, b FROM json_array_elements_text(${JSON.stringify(bodies)}::text::json) WITH ORDINALITY AS t(b, n) ORDER BY n
          RETURNING seq, body)
        SELECT count(pg_notify(${EVENTS_CHANNEL}, seq || ' ' || ${this.options.origin} || CASE WHEN octet_length(body) <= ${INLINE_LIMIT} THEN ' ' || body ELSE '' END))
        FROM (SELECT * FROM e ORDER BY seq) ordered`;
    } catch (e) {
      // Other processes' streams miss these; this process's own were told by its bus.
      log("error", "stream events: publishing failed", { events: bodies.length, error: String(e).split("\n")[0] });
    }
    this.flushing = this.publishing.length > 0 ? this.flush() : null;
  }

  /** A notification: `<seq> <origin>[ <event>]`. */
  private heard(payload: string) {
    const a = payload.indexOf(" ");
    const b = payload.indexOf(" ", a + 1);
    const seq = Number(payload.slice(0, a));
    const origin = b < 0 ? payload.slice(a + 1) : payload.slice(a + 1, b);
    const before = this.holes.size;
    if (!this.take(seq)) return;
    // Numbers skipped: written while this connection was down, or not yet committed; look for them.
    if (this.holes.size > before) this.catchUp();
    if (origin === this.options.origin) return;
    if (b < 0) {
      // Too long to travel whole: read it (with anything else missing).
      this.holes.set(seq, Date.now());
      this.catchUp();
    } else if (this.catching) {
      // A read under way may bring earlier events: this one waits for it, to keep their order.
      this.waiting.push({ seq, body: payload.slice(b + 1) });
    } else this.tell(payload.slice(b + 1));
  }

  /** Marks `seq` applied; false if it already was (or is older than where this process started). */
  private take(seq: number): boolean {
    if (seq <= this.seen) return this.holes.delete(seq);
    const now = Date.now();
    for (let n = this.seen + 1; n < seq; n++) this.holes.set(n, now);
    this.seen = seq;
    return true;
  }

  private tell(body: string) {
    try {
      this.options.tell?.(JSON.parse(body) as DomainEvent);
    } catch (e) {
      log("error", "stream events: telling failed", { error: String(e).split("\n")[0] });
    }
  }

  /** Reads what is above `seen` or in a hole; one read at a time, another after it if asked meanwhile. */
  catchUp(): void {
    if (this.catching) {
      this.catchAgain = true;
      return;
    }
    this.catching = this.read()
      .catch((e) => log("warn", "stream events: catching up failed", { error: String(e).split("\n")[0] }))
      .finally(() => {
        this.catching = null;
        if (this.catchAgain) {
          this.catchAgain = false;
          this.catchUp();
        }
      });
  }

  /** Resolves once the reads under way (and one asked for meanwhile) are done (tests). */
  async caughtUp(): Promise<void> {
    while (this.catching) await this.catching;
  }

  private async read() {
    const now = Date.now();
    for (const [n, since] of this.holes) if (now - since > this.holeMs) this.holes.delete(n);
    const holes = [...this.holes.keys()];
    const found: { seq: number; body: string }[] = [];
    try {
      const rows = await this.options.sql`
        SELECT seq, origin, body FROM rookery_stream_events
        WHERE seq > ${this.seen} OR seq IN (SELECT (json_array_elements_text(${JSON.stringify(holes)}::text::json))::bigint)
        ORDER BY seq`;
      for (const row of rows as { seq: string; origin: string; body: string }[]) {
        const seq = Number(row.seq);
        if (this.take(seq) && row.origin !== this.options.origin) found.push({ seq, body: row.body });
      }
    } finally {
      for (const e of [...found, ...this.waiting.splice(0)].sort((x, y) => x.seq - y.seq)) this.tell(e.body);
    }
  }

  private async pruneOld() {
    await this.options.sql`DELETE FROM rookery_stream_events WHERE at < now() - ${this.keepMs / 1000} * interval '1 second'`.catch((e) =>
      log("warn", "stream events: pruning failed", { error: String(e).split("\n")[0] }),
    );
  }

  async stop(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    if (this.prune) clearInterval(this.prune);
    await this.published();
    await this.caughtUp();
  }
}

/**
 * The bus another process's events are emitted on: outside any transaction (they committed
 * over there), so its after-commit listeners are told at once. Only what streams need listens to
 * it (registerReaderConsequences, and the serving threads), never federation or push: those
 * were done by the process that wrote.
 */
export function relayedBus(): EventBus {
  return new EventBus({ inTransaction: false, afterCommit: (task) => task() });
}
