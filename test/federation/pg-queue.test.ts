import { afterEach, describe, expect, test } from "bun:test";
import { SQL, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Temporal } from "@js-temporal/polyfill";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase } from "../../src/db/connection.ts";
import { PostgresPort } from "../../src/db/postgres-port.ts";
import { PortMessageQueue } from "../../src/federation/queue.ts";
import { PgMessageQueue, type PgMessageQueueOptions } from "../../src/federation/pg-queue.ts";
import { OutgoingHttp } from "../../src/net/outgoing.ts";
import { freshPgDatabase, postgresAvailable, type PgDatabase } from "../support/postgres.ts";
import { eventually } from "../support/wait.ts";

/**
 * Fedify's message queue on PostgreSQL (src/federation/pg-queue.ts): the behaviour the
 * one-process queue has (the first tests run on all three: queue.ts through the database port
 * on SQLite and on PostgreSQL, and pg-queue.ts), then what several processes need:
 * workers on separate connections and in a second `bun` process sharing the messages, a worker
 * killed with kill -9 mid-handler, ordering keys across workers, delays, and NOTIFY.
 */

/** Deliveries' requests, allowed to any address (none is sent here). */
const outgoing = new OutgoingHttp({
  allowPrivateAddresses: true,
  refusesHost: () => false,
  resolve: async () => ["127.0.0.1"],
  userAgent: "test",
  limits: { firstByteMs: 1000, totalMs: 1000, maxPerHost: 1, maxTotal: 1 },
});

const WORKER = join(import.meta.dir, "..", "support", "pg-queue-worker.ts");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh database; `client()` is a connection pool of its own, as another process would have. */
async function database() {
  const db: PgDatabase = await freshPgDatabase();
  cleanups.push(() => db.drop());
  const client = () => {
    const sql = new SQL(db.url, { max: 2 });
    cleanups.push(() => sql.close());
    return sql;
  };
  return { url: db.url, client, sql: client() };
}

function queueOn(sql: SQL, clock: ManualClock, options: Partial<PgMessageQueueOptions> = {}) {
  return new PgMessageQueue({ sql, clock, outgoing, worker: "w", ...options });
}

/** Runs the queue until `count` messages were handled, then stops it. */
async function drain(queue: Pick<PgMessageQueue, "listen">, count: number): Promise<unknown[]> {
  const seen: unknown[] = [];
  const controller = new AbortController();
  await queue.listen(
    (message) => {
      seen.push(message);
      if (seen.length === count) controller.abort();
    },
    { signal: controller.signal },
  );
  return seen;
}

/** A worker listening until the test ends, recording what it handled. */
function listening(queue: PgMessageQueue, handle: (message: any) => Promise<void> | void = () => {}) {
  const handled: any[] = [];
  const controller = new AbortController();
  const done = queue.listen(
    async (message) => {
      await handle(message);
      handled.push(message);
    },
    { signal: controller.signal },
  );
  cleanups.push(async () => {
    controller.abort();
    await done;
  });
  return handled;
}

/** pg-queue-worker.ts in a second `bun` process, with the lines it printed. */
function workerProcess(url: string, worker: string, leaseMs: number) {
  const proc: Subprocess<"ignore", "pipe", "inherit"> = Bun.spawn([process.execPath, WORKER, url, worker, String(leaseMs)], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  cleanups.push(async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  });
  const lines: string[] = [];
  void (async () => {
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += value;
      const parts = rest.split("\n");
      rest = parts.pop()!;
      lines.push(...parts);
    }
  })();
  return { proc, lines, numbers: (what: string) => lines.filter((l) => l.startsWith(`${what} `)).map((l) => Number(l.split(" ")[1])) };
}

const rows = async (sql: SQL): Promise<any[]> => (await sql`SELECT message, locked_by FROM fedify_messages ORDER BY id`).map((r: any) => ({ ...JSON.parse(r.message), lockedBy: r.locked_by }));

const sqliteDirs: (() => void)[] = [];
afterEach(() => {
  for (const close of sqliteDirs.splice(0)) close();
});

/** Each queue over a fresh database; `reopen` is a queue over the same one, as after a restart. */
const kinds = [
  {
    name: "PortMessageQueue on SQLite",
    skip: false,
    /**
     * Whether a count begun in the turn of the enqueues surely runs before their write: on SQLite
     * the count runs at once; on PostgreSQL the count and the write go on two connections and
     * race (pg-queue.ts's write first takes its keys' advisory locks, which made the count win
     * most of the time, but not on a busy machine), so there it is not asked.
     */
    countsFirst: true,
    make: async (clock: ManualClock, refusesDomain?: (url: string) => boolean) => {
      const dir = mkdtempSync(join(tmpdir(), "rookery-queue-"));
      const db = openDatabase(dir);
      sqliteDirs.push(() => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      });
      const reopen = () => new PortMessageQueue(db.port, clock, outgoing, refusesDomain);
      return { queue: reopen(), reopen };
    },
  },
  {
    name: "PortMessageQueue on PostgreSQL",
    skip: !postgresAvailable,
    countsFirst: false,
    make: async (clock: ManualClock, refusesDomain?: (url: string) => boolean) => {
      const db = await database();
      const port = new PostgresPort(db.url, { max: 2 });
      cleanups.push(() => port.close());
      const reopen = () => new PortMessageQueue(port, clock, outgoing, refusesDomain);
      return { queue: reopen(), reopen };
    },
  },
  {
    name: "PgMessageQueue",
    skip: !postgresAvailable,
    countsFirst: false,
    make: async (clock: ManualClock, refusesDomain?: (url: string) => boolean) => {
      const db = await database();
      const reopen = () => queueOn(db.client(), clock, refusesDomain ? { refusesDomain } : {});
      return { queue: reopen(), reopen };
    },
  },
];

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name}, as both queues behave`, () => {
    test("messages survive a restart and are handed out in order; delayed ones wait for their time", async () => {
      const clock = new ManualClock(1_000_000);
      const { queue, reopen } = await kind.make(clock);
      await queue.enqueue({ n: 1 }, { orderingKey: "k" });
      await queue.enqueue({ n: 2 }, { orderingKey: "k" });
      await queue.enqueue({ later: true }, { delay: Temporal.Duration.from({ minutes: 5 }) });
      expect(await queue.getDepth()).toEqual({ queued: 3, ready: 2, delayed: 1 });

      const reopened = reopen();
      expect(await drain(reopened, 2)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(await reopened.pending()).toBe(1);
      clock.advance(5 * 60 * 1000);
      expect(await drain(reopened, 1)).toEqual([{ later: true }]);
      expect(await reopened.pending()).toBe(0);
    });

    test("messages enqueued in one turn are written together, in the order they were enqueued, before their promises settle", async () => {
      const clock = new ManualClock(1_000_000);
      const { queue } = await kind.make(clock);
      const calls = Array.from({ length: 100 }, (_, n) => queue.enqueue({ n }, { orderingKey: `k${n % 7}` }));
      if (kind.countsFirst) expect(await queue.pending()).toBe(0);
      await Promise.all(calls);
      expect(await queue.pending()).toBe(100);
      await queue.enqueueMany(Array.from({ length: 50 }, (_, n) => ({ n: 100 + n })));
      expect(await drain(queue, 150)).toEqual(Array.from({ length: 150 }, (_, n) => ({ n })));
    });

    test("a handler that throws does not keep its message forever (Fedify retries by enqueueing anew)", async () => {
      const clock = new ManualClock(1_000_000);
      const { queue } = await kind.make(clock);
      await queue.enqueue({ n: 1 });
      await queue.enqueue({ n: 2 });
      const seen: unknown[] = [];
      const controller = new AbortController();
      await queue.listen(
        (m) => {
          seen.push(m);
          if (seen.length === 2) controller.abort();
          if ((m as { n: number }).n === 1) throw new Error("bug");
        },
        { signal: controller.signal },
      );
      expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
      expect(await queue.pending()).toBe(0);
    });

    test("deliveries to a refused domain and queued activities from it are removed unhandled; the rest are handled in order", async () => {
      const clock = new ManualClock(1_000_000);
      const refusesDomain = (url: string) => new URL(url).hostname.endsWith("blocked.example");
      const { queue } = await kind.make(clock, refusesDomain);
      await queue.enqueue({ type: "outbox", inbox: "https://social.blocked.example/inbox", n: 1 });
      await queue.enqueue({ type: "inbox", activity: { type: "Create", actor: "https://blocked.example/users/mal" }, n: 2 });
      await queue.enqueue({ type: "inbox", activity: { type: "Create", actor: { id: "https://blocked.example/users/mal" } }, n: 3 });
      await queue.enqueue({ type: "outbox", inbox: "https://friendly.example/inbox", n: 4 });
      await queue.enqueue({ type: "inbox", activity: { type: "Create" }, n: 5 });
      expect(await drain(queue, 2)).toEqual([
        { type: "outbox", inbox: "https://friendly.example/inbox", n: 4 },
        { type: "inbox", activity: { type: "Create" }, n: 5 },
      ]);
      expect(await queue.pending()).toBe(0);
    });
  });
}

describe.skipIf(!postgresAvailable)("PgMessageQueue, alone", () => {
  test("a turn's enqueues, and an enqueueMany, are each one statement", async () => {
    const clock = new ManualClock(1_000_000);
    const { sql } = await database();
    const queue = queueOn(sql, clock);
    await Promise.all(Array.from({ length: 100 }, (_, n) => queue.enqueue({ n }, { orderingKey: `k${n % 7}` })));
    // One transaction wrote them all.
    expect(await sql`SELECT count(DISTINCT xmin::text)::int AS n FROM fedify_messages`).toEqual([{ n: 1 }]);
    await queue.enqueueMany(Array.from({ length: 50 }, (_, n) => ({ n: 100 + n })));
    expect(await sql`SELECT count(DISTINCT xmin::text)::int AS n FROM fedify_messages`).toEqual([{ n: 2 }]);
    expect(await queue.pending()).toBe(150);
  });

  test("a worker starting again frees what it held in an earlier life, and no other worker's live lease", async () => {
    const clock = new ManualClock(1_000_000);
    const { sql } = await database();
    const queue = queueOn(sql, clock, { worker: "w1" });
    await queue.enqueue({ n: 1 });
    await queue.enqueue({ n: 2 });
    // What a worker killed mid-delivery leaves behind: its rows, leased for a long time yet.
    await sql`UPDATE fedify_messages SET locked_by = CASE WHEN message = '{"n":1}' THEN 'w1' ELSE 'w2' END, locked_until = 9999999999999`;
    const again = queueOn(sql, clock, { worker: "w1" });
    expect(await drain(again, 1)).toEqual([{ n: 1 }]);
    expect(await rows(sql)).toEqual([{ n: 2, lockedBy: "w2" }]);
  });

  test("what a handler enqueues for its own activity replaces its message in one transaction; a worker whose lease was taken over writes none of it", async () => {
    const clock = new ManualClock(1_000_000);
    const { sql } = await database();
    const queue = queueOn(sql, clock);
    await queue.enqueue({ type: "outbox", activityId: "https://a.example/1", inbox: "https://b.example/inbox", attempt: 0 }, { orderingKey: "o" });
    const controller = new AbortController();
    let seenWhileHandling: any[] = [];
    await queue.listen(
      async (m) => {
        controller.abort();
        await queue.enqueue({ ...(m as object), attempt: 1 }, { delay: Temporal.Duration.from({ seconds: 30 }), orderingKey: "o" });
        await queue.enqueue({ type: "outbox", activityId: "https://a.example/2", inbox: "https://b.example/inbox", attempt: 0 });
        seenWhileHandling = await rows(sql);
      },
      { signal: controller.signal },
    );
    expect(seenWhileHandling.map((m) => [m.activityId, m.attempt, m.lockedBy])).toEqual([
      ["https://a.example/1", 0, "w"],
      ["https://a.example/2", 0, null],
    ]);
    expect((await rows(sql)).map((m) => [m.activityId, m.attempt])).toEqual([
      ["https://a.example/2", 0],
      ["https://a.example/1", 1],
    ]);

    // Taken over: another worker reclaimed the message while this one's handler ran.
    await sql`DELETE FROM fedify_messages`;
    await queue.enqueue({ type: "outbox", activityId: "https://a.example/3", inbox: "https://b.example/inbox", attempt: 0 });
    const second = new AbortController();
    await queue.listen(
      async (m) => {
        second.abort();
        await sql`UPDATE fedify_messages SET locked_by = 'other'`;
        await queue.enqueue({ ...(m as object), attempt: 1 });
      },
      { signal: second.signal },
    );
    expect((await rows(sql)).map((m) => [m.activityId, m.attempt, m.lockedBy])).toEqual([["https://a.example/3", 0, "other"]]);
  });

});

describe.skipIf(!postgresAvailable)("PgMessageQueue, shared by several processes", () => {
  test("two workers on separate connections and a third in another process share 200 messages: none handled twice, none lost", async () => {
    const clock = new ManualClock(1_000_000);
    const db = await database();
    const a = db.client();
    const b = db.client();
    const other = workerProcess(db.url, "c", 60_000);
    const handledA = listening(queueOn(a, clock, { worker: "a" }), async () => void (await a`SELECT 1`));
    const handledB = listening(queueOn(b, clock, { worker: "b" }), async () => void (await b`SELECT 1`));
    await eventually(() => other.lines.includes("ready"), "the other process's worker listening", 20_000);

    await queueOn(db.client(), clock, { worker: "producer" }).enqueueMany(Array.from({ length: 200 }, (_, n) => ({ n })));
    const total = () => handledA.length + handledB.length + other.numbers("done").length;
    await eventually(() => total() >= 200, () => `200 handled (${total()})`, 30_000);
    await eventually(async () => (await db.sql`SELECT count(*)::int AS n FROM fedify_messages`)[0].n === 0, "every message removed");

    const all = [...handledA.map((m) => m.n), ...handledB.map((m) => m.n), ...other.numbers("done")];
    expect(all.length).toBe(200);
    expect(new Set(all).size).toBe(200);
    expect(other.numbers("start").length).toBe(other.numbers("done").length);
    for (const share of [handledA.length, handledB.length, other.numbers("done").length]) expect(share).toBeGreaterThan(0);
  });

  test("a worker killed with kill -9 mid-handler: its lease is renewed while it lives, then runs out, and another worker handles the message once", async () => {
    const clock = new ManualClock(1_000_000);
    const db = await database();
    const dying = workerProcess(db.url, "dying", 1500);
    await eventually(() => dying.lines.includes("ready"), "the other process's worker listening", 20_000);
    await queueOn(db.client(), clock, { worker: "producer" }).enqueue({ n: 7, hang: true });
    await eventually(() => dying.numbers("start").includes(7), "the other process handling the message");

    const survivor = db.client();
    const handled = listening(queueOn(survivor, clock, { worker: "survivor" }));
    // Held past its first lease: the dying worker renews it, and the survivor leaves it alone.
    const [{ until }] = await db.sql`SELECT locked_until::text AS until FROM fedify_messages`;
    await eventually(async () => (await db.sql`SELECT locked_until > ${Number(until) + 1500} AS renewed FROM fedify_messages`)[0].renewed, "the lease renewed beyond its first term");
    expect(handled).toEqual([]);
    expect(await rows(db.sql)).toEqual([{ n: 7, hang: true, lockedBy: "dying" }]);

    dying.proc.kill("SIGKILL");
    await dying.proc.exited;
    await eventually(() => handled.length > 0, "the survivor handling the message once the lease ran out");
    await eventually(async () => (await db.sql`SELECT count(*)::int AS n FROM fedify_messages`)[0].n === 0, "the message removed");
    expect(handled).toEqual([{ n: 7, hang: true }]);
    expect(dying.numbers("done")).toEqual([]);
  });

  test("messages of one ordering key are handled in order and one at a time, whichever of two workers takes them, from two producers at once", async () => {
    const clock = new ManualClock(1_000_000);
    const db = await database();
    const inFlight = new Set<string>();
    const order = new Map<string, number[]>();
    const overlaps: string[] = [];
    const handler = (sql: SQL) => async (m: { key: string; n: number; from: string }) => {
      if (inFlight.has(m.key)) overlaps.push(`${m.key}/${m.n}`);
      inFlight.add(m.key);
      await sql`SELECT 1`;
      const seen = `${m.key} ${m.from}`;
      order.set(seen, [...(order.get(seen) ?? []), m.n]);
      inFlight.delete(m.key);
    };
    const a = db.client();
    const b = db.client();
    const handledA = listening(queueOn(a, clock, { worker: "a" }), handler(a));
    const handledB = listening(queueOn(b, clock, { worker: "b" }), handler(b));
    // Two producers on their own connections enqueue into the same keys at the same time (each
    // holding the keys' advisory locks in turn: a deadlock between them would fail the test).
    const produce = async (from: string) => {
      const producer = queueOn(db.client(), clock, { worker: from });
      for (let n = 0; n < 10; n++) await Promise.all(["k0", "k1", "k2", "k3"].map((key) => producer.enqueue({ key, n, from }, { orderingKey: key })));
    };
    await Promise.all([produce("p1"), produce("p2")]);
    await eventually(() => handledA.length + handledB.length === 80, () => `80 handled (${handledA.length + handledB.length})`, 20_000);
    expect(overlaps).toEqual([]);
    for (const key of ["k0", "k1", "k2", "k3"]) for (const from of ["p1", "p2"]) expect(order.get(`${key} ${from}`)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(handledA.length).toBeGreaterThan(0);
    expect(handledB.length).toBeGreaterThan(0);
  });

  test("a delayed message is not handled before its time, and is once the clock reaches it", async () => {
    const clock = new ManualClock(1_000_000);
    const db = await database();
    const queue = queueOn(db.client(), clock, { worker: "a" });
    const handled = listening(queue);
    const producer = queueOn(db.client(), clock, { worker: "producer" });
    await producer.enqueue({ n: "later" }, { delay: Temporal.Duration.from({ minutes: 5 }) });
    await producer.enqueue({ n: "now" });
    await eventually(() => handled.length === 1, "the undelayed message handled");
    await queue.idle();
    expect(handled).toEqual([{ n: "now" }]);
    expect(await queue.getDepth()).toEqual({ queued: 1, ready: 0, delayed: 1 });
    clock.advance(5 * 60 * 1000 - 1);
    await queue.idle();
    expect(handled).toEqual([{ n: "now" }]);
    clock.advance(1);
    await queue.idle();
    expect(handled).toEqual([{ n: "now" }, { n: "later" }]);
  });

  test("a NOTIFY wakes a waiting worker at once, long before its poll", async () => {
    const clock = new ManualClock(1_000_000);
    const db = await database();
    // A poll of ten minutes: only the NOTIFY can wake it within the deadline.
    const queue = queueOn(db.client(), clock, { worker: "a", pollMs: 600_000 });
    const handled = listening(queue);
    await queue.idle();
    const started = Date.now();
    await queueOn(db.client(), clock, { worker: "producer" }).enqueue({ n: 1 });
    await eventually(() => handled.length === 1, "the message handled", 5000);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(handled).toEqual([{ n: 1 }]);
  });
});
