import type { SQL } from "bun";
import { hostname } from "node:os";
import type { MessageQueue, MessageQueueDepth, MessageQueueEnqueueOptions, MessageQueueListenOptions } from "@fedify/fedify";
import type { Clock } from "../clock.ts";
import { log } from "../log.ts";
import type { OutgoingHttp } from "../net/outgoing.ts";
import { idleWait, QueueGate } from "./queue-gate.ts";

/** A row to insert: message JSON, run_at, ordering key, created_at. */
type NewRow = [string, number, string | null, number];

/** The channel an enqueue NOTIFYs, waking every listening process at once. */
export const QUEUE_CHANNEL = "rookery_fedify_queue";

/**
 * The database's clock in epoch ms. Leases are measured on it, one clock for every process
 * whatever machine it runs on; run_at stays on the server's Clock (as in queue.ts), the time
 * Fedify's retries are scheduled in and the tests move.
 */
const DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

export interface PgMessageQueueOptions {
  sql: SQL;
  clock: Clock;
  /** Where deliveries go out: what a handler sends is sent through it. */
  outgoing: OutgoingHttp;
  /** Domains this server does not federate with (FederationDomains.refuses). */
  refusesDomain?: (url: string) => boolean;
  /** Told of each delivery handled, for the health page's counts. */
  traffic?: { attempted(): void };
  /** Told of a delivery refused for its inbox's address (see QueueGate). */
  onAddressRefused?: (inbox: string, reason: string) => void;
  /**
   * Who this worker is, the same in each life of one process slot (the host and ID_WORKER, say):
   * at start it frees what it held in an earlier life and nothing of the others'. Defaults to
   * the host and the process id, which a restart does not reuse; its earlier life's messages
   * then wait for their leases to run out.
   */
  worker?: string;
  /** How long a claim holds a message without renewal; renewed every third of it while its handler runs. */
  leaseMs?: number;
  /** The longest an idle worker waits without a NOTIFY before it looks again. */
  pollMs?: number;
}

/**
 * Fedify's message queue in PostgreSQL, shared by any number of Rookery processes, over the
 * table fedify_messages that SQLite has (queue.ts). The rules are queue.ts's: at-least-once (a
 * message is removed only after its handler finished), one message of an ordering key at a time
 * and in order, delayed messages held until their time, and what a handler enqueues for its
 * own activity written in the statement that removes its message. What several processes add:
 * - a claim takes the oldest eligible message with FOR UPDATE SKIP LOCKED, so workers never wait
 *   on each other nor take the same message, and leases it (locked_by, locked_until);
 * - the lease is renewed while the handler runs; one that ran out (its process died) is claimed
 *   again by any worker, so a delivery cut short by kill -9 is sent by another process;
 * - an enqueue NOTIFYs; listening workers wake at once, and poll as well in case one was missed;
 * - enqueues with an ordering key take a transaction-scoped advisory lock on the key, so that
 *   one key's ids are committed in the order they were given (an id taken and committed after a
 *   larger one would let the larger run first, and both at once).
 * @fedify/postgres is not used: its only release is for Fedify 1.8, and it deletes a message
 * before handling it (lost on kill -9), with neither SKIP LOCKED nor ordering keys.
 */
export class PgMessageQueue implements MessageQueue {
  readonly nativeRetrial = false;
  private readonly sql: SQL;
  private readonly clock: Clock;
  private readonly outgoing: OutgoingHttp;
  private readonly traffic: { attempted(): void };
  private readonly gate: QueueGate;
  readonly worker: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private wake: (() => void) | null = null;
  /** A NOTIFY (or a caller of idle()) came while the worker was busy: look again before sleeping. */
  private lookAgain = false;
  /** Rows enqueued in this turn of the event loop, written together in one statement at its end. */
  private inserts: { row: NewRow; resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** The message being handled and what its handler enqueued for the same activity (see queue.ts). */
  private handling: { activityId: string; held: NewRow[] } | null = null;
  private inbox: string | null = null;
  private idleWaiters: (() => void)[] = [];

  constructor(options: PgMessageQueueOptions) {
    this.sql = options.sql;
    this.clock = options.clock;
    this.outgoing = options.outgoing;
    this.traffic = options.traffic ?? { attempted() {} };
    this.gate = new QueueGate(options.outgoing, options.refusesDomain ?? (() => false), options.onAddressRefused ?? (() => {}));
    this.worker = options.worker ?? `${hostname()}:${process.pid}`;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollMs = options.pollMs ?? 1000;
  }

  /** Queues the message; those of one turn of the event loop go in one statement (see queue.ts). */
  async enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
    const now = this.clock.now();
    const delay = options?.delay ? Math.max(0, options.delay.total("millisecond")) : 0;
    const row: NewRow = [JSON.stringify(message), now + delay, options?.orderingKey ?? null, now];
    const activityId = (message as { activityId?: unknown } | null)?.activityId;
    if (this.handling && activityId === this.handling.activityId) {
      this.handling.held.push(row);
      return;
    }
    return new Promise<void>((resolve, reject) => {
      this.inserts.push({ row, resolve, reject });
      if (this.inserts.length === 1) queueMicrotask(() => void this.writeInserts());
    });
  }

  /** One statement for all of them, as the turn's batching makes it. */
  async enqueueMany(messages: readonly unknown[], options?: MessageQueueEnqueueOptions): Promise<void> {
    await Promise.all(messages.map((message) => this.enqueue(message, options)));
  }

  private async writeInserts() {
    const batch = this.inserts;
    this.inserts = [];
    try {
      await this.write(batch.map((b) => b.row));
    } catch (e) {
      for (const { reject } of batch) reject(e);
      return;
    }
    for (const { resolve } of batch) resolve();
  }

  /**
   * Inserts rows in their order, with a NOTIFY delivered at commit (also when a removed message
   * was holding back the next of its ordering key). With `removing`, only if that message is
   * still this worker's, deleted in the same transaction (a handler's held re-enqueues): a
   * worker whose lease ran out and was taken over writes nothing, since the worker that took the
   * message over enqueues its own. Answers whether the message was removed.
   */
  private async write(rows: NewRow[], removing?: number): Promise<boolean> {
    const keys = [...new Set(rows.map((r) => r[2]).filter((k): k is string => k !== null))];
    const statement = async (sql: SQL) => {
      if (keys.length > 0) {
        // In one order everywhere, so that two writers of the same keys cannot deadlock.
        await sql`SELECT pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended('fedify_messages:' || k, 0) AS h FROM unnest(${sql.array(keys, "TEXT")}::text[]) AS k) AS locks ORDER BY h`;
      }
      const [done] = await sql`
        WITH gone AS (DELETE FROM fedify_messages WHERE id = ${removing ?? null}::bigint AND locked_by = ${this.worker} RETURNING id, ordering_key),
        added AS (
          INSERT INTO fedify_messages (message, run_at, ordering_key, created_at)
          SELECT r.message, r.run_at, r.ordering_key, r.created_at
          FROM unnest(${sql.array(rows.map((r) => r[0]), "TEXT")}::text[], ${sql.array(rows.map((r) => String(r[1])), "INT8")}::int8[],
                      ${sql.array(rows.map((r) => r[2]), "TEXT")}::text[], ${sql.array(rows.map((r) => String(r[3])), "INT8")}::int8[])
               WITH ORDINALITY AS r(message, run_at, ordering_key, created_at, n)
          WHERE ${removing === undefined} OR EXISTS (SELECT 1 FROM gone)
          ORDER BY r.n
          RETURNING 1)
        SELECT (SELECT count(*) FROM gone)::int AS removed,
               CASE WHEN EXISTS (SELECT 1 FROM added)
                      -- The next message of the removed one's key may run now (the join still sees the removed row).
                      OR EXISTS (SELECT 1 FROM gone g JOIN fedify_messages f ON f.ordering_key = g.ordering_key AND f.id <> g.id)
                    THEN pg_notify(${QUEUE_CHANNEL}, '') END AS notified`;
      return done.removed > 0;
    };
    return keys.length > 0 ? this.sql.begin((tx) => statement(tx)) : statement(this.sql);
  }

  async getDepth(): Promise<MessageQueueDepth> {
    // Messages a live lease holds are being handled: Fedify's depth leaves them out.
    const [row] = await this.sql.unsafe(
      `SELECT count(*)::int AS queued, count(*) FILTER (WHERE run_at <= $1)::int AS ready FROM fedify_messages
       WHERE locked_until IS NULL OR locked_until < ${DB_NOW}`,
      [this.clock.now()],
    );
    return { queued: row.queued, ready: row.ready, delayed: row.queued - row.ready };
  }

  /** Messages waiting or being handled (for tests and the drain at shutdown). */
  async pending(): Promise<number> {
    const [row] = await this.sql`SELECT count(*)::int AS n FROM fedify_messages`;
    return row.n;
  }

  async listen(handler: (message: unknown) => Promise<void> | void, options?: MessageQueueListenOptions): Promise<void> {
    const signal = options?.signal;
    let subscription: SQL.ListenSubscription | null = null;
    while (!signal?.aborted) {
      try {
        subscription ??= await this.start();
        const claimed = await this.claim();
        if (claimed) await this.handle(claimed, handler);
        else await this.sleep(signal);
      } catch (e) {
        // The database went away or refused: Fedify's listen never rejects, so wait and try again.
        log("warn", "federation queue: database error", { error: String(e).split("\n")[0] });
        await this.sleep(signal, this.pollMs);
      }
    }
    await subscription?.unlisten().catch(() => {});
  }

  /** What this worker held in an earlier life is free again; no other worker's lease is touched. */
  private async start(): Promise<SQL.ListenSubscription> {
    await this.sql`UPDATE fedify_messages SET locked_until = NULL, locked_by = NULL WHERE locked_by = ${this.worker}`;
    return this.sql.listen(QUEUE_CHANNEL, () => {
      this.lookAgain = true;
      this.wake?.();
    });
  }

  /**
   * The oldest due message, not held by a live lease, whose ordering key has no earlier message
   * waiting or running; leased to this worker. SKIP LOCKED: a row another worker is claiming at
   * this moment is passed over, not waited for (it is that worker's).
   */
  private async claim(): Promise<{ id: number; message: string } | null> {
    this.lookAgain = false;
    const [row] = await this.sql.unsafe(
      `UPDATE fedify_messages SET locked_by = $1, locked_until = ${DB_NOW} + $2
       WHERE id = (
         SELECT m.id FROM fedify_messages m
         WHERE m.run_at <= $3 AND (m.locked_until IS NULL OR m.locked_until < ${DB_NOW})
           AND (m.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM fedify_messages e WHERE e.ordering_key = m.ordering_key AND e.id < m.id))
         ORDER BY m.run_at, m.id LIMIT 1
         FOR UPDATE SKIP LOCKED)
       RETURNING id, message`,
      [this.worker, this.leaseMs, this.clock.now()],
    );
    return row ? { id: Number(row.id), message: row.message } : null;
  }

  private async handle(row: { id: number; message: string }, handler: (message: unknown) => Promise<void> | void) {
    const message = JSON.parse(row.message);
    if (await this.gate.refused(message)) {
      await this.sql`DELETE FROM fedify_messages WHERE id = ${row.id} AND locked_by = ${this.worker}`;
      return;
    }
    this.handling = typeof message?.activityId === "string" ? { activityId: message.activityId, held: [] } : null;
    this.inbox = message?.type === "outbox" && typeof message.inbox === "string" ? message.inbox : null;
    let renewing: Promise<void> = Promise.resolve();
    const renewal = setInterval(() => {
      renewing = this.renew(row.id);
    }, Math.max(1, Math.floor(this.leaseMs / 3)));
    try {
      await this.outgoing.run(() => handler(message));
    } catch (e) {
      // Fedify handles its own failures; an error here is a bug, not a reason to loop on the message.
      log("error", "federation queue handler failed", { error: String(e).split("\n")[0] });
    } finally {
      clearInterval(renewal);
      // A renewal still on its way would find the message removed and call the lease lost.
      await renewing;
    }
    this.inbox = null;
    if (message?.type === "outbox") this.traffic.attempted();
    const held = this.handling?.held ?? [];
    this.handling = null;
    if (!(await this.write(held, row.id))) {
      log("warn", "federation queue: a lease ran out while its handler ran; another worker took the message over", { id: row.id });
    }
  }

  private async renew(id: number) {
    try {
      const rows = await this.sql.unsafe(`UPDATE fedify_messages SET locked_until = ${DB_NOW} + $1 WHERE id = $2 AND locked_by = $3 RETURNING 1`, [
        this.leaseMs,
        id,
        this.worker,
      ]);
      if (rows.length === 0) log("warn", "federation queue: a lease was lost while its handler ran", { id });
    } catch (e) {
      log("warn", "federation queue: a lease could not be renewed", { id, error: String(e).split("\n")[0] });
    }
  }

  /**
   * Waits for a NOTIFY, the next delayed message's time or lease's end, or the poll, whichever
   * is first; at once if a NOTIFY came while the worker was busy.
   */
  private async sleep(signal: AbortSignal | undefined, fixed?: number) {
    let wait = fixed ?? this.pollMs;
    if (fixed === undefined) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      if (this.lookAgain) return;
      // Only times still to come: a due message held back by its ordering key is woken by the
      // NOTIFY of its predecessor's removal, or by that one's lease running out.
      const [next] = await this.sql.unsafe(
        `SELECT (SELECT min(run_at) FROM fedify_messages WHERE locked_until IS NULL AND run_at > $1) - $1 AS due,
                (SELECT min(locked_until) FROM fedify_messages WHERE locked_until >= ${DB_NOW}) - ${DB_NOW} AS expiry`,
        [this.clock.now()],
      );
      for (const ms of [next?.due, next?.expiry]) if (ms !== null && ms !== undefined) wait = Math.min(wait, Math.max(1, Number(ms) + 1));
      if (this.lookAgain) return;
    }
    // Aborted while it looked: the abort event is already past and would not end the wait.
    if (signal?.aborted) return;
    await idleWait(wait, signal, (wake) => (this.wake = wake));
  }

  /** Resolves when this worker next finds nothing due (see queue.ts). Never, if it does not listen. */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.lookAgain = true;
      this.wake?.();
    });
  }

  /** The inbox of the delivery being handled now, if one is (messages are handled one at a time). */
  handlingInbox(): string | null {
    return this.inbox;
  }
}
