import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import { serializeStatus } from "../presenters/status.ts";
import type { StatusInput } from "../services/statuses/posting.ts";
import { optionalUser, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { bool, int, obj, SECONDS, str, strArray, type Params } from "./params.ts";
import { cachedPublicJson, filteredFor, renderStatus, statusesJson, statusJson, statusJsonById } from "../presenters/status-json.ts";
import type { StatusRow } from "../db/schema.ts";
import { jsonText, renderAccountList } from "./render.ts";
import { renderScheduled } from "./scheduled-statuses.ts";
import { asyncRefreshHeader } from "./async-refreshes.ts";

/** POST /api/v1/statuses parameters, read leniently (form strings, JSON values, Rails keys). */
export function statusInput(p: Params): StatusInput {
  const poll = obj(p.poll, "poll");
  const expiresIn = poll?.expires_in;
  return {
    text: str(p.status, "status"),
    mediaIds: strArray(p.media_ids, "media_ids"),
    poll: poll
      ? {
          options: (strArray(poll.options, "poll[options]") ?? []).map((o) => o.trim()).filter((o) => o !== ""),
          // Rails' to_i: absent is no deadline, anything unreadable is zero seconds.
          expiresIn: expiresIn === undefined || expiresIn === null || expiresIn === "" ? undefined : (int(expiresIn, "poll[expires_in]", SECONDS) ?? 0),
          multiple: bool(poll.multiple, "poll[multiple]"),
          hideTotals: bool(poll.hide_totals, "poll[hide_totals]"),
        }
      : undefined,
    inReplyToId: str(p.in_reply_to_id, "in_reply_to_id"),
    sensitive: bool(p.sensitive, "sensitive"),
    spoilerText: str(p.spoiler_text, "spoiler_text"),
    visibility: str(p.visibility, "visibility"),
    language: str(p.language, "language"),
    quotedStatusId: str(p.quoted_status_id, "quoted_status_id"),
    quotePolicy: str(p.quote_approval_policy, "quote_approval_policy"),
  };
}

export function statusRoutes(ctx: AppContext) {
  const { services } = ctx;
  const statusId = (params: { id?: string }) => parseId(params.id);

  return new Elysia()
    .post("/api/v1/statuses", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const p = input(c);
      const posted = await services.composer.post({
        accountId: auth.accountId,
        applicationId: auth.applicationId,
        fields: statusInput(p),
        scheduledAt: str(p.scheduled_at, "scheduled_at"),
        sent: p,
        idempotencyKey: c.request.headers.get("idempotency-key"),
      });
      if (posted.kind === "scheduled") return (await renderScheduled(ctx, [posted.scheduled]))[0];
      return await renderStatus(services, ctx.urls, posted.status, auth.accountId);
    })
    .get("/api/v1/statuses", async (c) => {
      const auth = optionalUser(ctx, c.request, "read:statuses");
      const ids = (strArray(input(c.request).id, "id") ?? []).slice(0, 20).map(parseId).filter((id): id is number => id !== null);
      const viewer = viewerId(auth);
      const byId = new Map((await services.reader.visible(await services.reader.rowsByIds(ids), viewer)).map((r) => [r.id, r]));
      return jsonText(await statusesJson(services, ctx.urls, ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])), viewer));
    })
    .get("/api/v1/statuses/:id", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const id = statusId(c.params);
      // Anonymous readers all see the same thing: straight from the render cache.
      const cached = viewer === null && id !== null ? cachedPublicJson(services, id) : null;
      if (cached) return jsonText(cached);
      const row = await services.reader.visibleRow(id, viewer);
      const json = await statusJson(services, ctx.urls, row, viewer);
      // Its quote, for a signed-in reader (QuoteChecks.refreshIfStale, read here and acted on after).
      const quoting = viewer === null ? undefined : await services.quotes.forStatus(row.reblogOfId ?? row.id);
      if (json === null) throw notFound();
      // A signed-in reader's look at a quote unchecked for a week has it checked again (a write: after the read).
      if (quoting) await services.quoteChecks.refreshIfStale(quoting);
      return jsonText(json);
    })
    .delete("/api/v1/statuses/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      // The status as it was before it went: its source is what a delete-and-redraft needs.
      const view = await services.statusCommands.delete(auth.accountId, statusId(c.params));
      return serializeStatus(ctx.urls, view, { viewerId: auth.accountId, source: true, filtered: await filteredFor(services, auth.accountId) });
    })
    // Removed from Mastodon in 3.0 (the card is on the Status now); clients of 2.x still ask: the card, or {}.
    .get("/api/v1/statuses/:id/card", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const row = await services.reader.visibleRow(statusId(c.params), viewer);
      const shown = row.reblogOfId !== null ? await services.reader.findRow(row.reblogOfId) : row;
      return shown?.card ? jsonText(shown.card) : {};
    })
    .get("/api/v1/statuses/:id/context", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const row = await services.reader.visibleRow(statusId(c.params), viewer);
      const { ancestors, descendants, refresh } = await services.remoteThreads.context(row, viewer);
      if (refresh) c.set.headers["mastodon-async-refresh"] = asyncRefreshHeader(refresh);
      // Both lists rendered in one batch (one query for the viewer's flags).
      const byId = await statusJsonById(services, ctx.urls, [...ancestors, ...descendants], viewer);
      const list = (rows: StatusRow[]) => `[${rows.flatMap((r) => byId.get(r.id) ?? []).join(",")}]`;
      return jsonText(`{"ancestors":${list(ancestors)},"descendants":${list(descendants)}}`);
    })
    .get("/api/v1/statuses/:id/reblogged_by", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:accounts"));
      const row = await services.reader.visibleRow(statusId(c.params), viewer);
      const page = pageParams(input(c.request), 40, 80);
      return renderAccountList(ctx, c.request, c.set, await services.threads.rebloggedBy(row.id, viewer, page), page.limit, "since_id");
    })
    .get("/api/v1/statuses/:id/favourited_by", async (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:accounts"));
      const row = await services.reader.visibleRow(statusId(c.params), viewer);
      const page = pageParams(input(c.request), 40, 80);
      return renderAccountList(ctx, c.request, c.set, await services.threads.favouritedBy(row.id, viewer, page), page.limit, "since_id");
    });
}
