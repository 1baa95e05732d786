import type { SQL } from "bun";
import type { Clock } from "../clock.ts";
import { log } from "../log.ts";
import { BUCKETS, verdictOf, type Bucket, type RequestFacts, type RequestLimiter, type ResetTexts, type Verdict } from "./rate-limits.ts";

/**
 * The rate limits counted in PostgreSQL (the UNLOGGED table rate_limit_counters), so that a
 * burst spread over several processes is limited as one. The buckets, windows and answers
 * (remaining, reset, Retry-After) are RateLimiter's; what differs is where the counts live.
 *
 * A request costs one round trip: every bucket that applies to it is counted in one
 * `INSERT ... ON CONFLICT DO UPDATE SET count = count + 1 RETURNING`, whose row lock makes the
 * counts of concurrent requests distinct. RateLimiter stops counting at the first bucket a
 * request exceeds (rack-attack's order); here the later buckets were counted in the same
 * statement, so their one too many is taken back: a second round trip, for refused requests
 * only, awaited so that the next request (in any process) sees the counts RateLimiter would
 * have. Counters of finished windows are dropped by `sweep` (the hourly job).
 */
export class PgRateLimiter implements RequestLimiter {
  private resets: ResetTexts;

  constructor(
    private sql: SQL,
    private clock: Clock,
    private buckets: readonly Bucket[] = BUCKETS,
  ) {
    this.resets = buckets.map(() => ({ window: -1, text: "" }));
  }

  async check(facts: RequestFacts): Promise<Verdict | null> {
    const now = this.clock.now();
    const reading = facts.method === "GET" || facts.method === "HEAD";
    const counted: { i: number; key: string; window: number }[] = [];
    for (let i = 0; i < this.buckets.length; i++) {
      const bucket = this.buckets[i] as Bucket;
      if (reading && bucket.writesOnly) continue;
      const key = bucket.key(facts);
      if (key === null) continue;
      counted.push({ i, key: String(key), window: Math.floor(now / bucket.periodMs) });
    }
    if (counted.length === 0) return null;
    const names = counted.map((c) => (this.buckets[c.i] as Bucket).name);
    const rows: { bucket: string; count: number }[] = await this.sql.unsafe(
      `INSERT INTO rate_limit_counters AS c (bucket, key, "window", count, expires_at)
       SELECT b, k, w, 1, e FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[]) AS t(b, k, w, e)
       ON CONFLICT (bucket, key, "window") DO UPDATE SET count = c.count + 1
       RETURNING bucket, count::int`,
      [names, counted.map((c) => c.key), counted.map((c) => c.window), counted.map((c) => (c.window + 1) * (this.buckets[c.i] as Bucket).periodMs)],
    );
    const counts = new Map(rows.map((r) => [r.bucket, r.count]));
    let best = -1;
    let bestRemaining = Infinity;
    let bestWindow = 0;
    for (let n = 0; n < counted.length; n++) {
      const { i, window } = counted[n]!;
      const bucket = this.buckets[i] as Bucket;
      const remaining = bucket.limit - (counts.get(bucket.name) ?? 0);
      if (remaining < 0) {
        await this.takeBack(counted.slice(n + 1), names.slice(n + 1));
        return verdictOf(this.buckets, this.resets, i, true, 0, window, now);
      }
      if (remaining < bestRemaining) {
        best = i;
        bestRemaining = remaining;
        bestWindow = window;
      }
    }
    return verdictOf(this.buckets, this.resets, best, false, bestRemaining, bestWindow, now);
  }

  /** The buckets after the one that refused, which RateLimiter would not have counted. */
  private async takeBack(counted: { key: string; window: number }[], names: string[]) {
    if (counted.length === 0) return;
    await this.sql
      .unsafe(
        `UPDATE rate_limit_counters AS c SET count = c.count - 1 FROM unnest($1::text[], $2::text[], $3::int8[]) AS t(b, k, w)
         WHERE c.bucket = t.b AND c.key = t.k AND c."window" = t.w`,
        [names, counted.map((c) => c.key), counted.map((c) => c.window)],
      )
      .catch((e: unknown) => log("warn", "rate limits: a count could not be taken back", { error: String(e).split("\n")[0] }));
  }

  /** Drops counters of windows already over; answers how many. */
  async sweep(now = this.clock.now()): Promise<number> {
    const rows = await this.sql`DELETE FROM rate_limit_counters WHERE expires_at <= ${now} RETURNING 1`;
    return rows.length;
  }
}
