import type { NotificationRow } from "../db/schema.ts";
import type { AccountView, Embeds } from "../models/views.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { serializeReport } from "./report.ts";
import { statusJsonById, type StatusSource } from "./status-json.ts";

/** REST::NotificationSerializer (4.3), without `status`: the caller appends it, rendered for the viewer. */
export function serializeNotification(urls: Urls, n: NotificationRow, from: AccountView) {
  const out: Record<string, unknown> = {
    id: String(n.id),
    type: n.type,
    created_at: new Date(n.createdAt).toISOString(),
    group_key: n.groupKey ?? `ungrouped-${n.id}`,
    ...(n.filtered ? { filtered: true } : {}),
    account: serializeAccount(urls, from),
  };
  return out;
}

/**
 * Notifications for one viewer as JSON text, with what the service loaded for them (`embeds`):
 * statuses composed from the render cache. A notification whose sender or status is not
 * among them (gone, or no longer visible to the viewer) is left out.
 */
export async function notificationsJson(source: StatusSource, urls: Urls, rows: NotificationRow[], embeds: Embeds, viewerId: number): Promise<string[]> {
  const statuses = await statusJsonById(source, urls, embeds.statuses, viewerId);
  // A page's notifications come from few accounts: each is serialized once, and each
  // notification is composed as JSON.stringify would write serializeNotification's object.
  const accounts = new Map<number, string>();
  return rows.flatMap((n) => {
    const from = embeds.accounts.get(n.fromAccountId);
    const status = n.statusId !== null ? statuses.get(n.statusId) : null;
    const report = n.reportId !== null ? embeds.reports?.get(n.reportId) : null;
    if (!from || status === undefined || report === undefined) return [];
    let account = accounts.get(from.id);
    if (account === undefined) accounts.set(from.id, (account = JSON.stringify(serializeAccount(urls, from))));
    const head =
      `{"id":${JSON.stringify(String(n.id))},"type":${JSON.stringify(n.type)},"created_at":"${new Date(n.createdAt).toISOString()}",` +
      `"group_key":${JSON.stringify(n.groupKey ?? `ungrouped-${n.id}`)}${n.filtered ? ',"filtered":true' : ""},"account":${account}`;
    const tail = (report ? `,"report":${JSON.stringify(serializeReport(urls, report))}` : "") + (status === null ? "" : `,"status":${status}`);
    return [`${head}${tail}}`];
  });
}
