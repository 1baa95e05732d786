import type { Clock } from "../../clock.ts";

export const IDEMPOTENCY_TTL_MS = 60 * 60 * 1000;
const MAX_ENTRIES = 100_000;

interface Entry<T> {
  expiresAt: number;
  /** Settled value, or the in-flight work that will produce it. */
  value: Promise<T>;
}

/**
 * Idempotency-Key handling for POST /api/v1/statuses: per account and key, the first
 * request's result is kept for an hour. A duplicate that arrives while the first is still
 * running waits for it instead of posting again. Memory stays bounded: expired keys are
 * swept as new ones arrive, and past the cap the oldest go first.
 */
export class IdempotencyCache<T> {
  private entries = new Map<string, Entry<T>>();

  constructor(private clock: Clock) {}

  async run(accountId: number, key: string, work: () => Promise<T>): Promise<T> {
    const id = `${accountId}:${key}`;
    const now = this.clock.now();
    const existing = this.entries.get(id);
    if (existing && existing.expiresAt > now) return existing.value;
    if (existing) this.entries.delete(id);
    this.sweep(now);
    const value = work();
    this.entries.set(id, { expiresAt: now + IDEMPOTENCY_TTL_MS, value });
    // A failed attempt must not pin its error to the key: the client may retry with it.
    value.catch(() => {
      if (this.entries.get(id)?.value === value) this.entries.delete(id);
    });
    return value;
  }

  forget(accountId: number, key: string) {
    this.entries.delete(`${accountId}:${key}`);
  }

  get size() {
    return this.entries.size;
  }

  private sweep(now: number) {
    // Insertion order is expiry order, so the stale ones are at the front.
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now && this.entries.size < MAX_ENTRIES) break;
      this.entries.delete(id);
    }
  }
}
