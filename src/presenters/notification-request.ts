import type { Embeds, NotificationRequest } from "../models/views.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { statusJsonById, type StatusSource } from "./status-json.ts";

/**
 * REST::NotificationRequestSerializer as JSON text, for one viewer: `notifications_count` is a
 * string as in Mastodon, `last_status` the newest held-back mention if it is among `embeds`
 * (those the viewer may see). Requests whose sender is gone are left out.
 */
export async function notificationRequestsJson(source: StatusSource, urls: Urls, rows: NotificationRequest[], embeds: Embeds, viewerId: number): Promise<string[]> {
  const statuses = await statusJsonById(source, urls, embeds.statuses, viewerId);
  return rows.flatMap((r) => {
    const from = embeds.accounts.get(r.fromAccountId);
    if (!from) return [];
    const own = JSON.stringify({
      id: String(r.id),
      created_at: new Date(r.createdAt).toISOString(),
      updated_at: new Date(r.updatedAt).toISOString(),
      notifications_count: String(r.notificationsCount),
      account: serializeAccount(urls, from),
    });
    const status = r.lastStatusId !== null ? statuses.get(r.lastStatusId) : undefined;
    return [status ? `${own.slice(0, -1)},"last_status":${status}}` : own];
  });
}
