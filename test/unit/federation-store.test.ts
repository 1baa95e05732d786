import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Temporal } from "@js-temporal/polyfill";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase, type DbHandle } from "../../src/db/connection.ts";
import { PortKvStore } from "../../src/federation/kv.ts";
import { PortMessageQueue } from "../../src/federation/queue.ts";
import { OutgoingHttp } from "../../src/net/outgoing.ts";

/** Deliveries' requests, allowed to any address (none is sent here). */
const outgoing = new OutgoingHttp({
  allowPrivateAddresses: true,
  refusesHost: () => false,
  resolve: async () => ["127.0.0.1"],
  userAgent: "test",
  limits: { firstByteMs: 1000, totalMs: 1000, maxPerHost: 1, maxTotal: 1 },
});

const dirs: string[] = [];
const open = (dir?: string): { db: DbHandle; dir: string } => {
  const d = dir ?? mkdtempSync(join(tmpdir(), "rookery-fed-"));
  if (!dir) dirs.push(d);
  return { db: openDatabase(d), dir: d };
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs the queue until `count` messages were handled, then stops it. */
async function drain(queue: PortMessageQueue, count: number): Promise<unknown[]> {
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

describe("PortKvStore", () => {
  test("get, set, delete, prefix listing, expiry and compare-and-swap", async () => {
    const clock = new ManualClock(1_000_000);
    const { db } = open();
    const kv = new PortKvStore(db.port, clock);
    await kv.set(["a", "b"], { x: 1 });
    await kv.set(["a", "c"], 2, { ttl: Temporal.Duration.from({ seconds: 10 }) });
    await kv.set(["ab"], 3);
    expect(await kv.get(["a", "b"])).toEqual({ x: 1 });
    expect(await kv.get(["missing"])).toBeUndefined();
    const listed = [];
    for await (const entry of kv.list(["a"])) listed.push(entry);
    expect(listed).toEqual([
      { key: ["a", "b"], value: { x: 1 } },
      { key: ["a", "c"], value: 2 },
    ]);
    clock.advance(10_000);
    expect(await kv.get(["a", "c"])).toBeUndefined();
    expect(await kv.cas(["a", "b"], { x: 2 }, "no")).toBe(false);
    expect(await kv.cas(["a", "b"], { x: 1 }, "yes")).toBe(true);
    expect(await kv.get(["a", "b"])).toBe("yes");
    expect(await kv.cas(["new"], undefined, 1)).toBe(true);
    await kv.delete(["a", "b"]);
    expect(await kv.get(["a", "b"])).toBeUndefined();
    db.close();
  });

  test("a set of the value already there writes nothing; a new value or a new expiry is written", async () => {
    const clock = new ManualClock(1_000_000);
    const { db } = open();
    const kv = new PortKvStore(db.port, clock);
    const changes = () => (db.sqlite.query("SELECT total_changes() AS n").get() as { n: number }).n;
    await kv.set(["spec", "https://remote.example"], "rfc9421");
    const before = changes();
    await kv.set(["spec", "https://remote.example"], "rfc9421");
    expect(changes()).toBe(before);
    await kv.set(["spec", "https://remote.example"], "draft-cavage-http-signatures-12");
    expect(changes()).toBe(before + 1);
    expect(await kv.get(["spec", "https://remote.example"])).toBe("draft-cavage-http-signatures-12");
    await kv.set(["spec", "https://remote.example"], "draft-cavage-http-signatures-12", { ttl: Temporal.Duration.from({ seconds: 10 }) });
    expect(changes()).toBe(before + 2);
    clock.advance(10_000);
    expect(await kv.get(["spec", "https://remote.example"])).toBeUndefined();
    db.close();
  });
});

describe("PortMessageQueue", () => {
  test("messages survive a restart and are handed out in order; delayed ones wait for their time", async () => {
    const clock = new ManualClock(1_000_000);
    const first = open();
    const queue = new PortMessageQueue(first.db.port, clock, outgoing);
    await queue.enqueue({ n: 1 }, { orderingKey: "k" });
    await queue.enqueue({ n: 2 }, { orderingKey: "k" });
    await queue.enqueue({ later: true }, { delay: Temporal.Duration.from({ minutes: 5 }) });
    expect(await queue.getDepth()).toEqual({ queued: 3, ready: 2, delayed: 1 });
    first.db.close();

    const second = open(first.dir);
    const reopened = new PortMessageQueue(second.db.port, clock, outgoing);
    expect(await drain(reopened, 2)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await reopened.pending()).toBe(1);
    clock.advance(5 * 60 * 1000);
    expect(await drain(reopened, 1)).toEqual([{ later: true }]);
    expect(await reopened.pending()).toBe(0);
    second.db.close();
  });

  test("messages enqueued in one turn are written together, in the order they were enqueued, before their promises settle", async () => {
    const clock = new ManualClock(1_000_000);
    const { db } = open();
    const queue = new PortMessageQueue(db.port, clock, outgoing);
    // As Fedify queues a post's deliveries: every call at once, then waits for all of them.
    const calls = Array.from({ length: 100 }, (_, n) => queue.enqueue({ n }, { orderingKey: `k${n % 7}` }));
    expect(await queue.pending()).toBe(0);
    await Promise.all(calls);
    expect(await queue.pending()).toBe(100);
    expect(await drain(queue, 100)).toEqual(Array.from({ length: 100 }, (_, n) => ({ n })));
    db.close();
  });

  test("a message whose handler was cut short by a crash is handed out again after restart", async () => {
    const clock = new ManualClock(1_000_000);
    const first = open();
    const queue = new PortMessageQueue(first.db.port, clock, outgoing);
    await queue.enqueue({ n: 1 });
    // What a worker killed mid-delivery leaves behind: the row, locked.
    first.db.sqlite.run("UPDATE fedify_messages SET locked_until = 9999999999999");
    first.db.close();
    const second = open(first.dir);
    expect(await drain(new PortMessageQueue(second.db.port, clock, outgoing), 1)).toEqual([{ n: 1 }]);
    second.db.close();
  });

  test("a handler that throws does not keep its message forever (Fedify retries by enqueueing anew)", async () => {
    const clock = new ManualClock(1_000_000);
    const { db } = open();
    const queue = new PortMessageQueue(db.port, clock, outgoing);
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
    db.close();
  });

  test("what a handler enqueues for its own activity (a retry, a fan-out's deliveries) replaces its message in one transaction", async () => {
    const clock = new ManualClock(1_000_000);
    const { db } = open();
    // Private addresses allowed: the inbox check would look b.example up in the DNS.
    const queue = new PortMessageQueue(db.port, clock, outgoing);
    const rows = () => db.sqlite.query<{ message: string }, []>("SELECT message FROM fedify_messages ORDER BY id").all().map((r) => JSON.parse(r.message));
    await queue.enqueue({ type: "outbox", activityId: "https://a.example/1", inbox: "https://b.example/inbox", attempt: 0 });
    const controller = new AbortController();
    let seenWhileHandling: unknown[] = [];
    await queue.listen(
      async (m) => {
        // One message handled, then the queue stops.
        controller.abort();
        // The retry, as Fedify enqueues it when the delivery failed, and another activity's message.
        await queue.enqueue({ ...(m as object), attempt: 1 }, { delay: Temporal.Duration.from({ seconds: 30 }) });
        await queue.enqueue({ type: "outbox", activityId: "https://a.example/2", inbox: "https://b.example/inbox", attempt: 0 });
        // A kill -9 here leaves the message itself, which runs again: never it and its retry both.
        seenWhileHandling = rows();
      },
      { signal: controller.signal },
    );
    expect(seenWhileHandling.map((m: any) => [m.activityId, m.attempt])).toEqual([
      ["https://a.example/1", 0],
      ["https://a.example/2", 0],
    ]);
    expect(rows().map((m: any) => [m.activityId, m.attempt])).toEqual([
      ["https://a.example/2", 0],
      ["https://a.example/1", 1],
    ]);
    db.close();
  });
});

describe("PortMessageQueue drops what concerns a refused domain", () => {
  test("deliveries to it and queued activities from it are removed unhandled; the rest are handled in order", async () => {
    const clock = new ManualClock(1_000_000);
    const { db } = open();
    const refused = (url: string) => new URL(url).hostname.endsWith("blocked.example");
    const queue = new PortMessageQueue(db.port, clock, outgoing, refused);
    await queue.enqueue({ type: "outbox", inbox: "https://social.blocked.example/inbox", n: 1 });
    await queue.enqueue({ type: "inbox", activity: { type: "Create", actor: "https://blocked.example/users/mal" }, n: 2 });
    await queue.enqueue({ type: "inbox", activity: { type: "Create", actor: { id: "https://blocked.example/users/mal" } }, n: 3 });
    await queue.enqueue({ type: "inbox", activity: { type: "Create", actor: ["https://blocked.example/users/mal"] }, n: 4 });
    await queue.enqueue({ type: "outbox", inbox: "https://friendly.example/inbox", n: 5 });
    await queue.enqueue({ type: "inbox", activity: { type: "Create", actor: "https://friendly.example/users/amy" }, n: 6 });
    // What names no actor is Fedify's to refuse, not the queue's.
    await queue.enqueue({ type: "inbox", activity: { type: "Create" }, n: 7 });
    expect(await drain(queue, 3)).toEqual([
      { type: "outbox", inbox: "https://friendly.example/inbox", n: 5 },
      { type: "inbox", activity: { type: "Create", actor: "https://friendly.example/users/amy" }, n: 6 },
      { type: "inbox", activity: { type: "Create" }, n: 7 },
    ]);
    expect(await queue.pending()).toBe(0);
    db.close();
  });
});
