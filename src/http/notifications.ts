import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { NotificationRow } from "../db/schema.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { notificationsJson } from "../presenters/notification.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { bool, str, strArray } from "./params.ts";
import { jsonText } from "./render.ts";

export function notificationRoutes(ctx: AppContext) {
  const { services } = ctx;
  const render = async (rows: NotificationRow[], viewerId: number) => notificationsJson(services, ctx.urls, rows, await services.embeds.notifications(rows, viewerId), viewerId);
  return new Elysia()
    .get("/api/v1/notifications", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const page = pageParams(p, 40, 80);
      const rows = await services.notifications.list(auth.accountId, {
        page,
        types: strArray(p.types, "types"),
        excludeTypes: strArray(p.exclude_types, "exclude_types"),
        fromAccountId: parseId(str(p.account_id, "account_id")) ?? undefined,
        includeFiltered: bool(p.include_filtered, "include_filtered") ?? false,
      });
      if (rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, {
          next: rows[rows.length - 1]!.id,
          prev: rows[0]!.id,
          keep: ["limit", "types", "exclude_types", "account_id", "include_filtered"],
        });
        if (link) return jsonText(`[${(await render(rows, auth.accountId)).join(",")}]`, { link });
      }
      return jsonText(`[${(await render(rows, auth.accountId)).join(",")}]`);
    })
    // Mastodon 4.3: how many notifications arrived after the notifications marker, capped.
    .get("/api/v1/notifications/unread_count", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const limit = pageParams(p, 100, 1000).limit;
      const marker = (await services.markers.get(auth.accountId, ["notifications"]))[0];
      const rows = await services.notifications.list(auth.accountId, {
        page: { limit, ...(marker ? { minId: parseId(marker.lastReadId) ?? 0 } : {}) },
        types: strArray(p.types, "types"),
        excludeTypes: strArray(p.exclude_types, "exclude_types"),
        fromAccountId: parseId(str(p.account_id, "account_id")) ?? undefined,
      });
      return { count: rows.length };
    })
    .get("/api/v1/notifications/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const row = await services.notifications.get(auth.accountId, parseId(c.params.id) ?? -1);
      const [rendered] = await render([row], auth.accountId);
      if (!rendered) throw notFound();
      return jsonText(rendered);
    })
    .post("/api/v1/notifications/clear", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      await services.notifications.clear(auth.accountId);
      return {};
    })
    .post("/api/v1/notifications/:id/dismiss", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      await services.notifications.dismiss(auth.accountId, parseId(c.params.id) ?? -1);
      return {};
    });
}

