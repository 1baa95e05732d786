import type { AppContext } from "../context.ts";
import type { AccountRow, NotificationRow } from "../db/schema.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { statusJsonById } from "./status-json.ts";

/** REST::NotificationSerializer (4.3), without `status`: the caller appends it, rendered for the viewer. */
export function serializeNotification(urls: Urls, n: NotificationRow, from: AccountRow) {
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
 * Notifications for one viewer as JSON text: senders loaded in one batch, statuses composed
 * from the render cache. A notification about a status the viewer can no longer see is left out.
 */
export function notificationsJson(ctx: AppContext, rows: NotificationRow[], viewerId: number): string[] {
  const { services } = ctx;
  const accounts = new Map(services.accounts.findByIds([...new Set(rows.map((n) => n.fromAccountId))]).map((a) => [a.id, a]));
  const statusRows = services.reader.rowsByIds([...new Set(rows.map((n) => n.statusId).filter((id): id is number => id !== null))]);
  const statuses = statusJsonById(ctx, services.reader.visible(statusRows, viewerId), viewerId);
  return rows.flatMap((n) => {
    const from = accounts.get(n.fromAccountId);
    const status = n.statusId !== null ? statuses.get(n.statusId) : null;
    if (!from || status === undefined) return [];
    const own = JSON.stringify(serializeNotification(ctx.urls, n, from));
    return [status === null ? own : `${own.slice(0, -1)},"status":${status}}`];
  });
}
