import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { FAILURE_PREFIX, type DeliveryFailure } from "./failures.ts";
import { PortKvStore } from "./kv.ts";
import type { DeliveryQueueReport } from "../models/federation-health.ts";

/**
 * `rookery federation status`: what waits in the delivery queue (due now, or held for a
 * retry), which domains failed lately, with their last error, and the relays' state. Read from the database, so
 * it works beside a running server.
 */
export async function federationStatus(db: DatabasePort, clock: Clock): Promise<string> {
  const queue = await deliveryQueueReport(db, clock);
  const lines = [
    `Queue: ${queue.total} message(s) waiting, ${queue.due} due now, ${queue.retrying} held for a retry${queue.nextAt ? ` (next at ${new Date(queue.nextAt).toISOString()})` : ""}.`,
  ];
  const failures = queue.failing;
  if (failures.length === 0) {
    lines.push("No failing domains in the last 7 days.");
  } else {
    lines.push("Failing domains (last 7 days):", "domain\tfailures\tlast status\tlast failure\tlast error");
    for (const f of failures) lines.push(`${f.domain}\t${f.failures}\t${f.lastStatus ?? "-"}\t${new Date(f.lastAt).toISOString()}\t${f.lastError}`);
  }
  lines.push(...(await relayLines(db, failures)));
  return `${lines.join("\n")}\n`;
}

/**
 * The delivery queue as plain numbers, for the command above and the admin pages' health page
 * (given to the services as a function: they read no Fedify table themselves).
 */
export async function deliveryQueueReport(db: DatabasePort, clock: Clock): Promise<DeliveryQueueReport> {
  const now = clock.now();
  const queue = (await db.get<{ total: number; due: number; next: number | null }>(
    "SELECT count(*) AS total, count(CASE WHEN run_at <= ? THEN 1 END) AS due, min(CASE WHEN run_at > ? THEN run_at END) AS next FROM fedify_messages",
    [now, now],
  )) ?? { total: 0, due: 0, next: null };
  return { total: queue.total, due: queue.due, retrying: queue.total - queue.due, nextAt: queue.next, failing: await failingDomains(db, clock) };
}

/** `rookery relays list`: each relay's kind, state and what it brought, and whether deliveries to it fail. */
export async function relaysReport(db: DatabasePort, clock: Clock): Promise<string> {
  return `${(await relayLines(db, await failingDomains(db, clock))).join("\n")}\n`;
}

/** Domains whose deliveries failed in the last 7 days, the latest first. */
async function failingDomains(db: DatabasePort, clock: Clock): Promise<DeliveryFailure[]> {
  const failures: DeliveryFailure[] = [];
  for await (const entry of new PortKvStore(db, clock).list(FAILURE_PREFIX)) failures.push(entry.value as DeliveryFailure);
  return failures.sort((x, y) => y.lastAt - x.lastAt);
}

interface RelayLine {
  url: string;
  kind: string;
  state: string;
  inbox_url: string;
  state_changed_at: number;
  received_count: number;
  last_activity_at: number | null;
}

const at = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString());

/** The relays as a table: a relay whose inbox's domain fails deliveries says so, with the last error. */
async function relayLines(db: DatabasePort, failures: DeliveryFailure[]): Promise<string[]> {
  const rows = await db.all<RelayLine>("SELECT url, kind, state, inbox_url, state_changed_at, received_count, last_activity_at FROM relays ORDER BY id");
  if (rows.length === 0) return ["No relays."];
  const lines = ["Relays:", "url\tkind\tstate\tsince\tstatuses brought\tlast activity\tdeliveries"];
  for (const r of rows) {
    const failing = failures.find((f) => f.domain === new URL(r.inbox_url).host);
    const deliveries = failing ? `failing: ${failing.failures} failed attempt(s), the last at ${at(failing.lastAt)}: ${failing.lastError}` : "ok";
    lines.push(`${r.url}\t${r.kind}\t${r.state}\t${at(r.state_changed_at)}\t${r.received_count}\t${at(r.last_activity_at)}\t${deliveries}`);
  }
  return lines;
}
