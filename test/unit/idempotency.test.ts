import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase, type DbHandle } from "../../src/db/connection.ts";
import { IDEMPOTENCY_TTL_MS, IdempotencyStore, type Made } from "../../src/services/statuses/idempotency.ts";

const START = Date.UTC(2026, 10, 23, 12, 0, 0);
let dir: string;
let handle: DbHandle;
let clock: ManualClock;
let store: IdempotencyStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rookery-idem-"));
  handle = openDatabase(dir);
  handle.sqlite.run("INSERT INTO accounts (id, username, created_at) VALUES (1, 'alice', 0), (2, 'bob', 0)");
  clock = new ManualClock(START);
  store = new IdempotencyStore(handle.port, clock);
});
afterEach(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = () => (handle.sqlite.query("SELECT count(*) AS n FROM idempotency_keys").get() as { n: number }).n;

/** A promise the test settles by hand, to hold an attempt in flight. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("IdempotencyStore", () => {
  test("remembers what a key made for an hour, per account", async () => {
    await store.remember(1, "K", { kind: "status", id: 10 });
    await store.remember(2, "K", { kind: "scheduled", id: 20 });
    expect(await store.recall(1, "K")).toEqual({ kind: "status", id: 10 });
    expect(await store.recall(2, "K")).toEqual({ kind: "scheduled", id: 20 });
    expect(await store.recall(1, "other")).toBeNull();
    clock.advance(IDEMPOTENCY_TTL_MS - 1);
    expect(await store.recall(1, "K")).toEqual({ kind: "status", id: 10 });
    clock.advance(1);
    expect(await store.recall(1, "K")).toBeNull();
  });

  test("an expired key is replaced by the next post with it", async () => {
    await store.remember(1, "K", { kind: "status", id: 10 });
    clock.advance(IDEMPOTENCY_TTL_MS);
    await store.remember(1, "K", { kind: "status", id: 11 });
    expect(await store.recall(1, "K")).toEqual({ kind: "status", id: 11 });
    expect(rows()).toBe(1);
  });

  test("sweep drops only the keys whose hour is over", async () => {
    await store.remember(1, "old", { kind: "status", id: 10 });
    clock.advance(30 * 60 * 1000);
    await store.remember(1, "new", { kind: "status", id: 11 });
    clock.advance(30 * 60 * 1000);
    expect(await store.sweep()).toBe(1);
    expect(rows()).toBe(1);
    expect(await store.recall(1, "new")).toEqual({ kind: "status", id: 11 });
  });

  test("keys survive a restart: a new store over the reopened database finds them", async () => {
    await store.remember(1, "K", { kind: "status", id: 10 });
    handle.close();
    handle = openDatabase(dir);
    const reopened = new IdempotencyStore(handle.port, clock);
    expect(await reopened.recall(1, "K")).toEqual({ kind: "status", id: 10 });
  });

  test("a key recorded in a transaction that rolls back is not kept", async () => {
    await expect(
      handle.port.transaction(async () => {
        await store.remember(1, "K", { kind: "status", id: 10 });
        throw new Error("the post failed");
      }),
    ).rejects.toThrow("the post failed");
    expect(await store.recall(1, "K")).toBeNull();
    expect(rows()).toBe(0);
  });

  test("a duplicate in flight shares the first attempt instead of running again", async () => {
    const gate = deferred<Made>();
    let runs = 0;
    const work = () => {
      runs++;
      return gate.promise;
    };
    const first = store.once(1, "K", work);
    const second = store.once(1, "K", work);
    // Another account's key of the same name is its own attempt.
    const other = store.once(2, "K", async () => ({ kind: "status", id: 30 }));
    expect(runs).toBe(1);
    gate.resolve({ kind: "status", id: 10 });
    expect(await first).toEqual({ kind: "status", id: 10 });
    expect(await second).toEqual({ kind: "status", id: 10 });
    expect(await other).toEqual({ kind: "status", id: 30 });
    expect(store.inFlightCount).toBe(0);
  });

  test("a failed attempt is not pinned to the key: the next one runs", async () => {
    const gate = deferred<Made>();
    const first = store.once(1, "K", () => gate.promise);
    const waiting = store.once(1, "K", () => Promise.resolve({ kind: "status", id: 99 }));
    gate.reject(new Error("422"));
    await expect(first).rejects.toThrow("422");
    await expect(waiting).rejects.toThrow("422");
    expect(store.inFlightCount).toBe(0);
    expect(await store.once(1, "K", async () => ({ kind: "status", id: 11 }))).toEqual({ kind: "status", id: 11 });
  });

  test("keys are cut at 256 characters; an empty header is no key", () => {
    expect(IdempotencyStore.normalize("k".repeat(300))).toBe("k".repeat(256));
    expect(IdempotencyStore.normalize("short")).toBe("short");
    expect(IdempotencyStore.normalize("")).toBeNull();
    expect(IdempotencyStore.normalize(null)).toBeNull();
  });
});
