import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { IdempotencyGuard } from "./port-idempotency.ts";

export const IDEMPOTENCY_TTL_MS = 60 * 60 * 1000;
/** Mastodon keeps keys as sent; a longer one is cut here so a row stays small. */
export const IDEMPOTENCY_KEY_MAX = 256;

/** What the first request with a key made. */
export type Made = { kind: "status" | "scheduled"; id: number };

/**
 * Idempotency-Keys of POST /api/v1/statuses, per account, for an hour (as Mastodon keeps
 * them in Redis). The key is stored in SQLite by `remember`, which the caller runs inside
 * the transaction that makes the status: the two commit together or not at all, so a retry
 * after a restart finds the first status and a failed attempt leaves the key free. Expired
 * rows are swept by the hourly maintenance job.
 *
 * The in-memory map only guards requests in flight: a duplicate that arrives while the first
 * is still running waits for it instead of posting again. Entries leave it when they settle.
 */
export class IdempotencyStore implements IdempotencyGuard {
  private inFlight = new Map<string, Promise<Made>>();

  constructor(
    private db: DatabasePort,
    private clock: Clock,
  ) {}

  /** The key as it is stored: cut at 256 characters; an empty header is no key. */
  static normalize(key: string | null | undefined): string | null {
    return key ? key.slice(0, IDEMPOTENCY_KEY_MAX) : null;
  }

  /**
   * Runs `work` unless the same account and key are already in flight, in which case the
   * caller shares that attempt's outcome. A rejected attempt is forgotten: a retry runs anew.
   */
  once(accountId: number, key: string, work: () => Promise<Made>): Promise<Made> {
    const id = `${accountId}:${key}`;
    const running = this.inFlight.get(id);
    if (running) return running;
    const attempt = work();
    this.inFlight.set(id, attempt);
    const settle = () => {
      if (this.inFlight.get(id) === attempt) this.inFlight.delete(id);
    };
    attempt.then(settle, settle);
    return attempt;
  }

  /** What the key made within the last hour, or null. */
  recall(accountId: number, key: string): Promise<Made | null> {
    return recallKey(this.db, this.clock, accountId, key);
  }

  /** Records what the key made; call inside the transaction that made it. */
  remember(accountId: number, key: string, made: Made): Promise<Made> {
    return rememberKey(this.db, this.clock, accountId, key, made);
  }

  /** Drops the keys whose hour is over; returns how many. */
  sweep(): Promise<number> {
    return this.db.run("DELETE FROM idempotency_keys WHERE expires_at <= ?", [this.clock.now()]);
  }

  /** Attempts still running (for tests). */
  get inFlightCount() {
    return this.inFlight.size;
  }
}

/** What `key` made for the account within the last hour, or null (both guards read it so). */
export async function recallKey(db: DatabasePort, clock: Clock, accountId: number, key: string): Promise<Made | null> {
  const row = await db.get<{ status_id: number | null; scheduled_status_id: number | null }>(
    "SELECT status_id, scheduled_status_id FROM idempotency_keys WHERE account_id = ? AND key = ? AND expires_at > ?",
    [accountId, key, clock.now()],
  );
  if (!row) return null;
  return row.status_id !== null ? { kind: "status", id: Number(row.status_id) } : { kind: "scheduled", id: Number(row.scheduled_status_id) };
}

/** Records what `key` made, for an hour; run inside the transaction that made it. */
export async function rememberKey(db: DatabasePort, clock: Clock, accountId: number, key: string, made: Made): Promise<Made> {
  // An expired row of the same key may still be there (not swept yet): it is replaced.
  await db.run(
    `INSERT INTO idempotency_keys (account_id, key, status_id, scheduled_status_id, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, key) DO UPDATE SET status_id = excluded.status_id, scheduled_status_id = excluded.scheduled_status_id, expires_at = excluded.expires_at`,
    [accountId, key, made.kind === "status" ? made.id : null, made.kind === "scheduled" ? made.id : null, clock.now() + IDEMPOTENCY_TTL_MS],
  );
  return made;
}
