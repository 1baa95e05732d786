import type { Clock } from "../clock.ts";
import { rateLimitKey, type Ip } from "../net/ip.ts";
import { INBOX_PATH } from "../net/paths.ts";
import type { SharedCounters } from "./shared-counters.ts";

/** What the limiter needs to know of a request. */
export interface RequestFacts {
  method: string;
  path: string;
  ip: Ip | null;
  /** The signed-in account, or null (anonymous, or an app's own token). */
  accountId: number | null;
  /** A sign-in attempt: the account it names (its id, or the name as typed when it names nobody). */
  login?: number | string | null;
}

export interface Bucket {
  name: string;
  limit: number;
  periodMs: number;
  /** Only ever applies to requests that write (a GET skips it without asking). */
  writesOnly?: boolean;
  /** The counter key for this request, or null when the bucket does not apply. */
  key(r: RequestFacts): number | string | null;
}

const MINUTE = 60 * 1000;
const DELETE_STATUS = /^\/api\/v1\/statuses\/\d+$/;
const UNREBLOG = /^\/api\/v1\/statuses\/\d+\/unreblog$/;

const byAccount = (r: RequestFacts) => r.accountId;
/** IPv4 as one number (cheap to hash); IPv6 by its /64. */
const byIp = (r: RequestFacts) => {
  if (!r.ip) return null;
  const b = r.ip.bytes;
  return r.ip.v4 ? (((b[12] as number) << 24) | ((b[13] as number) << 16) | ((b[14] as number) << 8) | (b[15] as number)) >>> 0 : rateLimitKey(r.ip);
};

/**
 * The spec's buckets, in the order they are counted (Mastodon's rack-attack order): a
 * request is counted in each bucket that applies until one is exceeded.
 */
export const BUCKETS: readonly Bucket[] = [
  { name: "account access", limit: 300, periodMs: 5 * MINUTE, key: (r) => (r.path.startsWith("/api/") ? byAccount(r) : null) },
  // As in Mastodon, the IP bucket is for requests that no account is making.
  { name: "ip access", limit: 300, periodMs: 5 * MINUTE, key: (r) => (r.path.startsWith("/api/") && r.accountId === null ? byIp(r) : null) },
  { name: "uploading", limit: 30, periodMs: 30 * MINUTE, writesOnly: true, key: (r) => (r.method === "POST" && (r.path === "/api/v1/media" || r.path === "/api/v2/media") ? byAccount(r) : null) },
  { name: "app sign-up", limit: 5, periodMs: 30 * MINUTE, writesOnly: true, key: (r) => (r.method === "POST" && r.path === "/api/v1/accounts" ? byIp(r) : null) },
  {
    name: "deletion",
    limit: 30,
    periodMs: 30 * MINUTE,
    writesOnly: true,
    key: (r) => ((r.method === "DELETE" && DELETE_STATUS.test(r.path)) || (r.method === "POST" && UNREBLOG.test(r.path)) ? byAccount(r) : null),
  },
];

/** The bucket of the inboxes' POSTs: its name tells the edge to add Retry-After when it refuses. */
export const INBOX_BUCKET = "inbox";

/**
 * The buckets with the inbox's (INBOX_RATE_LIMIT; none when it is off): deliveries to the
 * inboxes, per sending address. Mastodon has no such limit; the default (2,000 in five
 * minutes) is generous, a busy server delivering here through one address stays far below
 * it, and only stops a flood, before any signature is checked or key fetched.
 */
export function bucketsWithInbox(inbox: { limit: number; periodMs: number } | null): readonly Bucket[] {
  if (!inbox) return BUCKETS;
  return [...BUCKETS, { name: INBOX_BUCKET, ...inbox, writesOnly: true, key: (r) => (r.method === "POST" && INBOX_PATH.test(r.path) ? byIp(r) : null) }];
}

/**
 * Password guessing, as Mastodon's rack-attack throttles `POST /auth/sign_in`
 * (`throttle_login_attempts/ip` and `/email`): per address, and per account whatever the
 * address. Counted on the sign-in form and on the password grant, only when a password is
 * about to be checked; sessions and tokens already held (consent, refresh, code exchange)
 * are never counted, so a flood against an account cannot sign its owner out.
 */
export const SIGN_IN_BUCKETS: readonly Bucket[] = [
  { name: "sign-in attempts by address", limit: 25, periodMs: 5 * MINUTE, key: byIp },
  { name: "sign-in attempts by account", limit: 25, periodMs: 60 * MINUTE, key: (r) => r.login ?? null },
];

interface Counter {
  window: number;
  count: number;
}

/** The bucket closest to being exceeded (the one that refused, when `limited`), as header values. */
export interface Verdict {
  limited: boolean;
  limit: string;
  remaining: string;
  reset: string;
  /** The name of that bucket, and the seconds until its window ends (Retry-After). */
  bucket: string;
  retryAfter: number;
}

/**
 * What the edge asks of a limiter: the in-memory RateLimiter below answers at once; the one over
 * PostgreSQL (pg-rate-limits.ts, several processes) after one round trip.
 */
export interface RequestLimiter {
  check(facts: RequestFacts): Verdict | null | Promise<Verdict | null>;
}

/** Remaining counts as strings, made once. */
const COUNTS = Array.from({ length: 301 }, (_, i) => String(i));

/** Past this many live counters in a bucket, expired ones are swept (and, if need be, the oldest dropped). */
const MAX_COUNTERS = 100_000;

/** An ISO 8601 time with microseconds, as Mastodon's iso8601(6). */
function iso6(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Per bucket: the window whose reset time was last formatted, and that text. */
export type ResetTexts = { window: number; text: string }[];

/**
 * The verdict on bucket `best` (the one that refused, or the closest to its limit) with
 * `remaining` left in `window`, for PgRateLimiter. RateLimiter.check has the same lines inlined
 * (the hot path is left exactly as it was); test/scaling/pg-rate-limits.test.ts holds the
 * two answers equal.
 */
export function verdictOf(buckets: readonly Bucket[], resets: ResetTexts, best: number, limited: boolean, remaining: number, window: number, now: number): Verdict {
  const bucket = buckets[best] as Bucket;
  const reset = resets[best] as { window: number; text: string };
  if (reset.window !== window) {
    reset.window = window;
    reset.text = iso6((window + 1) * bucket.periodMs);
  }
  const retryAfter = Math.max(1, Math.ceil(((window + 1) * bucket.periodMs - now) / 1000));
  return { limited, limit: COUNTS[bucket.limit] ?? String(bucket.limit), remaining: COUNTS[remaining] ?? String(remaining), reset: reset.text, bucket: bucket.name, retryAfter };
}

/**
 * Fixed windows aligned to multiples of the period since the epoch, counted the way
 * rack-attack counts: a request counts first, and is refused when the count passes the
 * limit (refused requests count too). Counters live in memory, a map per bucket; those of
 * finished windows are swept.
 */
export class RateLimiter implements RequestLimiter {
  private counters: Map<number | string, Counter>[];
  private resets: ResetTexts;

  constructor(
    private clock: Clock,
    private buckets: readonly Bucket[] = BUCKETS,
    /** Counted in a table every serving thread shares (WEB_THREADS > 1), instead of in this thread's memory. */
    private shared: SharedCounters | null = null,
  ) {
    this.counters = buckets.map(() => new Map());
    this.resets = buckets.map(() => ({ window: -1, text: "" }));
  }

  /** Counts the request; null when no bucket applies to it. */
  check(facts: RequestFacts): Verdict | null {
    const now = this.clock.now();
    const reading = facts.method === "GET" || facts.method === "HEAD";
    let limited = false;
    let best = -1;
    let bestRemaining = Infinity;
    let bestWindow = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      const bucket = this.buckets[i] as Bucket;
      if (reading && bucket.writesOnly) continue;
      const key = bucket.key(facts);
      if (key === null) continue;
      const window = Math.floor(now / bucket.periodMs);
      const remaining = bucket.limit - (this.shared ? this.shared.add(i, key, window) : this.count(i, key, window, now));
      if (remaining < 0) {
        // A refusal reports the bucket that refused.
        limited = true;
        best = i;
        bestRemaining = 0;
        bestWindow = window;
        break;
      }
      if (remaining < bestRemaining) {
        best = i;
        bestRemaining = remaining;
        bestWindow = window;
      }
    }
    if (best < 0) return null;
    // verdictOf's body, inlined: this runs on every request (see pg-rate-limits.ts for the shared one).
    const bucket = this.buckets[best] as Bucket;
    const reset = this.resets[best] as { window: number; text: string };
    if (reset.window !== bestWindow) {
      reset.window = bestWindow;
      reset.text = iso6((bestWindow + 1) * bucket.periodMs);
    }
    const retryAfter = Math.max(1, Math.ceil(((bestWindow + 1) * bucket.periodMs - now) / 1000));
    return { limited, limit: COUNTS[bucket.limit] ?? String(bucket.limit), remaining: COUNTS[bestRemaining] ?? String(bestRemaining), reset: reset.text, bucket: bucket.name, retryAfter };
  }

  /** One more request of `key` in bucket `i`'s window, counted in this thread's memory: the count so far. */
  private count(i: number, key: number | string, window: number, now: number): number {
    const map = this.counters[i] as Map<number | string, Counter>;
    let counter = map.get(key);
    if (!counter) {
      if (map.size >= MAX_COUNTERS) this.sweepBucket(i, now);
      counter = { window, count: 0 };
      map.set(key, counter);
    } else if (counter.window !== window) {
      counter.window = window;
      counter.count = 0;
    }
    return ++counter.count;
  }

  get size() {
    return this.counters.reduce((n, map) => n + map.size, 0);
  }

  /** Drops counters of windows already over, in every bucket. */
  sweep(now = this.clock.now()) {
    for (let i = 0; i < this.buckets.length; i++) this.sweepBucket(i, now);
  }

  private sweepBucket(i: number, now: number) {
    const map = this.counters[i] as Map<number | string, Counter>;
    const current = Math.floor(now / (this.buckets[i] as Bucket).periodMs);
    for (const [key, counter] of map) if (counter.window < current) map.delete(key);
    // Still full of live counters (a flood of new clients): the oldest go first.
    let excess = map.size - MAX_COUNTERS / 2;
    if (excess > 0) {
      for (const key of map.keys()) {
        if (excess-- <= 0) break;
        map.delete(key);
      }
    }
  }
}
