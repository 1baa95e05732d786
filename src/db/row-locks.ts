import type { DatabasePort } from "./port.ts";

/**
 * Locks the rows that `select` (a SELECT of them, without its FOR clause) finds until the
 * current transaction ends, for a read-modify-write of a row (a poll's tallies, a thread's list
 * of statuses): read them after this. On PostgreSQL, FOR UPDATE: a second transaction waits here
 * for the first to commit, and its reads after it then see what the first wrote (READ COMMITTED
 * reads the latest commits at each statement); without it both read the same row and the later
 * write loses the earlier's. Nothing on SQLite, where a transaction holds the only connection
 * and nothing runs between its read and its write. Call it inside a transaction.
 */
export async function lockRows(port: DatabasePort, select: string, params: readonly unknown[]): Promise<void> {
  if (port.dialect === "postgres") await port.all(`${select} FOR UPDATE`, params);
}

/**
 * Locks the account's row (see `lockRows`): the row that stands for all of an account's own
 * things whose number is capped (featured tags, filters and their keywords, pins, lists), so that
 * requests adding to them at once count one after another. Call it first in the transaction
 * that counts and writes.
 */
export function lockAccount(port: DatabasePort, accountId: number): Promise<void> {
  return lockRows(port, "SELECT id FROM accounts WHERE id = ?", [accountId]);
}
