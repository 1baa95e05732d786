import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { IdWorkerLease } from "../../src/infra/pg-id-worker.ts";
import { pgDatabaseWithClient, postgresAvailable } from "../support/postgres.ts";
import { eventually } from "../support/wait.ts";
import { startProcess } from "./processes.ts";

/**
 * ID_WORKER claimed from PostgreSQL (src/infra/pg-id-worker.ts): live processes never share a
 * number, a clean stop gives it back, and a process killed with kill -9 gives it back once its
 * lease is over.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const database = () => pgDatabaseWithClient(cleanups, 4);

async function claim(sql: SQL, holder: string, workers = 4, leaseMs = 30_000) {
  const lease = await IdWorkerLease.claim({ sql, workers, holder, leaseMs });
  cleanups.push(() => lease.release());
  return lease;
}

describe.skipIf(!postgresAvailable)("id worker numbers leased from PostgreSQL", () => {
  test("claims made at once get distinct numbers, the lowest first; one too many is refused and takes nothing", async () => {
    const { sql } = await database();
    const leases = await Promise.all(["a", "b", "c", "d"].map((holder) => claim(sql, holder)));
    expect(leases.map((l) => l.idWorker.worker).sort()).toEqual([0, 1, 2, 3]);
    expect(leases.every((l) => l.idWorker.workers === 4)).toBe(true);
    await expect(IdWorkerLease.claim({ sql, workers: 4, holder: "e" })).rejects.toThrow("every id worker number (4) is held by a live process");
    const rows = await sql`SELECT worker::int, holder FROM id_workers ORDER BY worker`;
    expect(rows.map((r: { holder: string }) => r.holder).sort()).toEqual(["a", "b", "c", "d"]);
  });

  test("a number of workers out of range is refused, and nothing is leased", async () => {
    const { sql } = await database();
    for (const workers of [0, 257, 1.5]) {
      await expect(IdWorkerLease.claim({ sql, workers, holder: "a" })).rejects.toThrow("workers must be a whole number from 1 to 256");
    }
    expect((await sql`SELECT count(*)::int AS n FROM id_workers`)[0].n).toBe(0);
  });

  test("a number given back at a clean stop is the next one claimed", async () => {
    const { sql } = await database();
    const first = await claim(sql, "a");
    await claim(sql, "b");
    await first.release();
    expect((await claim(sql, "c")).idWorker.worker).toBe(0);
  });

  test("a renewal that finds its number taken over (the process stalled past its lease) says so", async () => {
    const { sql } = await database();
    let lost = 0;
    const stalled = await IdWorkerLease.claim({ sql, workers: 2, holder: "stalled", leaseMs: 60_000, onLost: () => lost++ });
    cleanups.push(() => stalled.release());
    expect(await stalled.renew()).toBe(true);
    // Its lease ran out meanwhile and another process took the number.
    await sql`UPDATE id_workers SET leased_until = 0`;
    expect((await claim(sql, "other", 2)).idWorker.worker).toBe(stalled.idWorker.worker);
    expect(await stalled.renew()).toBe(false);
    expect(lost).toBe(1);
    const [row] = await sql`SELECT holder FROM id_workers WHERE worker = ${stalled.idWorker.worker}`;
    expect(row.holder).toBe("other");
  });

  test("another process's number stays its own while it lives, and is free again after kill -9 once its lease is over", async () => {
    const { url, sql } = await database();
    const other = await startProcess(["id", url, "other", "600", "2"]);
    cleanups.push(() => other.kill());
    expect(await other.line()).toBe("worker 0");
    // Its lease is renewed (every 200 ms) past the end of the first: the number stays its own.
    const [first] = await sql`SELECT leased_until FROM id_workers WHERE worker = 0`;
    await eventually(async () => {
      const [now] = await sql`SELECT leased_until FROM id_workers WHERE worker = 0`;
      return Number(now.leased_until) > Number(first.leased_until) + 600;
    }, "the other process to renew its lease past its first end");
    const mine = await claim(sql, "mine", 2);
    expect(mine.idWorker.worker).toBe(1);
    await mine.release();
    other.kill();
    await other.exited;
    const started = Date.now();
    const taken = await eventually(async () => {
      const lease = await claim(sql, "after", 2);
      if (lease.idWorker.worker === 0) return lease;
      await lease.release();
      return null;
    }, "number 0 to be free once the killed process's lease is over");
    expect(taken!.idWorker.worker).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
