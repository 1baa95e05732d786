import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase } from "../../src/db/connection.ts";
import type { DatabasePort } from "../../src/db/port.ts";
import { PostgresPort } from "../../src/db/postgres-port.ts";
import { IDEMPOTENCY_TTL_MS, type Made } from "../../src/services/statuses/idempotency.ts";
import { PortIdempotencyGuard } from "../../src/services/statuses/port-idempotency.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";
import { eventually } from "../support/wait.ts";

/**
 * The Idempotency-Key guard across processes (src/services/statuses/port-idempotency.ts): two
 * processes (two connection pools) racing with one key on one PostgreSQL make one thing, and the
 * second answers with what the first made. The posting service is not on the port yet: `work`
 * stands for it, inserting a row in the guard's transaction as posting will.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ACCOUNT = 7;

/** Two ports on one fresh PostgreSQL, as two processes have, with an account and a table for what `work` makes. */
async function twoProcesses(): Promise<[DatabasePort, DatabasePort]> {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  const ports = [new PostgresPort(db.url, { max: 2 }), new PostgresPort(db.url, { max: 2 })] as [DatabasePort, DatabasePort];
  for (const port of ports) cleanups.push(() => port.close());
  await ports[0].run("INSERT INTO accounts (id, username, created_at) VALUES (?, 'alice', 0)", [ACCOUNT]);
  await ports[0].run("CREATE TABLE made (id bigint PRIMARY KEY, by text NOT NULL)");
  return ports;
}

/**
 * What posting does in the guard's transaction: makes a row; `until` holds the transaction open
 * until the test lets it go (a gate, not a time: PostgreSQL's adapter may await anything inside
 * a transaction), `fail` rolls it back.
 */
function work(port: DatabasePort, id: number, by: string, options: { until?: Promise<void>; fail?: boolean } = {}) {
  return async (): Promise<Made> => {
    await port.run("INSERT INTO made (id, by) VALUES (?, ?)", [id, by]);
    if (options.until) await options.until;
    if (options.fail) throw new Error("the first attempt failed");
    return { kind: "status", id };
  };
}

/** A gate the first request's transaction waits at, and the hand that opens it. */
function gate(): { until: Promise<void>; open: () => void } {
  let open!: () => void;
  const until = new Promise<void>((resolve) => (open = resolve));
  return { until, open };
}

/** Until a's transaction holds the key's advisory lock, seen from another connection. */
const lockHeld = (port: DatabasePort) =>
  eventually(async () => (await port.get<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted"))!.n === 1, "the first request to hold the key's lock");

/** Until the second request waits on that lock: its statement is blocked behind the first's transaction. */
const lockAwaited = (port: DatabasePort) =>
  eventually(async () => (await port.get<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))!.n === 1, "the second request to wait for the key's lock");

const made = async (port: DatabasePort) => port.all<{ id: number; by: string }>("SELECT id, by FROM made ORDER BY id");

describe.skipIf(!postgresAvailable)("the Idempotency-Key guard on PostgreSQL", () => {
  test("the same key sent to two processes at once makes one status; the second waits and answers with it", async () => {
    const [a, b] = await twoProcesses();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const held = gate();
    const first = new PortIdempotencyGuard(a, clock).once(ACCOUNT, "key-1", work(a, 101, "a", { until: held.until }));
    // b's request arrives while a's transaction is open (it holds the lock), and waits for it.
    await lockHeld(b);
    const second = new PortIdempotencyGuard(b, clock).once(ACCOUNT, "key-1", work(b, 102, "b"));
    await lockAwaited(a);
    held.open();
    expect(await Promise.all([first, second])).toEqual([
      { kind: "status", id: 101 },
      { kind: "status", id: 101 },
    ]);
    expect(await made(a)).toEqual([{ id: 101, by: "a" }]);
    const rows = await a.all("SELECT account_id, key, status_id, scheduled_status_id, expires_at FROM idempotency_keys");
    expect(rows).toEqual([{ account_id: ACCOUNT, key: "key-1", status_id: 101, scheduled_status_id: null, expires_at: clock.now() + IDEMPOTENCY_TTL_MS }]);
  });

  test("eight requests with one key over two processes make one; other keys and other accounts are not held back by it", async () => {
    const [a, b] = await twoProcesses();
    await a.run("INSERT INTO accounts (id, username, created_at) VALUES (8, 'bob', 0)");
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const guards = [new PortIdempotencyGuard(a, clock), new PortIdempotencyGuard(b, clock)];
    const ports = [a, b];
    const same = Array.from({ length: 8 }, (_, n) => guards[n % 2]!.once(ACCOUNT, "same", work(ports[n % 2]!, 200 + n, `p${n % 2}`)));
    const others = [guards[0]!.once(ACCOUNT, "other", work(a, 300, "a")), guards[1]!.once(8, "same", work(b, 301, "b"))];
    const answers = await Promise.all(same);
    expect(new Set(answers.map((m) => m.id)).size).toBe(1);
    expect(await Promise.all(others)).toEqual([
      { kind: "status", id: 300 },
      { kind: "status", id: 301 },
    ]);
    expect((await made(a)).map((r) => r.id)).toEqual([answers[0]!.id, 300, 301]);
  });

  test("a first attempt that fails leaves the key free: the waiting one makes the status, and nothing of the first remains", async () => {
    const [a, b] = await twoProcesses();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const held = gate();
    const first = new PortIdempotencyGuard(a, clock).once(ACCOUNT, "key-2", work(a, 401, "a", { until: held.until, fail: true }));
    first.catch(() => {});
    await lockHeld(b);
    const second = new PortIdempotencyGuard(b, clock).once(ACCOUNT, "key-2", work(b, 402, "b"));
    await lockAwaited(a);
    held.open();
    await expect(first).rejects.toThrow("the first attempt failed");
    expect(await second).toEqual({ kind: "status", id: 402 });
    expect(await made(a)).toEqual([{ id: 402, by: "b" }]);
    expect(await a.all("SELECT status_id FROM idempotency_keys")).toEqual([{ status_id: 402 }]);
  });

  test("a key older than an hour is free again: the next request makes a new status and the row is replaced", async () => {
    const [a, b] = await twoProcesses();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    expect(await new PortIdempotencyGuard(a, clock).once(ACCOUNT, "key-3", work(a, 501, "a"))).toEqual({ kind: "status", id: 501 });
    clock.advance(IDEMPOTENCY_TTL_MS);
    expect(await new PortIdempotencyGuard(b, clock).once(ACCOUNT, "key-3", work(b, 502, "b"))).toEqual({ kind: "status", id: 502 });
    expect(await a.all("SELECT status_id FROM idempotency_keys")).toEqual([{ status_id: 502 }]);
  });
});

describe("the Idempotency-Key guard on SQLite", () => {
  test("two requests with one key at once make one status: the port's one writer serializes them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rookery-idem-"));
    const handle = openDatabase(dir);
    cleanups.push(() => {
      handle.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const port = handle.port;
    await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, 'alice', 0)", [ACCOUNT]);
    await port.run("CREATE TABLE made (id INTEGER PRIMARY KEY, by TEXT NOT NULL)");
    const guard = new PortIdempotencyGuard(port, new ManualClock(Date.UTC(2026, 0, 1)));
    const make = (id: number) => async (): Promise<Made> => {
      await port.run("INSERT INTO made (id, by) VALUES (?, 'x')", [id]);
      return { kind: "scheduled", id };
    };
    expect(await Promise.all([guard.once(ACCOUNT, "k", make(1)), guard.once(ACCOUNT, "k", make(2))])).toEqual([
      { kind: "scheduled", id: 1 },
      { kind: "scheduled", id: 1 },
    ]);
    expect(await made(port)).toEqual([{ id: 1, by: "x" }]);
  });
});
