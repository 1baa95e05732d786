import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import type { ScheduledStatusRow } from "../db/schema.ts";
import { parseId } from "../ids.ts";
import { serializeScheduledStatus } from "../presenters/scheduled-status.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { str } from "./params.ts";

export async function renderScheduled(ctx: AppContext, rows: ScheduledStatusRow[]) {
  const media = await ctx.services.scheduled.media(rows.map((r) => r.id));
  return rows.map((r) => serializeScheduledStatus(ctx.urls, r, media.get(r.id) ?? []));
}

/** The caller's scheduled statuses: list, look at, move, cancel. */
export function scheduledStatusRoutes(ctx: AppContext) {
  const { services } = ctx;
  return new Elysia()
    .get("/api/v1/scheduled_statuses", async (c) => {
      const auth = requireUser(ctx, c.request, "read:statuses");
      const page = pageParams(input(c), 20, 40);
      const rows = await services.scheduled.list(auth.accountId, page);
      if (rows.length > 0) {
        const link = linkHeader(ctx.config.publicUrl, c.request, { next: rows.length >= page.limit ? rows[rows.length - 1]!.id : null, prev: rows[0]!.id });
        if (link) c.set.headers.link = link;
      }
      return renderScheduled(ctx, rows);
    })
    .get("/api/v1/scheduled_statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "read:statuses");
      return (await renderScheduled(ctx, [await services.scheduled.find(auth.accountId, parseId(c.params.id))]))[0];
    })
    .put("/api/v1/scheduled_statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const row = await services.scheduled.reschedule(auth.accountId, parseId(c.params.id), str(input(c).scheduled_at, "scheduled_at"));
      return (await renderScheduled(ctx, [row]))[0];
    })
    .delete("/api/v1/scheduled_statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      await services.scheduled.cancel(auth.accountId, parseId(c.params.id));
      return {};
    });
}
