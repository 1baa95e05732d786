import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { NotificationRow } from "../db/schema.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeNotification } from "../serializers/notification.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str, strArray } from "./params.ts";
import { jsonText, statusJsonById } from "./status-json.ts";

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

export function notificationRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .get("/api/v1/notifications", (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const page = pageParams(p, 40, 80);
      const rows = services.notifications.list(auth.accountId, {
        page,
        types: strArray(p.types, "types"),
        excludeTypes: strArray(p.exclude_types, "exclude_types"),
        fromAccountId: parseId(str(p.account_id, "account_id")) ?? undefined,
      });
      if (rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, {
          next: rows[rows.length - 1]!.id,
          prev: rows[0]!.id,
          keep: ["limit", "types", "exclude_types", "account_id"],
        });
        if (link) return jsonText(`[${notificationsJson(ctx, rows, auth.accountId).join(",")}]`, { link });
      }
      return jsonText(`[${notificationsJson(ctx, rows, auth.accountId).join(",")}]`);
    })
    // Mastodon 4.3: how many notifications arrived after the notifications marker, capped.
    .get("/api/v1/notifications/unread_count", (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const limit = pageParams(p, 100, 1000).limit;
      const marker = services.markers.get(auth.accountId, ["notifications"])[0];
      const rows = services.notifications.list(auth.accountId, {
        page: { limit, ...(marker ? { minId: parseId(marker.lastReadId) ?? 0 } : {}) },
        types: strArray(p.types, "types"),
        excludeTypes: strArray(p.exclude_types, "exclude_types"),
        fromAccountId: parseId(str(p.account_id, "account_id")) ?? undefined,
      });
      return { count: rows.length };
    })
    .get("/api/v1/notifications/:id", (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const row = services.notifications.get(auth.accountId, parseId(c.params.id) ?? -1);
      const [rendered] = notificationsJson(ctx, [row], auth.accountId);
      if (!rendered) throw notFound();
      return jsonText(rendered);
    })
    .post("/api/v1/notifications/clear", (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      services.notifications.clear(auth.accountId);
      return {};
    })
    .post("/api/v1/notifications/:id/dismiss", (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      services.notifications.dismiss(auth.accountId, parseId(c.params.id) ?? -1);
      return {};
    });
}

