import type { MessageQueue, MessageQueueDepth, MessageQueueEnqueueOptions, MessageQueueListenOptions } from "@fedify/fedify";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { log } from "../log.ts";
import type { OutgoingHttp } from "../net/outgoing.ts";
import { idleWait, QueueGate } from "./queue-gate.ts";

interface Row {
  id: number;
  message: string;
}

/** How often an idle worker looks for delayed messages that came due. */
const IDLE_POLL_MS = 1000;

/**
 * Rows go in by statements of many rows each (in chunks of these sizes, so that only three
 * statements are ever compiled): one awaited statement per row cost a turn's batch a third
 * more CPU than bun:sqlite's synchronous loop did.
 */
const CHUNKS = [64, 8, 1];
const INSERTS = new Map(CHUNKS.map((n) => [n, `INSERT INTO fedify_messages (message, run_at, ordering_key, created_at) VALUES ${Array(n).fill("(?, ?, ?, ?)").join(", ")}`]));
// The oldest due message whose ordering key has no earlier message still waiting or running.
const CLAIM = `
  UPDATE fedify_messages SET locked_until = ?
  WHERE id = (
    SELECT m.id FROM fedify_messages m
    WHERE m.run_at <= ? AND m.locked_until IS NULL
      AND (m.ordering_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM fedify_messages e WHERE e.ordering_key = m.ordering_key AND e.id < m.id))
    ORDER BY m.run_at, m.id LIMIT 1)
  RETURNING id, message`;
const REMOVE = "DELETE FROM fedify_messages WHERE id = ?";

/**
 * Fedify's message queue in Rookery's own database (table fedify_messages, migration 0010),
 * through the database port: a delivery queued before a crash is still there after restart. A message is deleted once
 * its handler has returned; Fedify itself re-enqueues failed deliveries with backoff, so the
 * queue does no retrying of its own (nativeRetrial false). One process owns the database, so
 * locks left by a killed process are cleared when listening starts (at-least-once delivery:
 * a message whose handler was cut short by kill -9 runs again). Several processes sharing one
 * PostgreSQL database use PgMessageQueue (pg-queue.ts: leases, SKIP LOCKED, NOTIFY) instead.
 */
export class PortMessageQueue implements MessageQueue {
  readonly nativeRetrial = false;
  private wake: (() => void) | null = null;
  /** Rows enqueued in this turn of the event loop, written together at its end. */
  private inserts: { row: [string, number, string | null, number]; resolve: () => void; reject: (e: unknown) => void }[] = [];
  /**
   * The message being handled, and what its handler enqueued for the same activity (a failed
   * delivery's retry, a fan-out's deliveries): written in the transaction that removes the
   * message, so that a kill -9 leaves either the message or what replaced it, never both (both
   * would send the activity twice to the same inbox after the restart).
   */
  private handling: { activityId: string; held: [string, number, string | null, number][] } | null = null;
  /** The inbox of the delivery being handled: Fedify's outbox errors name it only for an answer, not for a host that never answered. */
  private inbox: string | null = null;
  /** Callers of idle(), told when the worker next finds nothing due. */
  private idleWaiters: (() => void)[] = [];
  private readonly gate: QueueGate;

  constructor(
    private readonly db: DatabasePort,
    private readonly clock: Clock,
    /** Where deliveries go out: what a handler sends is sent through it (its checks, deadlines and caps). */
    private readonly outgoing: OutgoingHttp,
    /** Domains this server does not federate with (FederationDomains.refuses). */
    refusesDomain: (url: string) => boolean = () => false,
    /** Told of each delivery handled, for the health page's counts. */
    private readonly traffic: { attempted(): void } = { attempted() {} },
    /**
     * Told of a delivery refused for its inbox's address, which Fedify never sees fail: it is
     * recorded as a failure of that host, so `federation status`, the relays list and the
     * health page show it rather than "ok".
     */
    onAddressRefused: (inbox: string, reason: string) => void = () => {},
  ) {
    this.gate = new QueueGate(outgoing, refusesDomain, onAddressRefused);
  }

  /**
   * Queues the message. Messages enqueued in the same turn of the event loop are written in one
   * transaction, and each promise settles once it has committed: Fedify enqueues a delivery per
   * inbox, one call each, all at once (1,000 followers with personal inboxes: 1,000 calls), and a
   * commit apiece held the event loop ~80 µs per message, 80 ms at a time for such a post.
   */
  async enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
    const now = this.clock.now();
    const delay = options?.delay ? Math.max(0, options.delay.total("millisecond")) : 0;
    const row: [string, number, string | null, number] = [JSON.stringify(message), now + delay, options?.orderingKey ?? null, now];
    const activityId = (message as { activityId?: unknown } | null)?.activityId;
    if (this.handling && activityId === this.handling.activityId) {
      // Durable once the handled message is removed; until then that message stands for it.
      this.handling.held.push(row);
      return;
    }
    return new Promise<void>((resolve, reject) => {
      this.inserts.push({ row, resolve, reject });
      if (this.inserts.length === 1) queueMicrotask(() => void this.writeInserts());
    });
  }

  private async writeInserts() {
    const batch = this.inserts;
    this.inserts = [];
    try {
      const rows = batch.map((b) => b.row);
      // A statement is atomic by itself: a transaction would only add its cost.
      if (rows.length < CHUNKS[1]!) await this.insertRows(rows);
      else await this.db.transaction(() => this.insertRows(rows));
    } catch (e) {
      for (const { reject } of batch) reject(e);
      return;
    }
    for (const { resolve } of batch) resolve();
    this.wake?.();
  }

  /** Inserts the rows in their order, so that ids follow it (ordering keys are run by id). */
  private async insertRows(rows: [string, number, string | null, number][]) {
    let at = 0;
    for (const size of CHUNKS) {
      for (; rows.length - at >= size; at += size) await this.db.run(INSERTS.get(size)!, rows.slice(at, at + size).flat());
    }
  }

  async enqueueMany(messages: readonly unknown[], options?: MessageQueueEnqueueOptions): Promise<void> {
    await Promise.all(messages.map((message) => this.enqueue(message, options)));
  }

  async getDepth(): Promise<MessageQueueDepth> {
    const row = await this.db.get<{ queued: number; ready: number }>(
      "SELECT count(*) AS queued, count(CASE WHEN run_at <= ? THEN 1 END) AS ready FROM fedify_messages",
      [this.clock.now()],
    );
    const queued = row?.queued ?? 0;
    const ready = row?.ready ?? 0;
    return { queued, ready, delayed: queued - ready };
  }

  async listen(handler: (message: unknown) => Promise<void> | void, options?: MessageQueueListenOptions): Promise<void> {
    const signal = options?.signal;
    await this.db.run("UPDATE fedify_messages SET locked_until = NULL WHERE locked_until IS NOT NULL");
    while (!signal?.aborted) {
      const now = this.clock.now();
      const row = await this.db.get<Row>(CLAIM, [now, now]);
      if (!row) {
        for (const resolve of this.idleWaiters.splice(0)) resolve();
        await idleWait(IDLE_POLL_MS, signal, (wake) => (this.wake = wake));
        continue;
      }
      const message = JSON.parse(row.message);
      if (await this.gate.refused(message)) {
        await this.db.run(REMOVE, [row.id]);
        continue;
      }
      this.handling = typeof message?.activityId === "string" ? { activityId: message.activityId, held: [] } : null;
      this.inbox = message?.type === "outbox" && typeof message.inbox === "string" ? message.inbox : null;
      try {
        await this.outgoing.run(() => handler(message));
      } catch (e) {
        // Fedify handles its own failures; an error here is a bug, not a reason to loop on the message.
        log("error", "federation queue handler failed", { error: String(e).split("\n")[0] });
      }
      this.inbox = null;
      if (message?.type === "outbox") this.traffic.attempted();
      const held = this.handling?.held ?? [];
      this.handling = null;
      // Most handlers hold nothing (a delivery that went through): the removal alone is atomic.
      if (held.length === 0) await this.db.run(REMOVE, [row.id]);
      else
        await this.db.transaction(async () => {
          await this.db.run(REMOVE, [row.id]);
          await this.insertRows(held);
        });
    }
  }

  /**
   * Resolves when the listening worker has handled every message that is due, those queued
   * by the handlers included (delayed retries are not waited for). Never, if nobody listens.
   */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.wake?.();
    });
  }

  /** The inbox of the delivery being handled now, if one is (messages are handled one at a time). */
  handlingInbox(): string | null {
    return this.inbox;
  }

  /** Messages waiting (for tests and the drain at shutdown). */
  async pending(): Promise<number> {
    return (await this.db.get<{ n: number }>("SELECT count(*) AS n FROM fedify_messages"))?.n ?? 0;
  }
}
