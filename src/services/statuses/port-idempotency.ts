import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { recallKey, rememberKey, type Made } from "./idempotency.ts";

/**
 * What posting asks of an Idempotency-Key guard: run `work` once per account and key. The
 * in-memory IdempotencyStore is one (a duplicate in flight shares the first attempt's promise);
 * PortIdempotencyGuard is the one for several processes.
 */
export interface IdempotencyGuard {
  once(accountId: number, key: string, work: () => Promise<Made>): Promise<Made>;
}

/**
 * The Idempotency-Key guard over the database port, for several processes on one PostgreSQL:
 * the same key sent to two processes at once makes one status. `once` runs `work` in a
 * transaction that first takes a transaction-scoped advisory lock on the account and key
 * (`pg_advisory_xact_lock` of a 64-bit hash), then looks for what the key made within the hour.
 * The second request waits on the lock until the first's transaction ends: committed, it finds
 * the row the first wrote (a statement after the lock sees what was committed before it) and
 * answers with it; rolled back, it makes the status itself. The row is written in the same
 * transaction as the status, so the two commit together or not at all.
 *
 * On SQLite the port's transaction is already the only writer (BEGIN IMMEDIATE behind one
 * mutex), so no lock is taken: the second request's transaction starts after the first's ends.
 * A hash shared by two keys only makes their requests wait for each other.
 */
export class PortIdempotencyGuard implements IdempotencyGuard {
  constructor(
    private db: DatabasePort,
    private clock: Clock,
  ) {}

  once(accountId: number, key: string, work: () => Promise<Made>): Promise<Made> {
    return this.db.transaction(async () => {
      if (this.db.dialect === "postgres") await this.db.get("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [`idempotency:${accountId}:${key}`]);
      const found = await recallKey(this.db, this.clock, accountId, key);
      if (found) return found;
      return rememberKey(this.db, this.clock, accountId, key, await work());
    });
  }
}
