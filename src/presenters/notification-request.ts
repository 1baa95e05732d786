import type { AppContext } from "../context.ts";
import type { NotificationRequest } from "../models/views.ts";
import { serializeAccount } from "./account.ts";
import { statusJsonById } from "./status-json.ts";

/**
 * REST::NotificationRequestSerializer as JSON text, for one viewer: `notifications_count` is a
 * string as in Mastodon, `last_status` the newest held-back mention if the viewer may see it.
 * Requests whose sender is gone are left out.
 */
export function notificationRequestsJson(ctx: AppContext, rows: NotificationRequest[], viewerId: number): string[] {
  const { services } = ctx;
  const accounts = new Map(services.accounts.findByIds([...new Set(rows.map((r) => r.fromAccountId))]).map((a) => [a.id, a]));
  const statusIds = [...new Set(rows.map((r) => r.lastStatusId).filter((id): id is number => id !== null))];
  const statuses = statusJsonById(ctx, services.reader.visible(services.reader.rowsByIds(statusIds), viewerId), viewerId);
  return rows.flatMap((r) => {
    const from = accounts.get(r.fromAccountId);
    if (!from) return [];
    const own = JSON.stringify({
      id: String(r.id),
      created_at: new Date(r.createdAt).toISOString(),
      updated_at: new Date(r.updatedAt).toISOString(),
      notifications_count: String(r.notificationsCount),
      account: serializeAccount(ctx.urls, from),
    });
    const status = r.lastStatusId !== null ? statuses.get(r.lastStatusId) : undefined;
    return [status ? `${own.slice(0, -1)},"last_status":${status}}` : own];
  });
}
