import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { ManualClock } from "../../src/clock.ts";
import { PgRateLimiter } from "../../src/infra/pg-rate-limits.ts";
import { RateLimiter, type Bucket, type RequestFacts, type Verdict } from "../../src/infra/rate-limits.ts";
import { parseIp } from "../../src/net/ip.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";

/**
 * Rate limits counted in PostgreSQL (src/infra/pg-rate-limits.ts): the same answers as the
 * in-memory RateLimiter, one counter per bucket, key and window whatever the process, and
 * finished windows swept.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function database() {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  /** A pool of its own, as another process has. */
  const client = () => {
    const sql = new SQL(db.url, { max: 4 });
    cleanups.push(() => sql.close());
    return sql;
  };
  return { sql: client(), client };
}

const START = Date.UTC(2026, 0, 1, 12, 0, 7);
const post = (accountId: number | null, path = "/api/v1/statuses"): RequestFacts => ({ method: "POST", path, ip: parseIp("192.0.2.7"), accountId });

/** Two small buckets on one key: the first refuses before the second. */
const SMALL: Bucket[] = [
  { name: "first", limit: 3, periodMs: 60_000, key: (r) => r.accountId },
  { name: "second", limit: 5, periodMs: 300_000, key: (r) => r.accountId },
];

describe.skipIf(!postgresAvailable)("rate limits in PostgreSQL", () => {
  test("the same requests get the same verdicts as in memory, spread over two processes' limiters, across a window's end", async () => {
    const { client } = await database();
    const clock = new ManualClock(START);
    const memory = new RateLimiter(clock, SMALL);
    const pg = [new PgRateLimiter(client(), clock, SMALL), new PgRateLimiter(client(), clock, SMALL)];
    const seen: [Verdict | null, Verdict | null][] = [];
    for (let n = 0; n < 14; n++) {
      if (n === 7) clock.advance(60_000); // the first bucket's window ends; the second's goes on
      const facts = post(n % 3 === 2 ? 2 : 1);
      seen.push([memory.check(facts), await pg[n % 2]!.check(facts)]);
    }
    for (const [inMemory, inPg] of seen) expect(inPg).toEqual(inMemory);
    expect(seen.filter(([v]) => v?.limited).length).toBeGreaterThan(0);
    expect(seen.map(([v]) => v?.bucket)).toContain("second");
  });

  test("a request refused by a bucket is not counted in the buckets after it, as in memory", async () => {
    const { sql } = await database();
    const clock = new ManualClock(START);
    const limiter = new PgRateLimiter(sql, clock, SMALL);
    const verdicts = [];
    for (let n = 0; n < 6; n++) verdicts.push(await limiter.check(post(1)));
    expect(verdicts.map((v) => [v!.bucket, v!.remaining, v!.limited])).toEqual([
      ["first", "2", false],
      ["first", "1", false],
      ["first", "0", false],
      ["first", "0", true],
      ["first", "0", true],
      ["first", "0", true],
    ]);
    expect(verdicts[3]!.reset).toBe("2026-01-01T12:01:00.000000Z");
    expect(verdicts[3]!.retryAfter).toBe(53);
    // The refused requests were counted in the first bucket only.
    const rows = await sql`SELECT bucket, count::int FROM rate_limit_counters ORDER BY bucket`;
    expect(rows.map((r: { bucket: string; count: number }) => [r.bucket, r.count])).toEqual([
      ["first", 6],
      ["second", 3],
    ]);
  });

  test("a burst from two processes at once is counted as one: every count distinct, the limit refusing the rest", async () => {
    const { client } = await database();
    const clock = new ManualClock(START);
    const limiters = [new PgRateLimiter(client(), clock), new PgRateLimiter(client(), clock)];
    // 320 signed-in API reads by one account, 160 through each process, all at once.
    const read: RequestFacts = { method: "GET", path: "/api/v1/timelines/home", ip: parseIp("192.0.2.7"), accountId: 42 };
    const verdicts = await Promise.all(Array.from({ length: 320 }, (_, n) => limiters[n % 2]!.check(read)));
    const served = verdicts.filter((v) => !v!.limited).map((v) => Number(v!.remaining));
    expect(served.length).toBe(300);
    expect(new Set(served).size).toBe(300);
    expect(Math.min(...served)).toBe(0);
    expect(verdicts.filter((v) => v!.limited).every((v) => v!.bucket === "account access" && v!.remaining === "0")).toBe(true);
  });

  test("the counters' table is UNLOGGED (the hand-written line of PostgreSQL migration 0002)", async () => {
    const { sql } = await database();
    const [row] = await sql`SELECT relpersistence FROM pg_class WHERE relname = 'rate_limit_counters'`;
    expect(row.relpersistence).toBe("u");
  });

  test("no bucket applies: no verdict and no row; finished windows are swept, live ones kept", async () => {
    const { sql } = await database();
    const clock = new ManualClock(START);
    const limiter = new PgRateLimiter(sql, clock, SMALL);
    expect(await limiter.check(post(null))).toBeNull();
    expect((await sql`SELECT count(*)::int AS n FROM rate_limit_counters`)[0].n).toBe(0);
    await limiter.check(post(1));
    clock.advance(60_000);
    await limiter.check(post(1));
    expect(await limiter.sweep()).toBe(1);
    const rows = await sql`SELECT bucket, count::int FROM rate_limit_counters ORDER BY bucket, "window"`;
    expect(rows.map((r: { bucket: string; count: number }) => [r.bucket, r.count])).toEqual([
      ["first", 1],
      ["second", 2],
    ]);
  });
});
