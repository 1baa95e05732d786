import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";
import { FAILURE_PREFIX, type DeliveryFailure } from "./delivery.ts";
import { SqliteKvStore } from "./kv.ts";

/**
 * `rookery federation status`: what waits in the delivery queue (due now, or held for a
 * retry) and which domains failed lately, with their last error. Read from the database, so
 * it works beside a running server.
 */
export async function federationStatus(sqlite: Database, clock: Clock): Promise<string> {
  const now = clock.now();
  const queue = sqlite
    .query<{ total: number; due: number; next: number | null }, [number, number]>(
      "SELECT count(*) AS total, coalesce(sum(run_at <= ?), 0) AS due, min(CASE WHEN run_at > ? THEN run_at END) AS next FROM fedify_messages",
    )
    .get(now, now) ?? { total: 0, due: 0, next: null };
  const lines = [
    `Queue: ${queue.total} message(s) waiting, ${queue.due} due now, ${queue.total - queue.due} held for a retry${queue.next ? ` (next at ${new Date(queue.next).toISOString()})` : ""}.`,
  ];
  const failures: DeliveryFailure[] = [];
  for await (const entry of new SqliteKvStore(sqlite, clock).list(FAILURE_PREFIX)) failures.push(entry.value as DeliveryFailure);
  failures.sort((x, y) => y.lastAt - x.lastAt);
  if (failures.length === 0) {
    lines.push("No failing domains in the last 7 days.");
  } else {
    lines.push("Failing domains (last 7 days):", "domain\tfailures\tlast status\tlast failure\tlast error");
    for (const f of failures) lines.push(`${f.domain}\t${f.failures}\t${f.lastStatus ?? "-"}\t${new Date(f.lastAt).toISOString()}\t${f.lastError}`);
  }
  return `${lines.join("\n")}\n`;
}
