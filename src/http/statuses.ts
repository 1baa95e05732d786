import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import type { StatusInput } from "../services/statuses/posting.ts";
import { optionalUser, requireUser, viewerId } from "./auth.ts";
import { input } from "./input.ts";
import { pageParams } from "./pagination.ts";
import { bool, int, obj, str, strArray, type ParamValue, type Params } from "./params.ts";
import { cachedPublicJson, renderStatus, statusesJson, statusJson } from "../presenters/status-json.ts";
import { jsonText, renderAccountList } from "./render.ts";
import { renderScheduled } from "./scheduled-statuses.ts";

/** POST /api/v1/statuses parameters, read leniently (form strings, JSON values, Rails keys). */
export function statusInput(p: Params): StatusInput {
  const poll = obj(p.poll);
  const expiresIn = poll?.expires_in;
  return {
    text: str(p.status),
    mediaIds: strArray(p.media_ids),
    poll: poll
      ? {
          options: (strArray(poll.options) ?? []).map((o) => o.trim()).filter((o) => o !== ""),
          // Rails' to_i: absent is no deadline, anything unreadable is zero seconds.
          expiresIn: expiresIn === undefined || expiresIn === null || expiresIn === "" ? undefined : (int(expiresIn) ?? 0),
          multiple: bool(poll.multiple),
          hideTotals: bool(poll.hide_totals),
        }
      : undefined,
    inReplyToId: str(p.in_reply_to_id),
    sensitive: bool(p.sensitive),
    spoilerText: str(p.spoiler_text),
    visibility: str(p.visibility),
    language: str(p.language),
  };
}

type Made = { kind: "status" | "scheduled"; id: number };

/**
 * The ScheduledStatus `params`: the client's own values (as sent, not cast), unset ones
 * null, in the order Mastodon answers a POST with.
 */
function scheduledParams(p: Params, applicationId: number): Record<string, unknown> {
  const raw = (v: ParamValue | undefined) => (v === undefined || v instanceof File ? null : v);
  const replyTo = parseId(str(p.in_reply_to_id));
  return {
    text: raw(p.status),
    media_ids: raw(p.media_ids),
    sensitive: raw(p.sensitive),
    spoiler_text: raw(p.spoiler_text),
    visibility: raw(p.visibility),
    language: raw(p.language),
    scheduled_at: null,
    poll: raw(p.poll),
    idempotency: null,
    with_rate_limit: false,
    in_reply_to_id: replyTo,
    application_id: applicationId,
  };
}

export function statusRoutes(ctx: AppContext) {
  const { services } = ctx;
  const statusId = (params: { id?: string }) => parseId(params.id);

  return new Elysia()
    .post("/api/v1/statuses", async (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      const p = input(c);
      const fields = statusInput(p);
      const scheduledAt = str(p.scheduled_at);
      const post = (): Promise<Made> =>
        services.writes.run(() =>
          scheduledAt
            ? { kind: "scheduled", id: services.scheduled.schedule(auth.accountId, auth.applicationId, fields, scheduledAt, scheduledParams(p, auth.applicationId)).id }
            : { kind: "status", id: services.posting.publish(services.posting.prepare(auth.accountId, auth.applicationId, fields)).id },
        );
      const key = c.request.headers.get("idempotency-key");
      const made = key ? await services.idempotency.run(auth.accountId, key.slice(0, 256), post) : await post();
      if (made.kind === "scheduled") return renderScheduled(ctx, [services.scheduled.find(auth.accountId, made.id)])[0];
      const row = services.reader.findRow(made.id);
      if (!row) throw notFound();
      return renderStatus(ctx, row, auth.accountId);
    })
    .get("/api/v1/statuses", (c) => {
      const auth = optionalUser(ctx, c.request, "read:statuses");
      const ids = (strArray(input(c).id) ?? []).slice(0, 20).map(parseId).filter((id): id is number => id !== null);
      const viewer = viewerId(auth);
      const byId = new Map(services.reader.visible(services.reader.rowsByIds(ids), viewer).map((r) => [r.id, r]));
      return jsonText(statusesJson(ctx, ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])), viewer));
    })
    .get("/api/v1/statuses/:id", (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const id = statusId(c.params);
      // Anonymous readers all see the same thing: straight from the render cache.
      const cached = viewer === null && id !== null ? cachedPublicJson(ctx, id) : null;
      if (cached) return jsonText(cached);
      const json = statusJson(ctx, services.reader.visibleRow(id, viewer), viewer);
      if (json === null) throw notFound();
      return jsonText(json);
    })
    .delete("/api/v1/statuses/:id", (c) => {
      const auth = requireUser(ctx, c.request, "write:statuses");
      return services.writes.run(() => {
        const row = services.statusActions.ownStatus(auth.accountId, statusId(c.params));
        // Rendered before it goes: the source text, media and poll are what a redraft needs.
        const body = renderStatus(ctx, row, auth.accountId, { source: true });
        body.pinned = false;
        const account = body.account as { statuses_count: number };
        if (row.visibility !== "direct") account.statuses_count = Math.max(0, account.statuses_count - 1);
        services.removal.remove(row);
        return body;
      });
    })
    .get("/api/v1/statuses/:id/context", (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      const row = services.reader.visibleRow(statusId(c.params), viewer);
      const { ancestors, descendants } = services.threads.context(row, viewer);
      return jsonText(`{"ancestors":${statusesJson(ctx, ancestors, viewer)},"descendants":${statusesJson(ctx, descendants, viewer)}}`);
    })
    .get("/api/v1/statuses/:id/reblogged_by", (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:accounts"));
      const row = services.reader.visibleRow(statusId(c.params), viewer);
      const page = pageParams(input(c), 40, 80);
      return renderAccountList(ctx, c.request, c.set, services.threads.rebloggedBy(row.id, viewer, page), page.limit, "since_id");
    })
    .get("/api/v1/statuses/:id/favourited_by", (c) => {
      const viewer = viewerId(optionalUser(ctx, c.request, "read:accounts"));
      const row = services.reader.visibleRow(statusId(c.params), viewer);
      const page = pageParams(input(c), 40, 80);
      return renderAccountList(ctx, c.request, c.set, services.threads.favouritedBy(row.id, viewer, page), page.limit, "since_id");
    })
    .get("/api/v1/statuses/:id/card", (c) => {
      // Kept for old clients: Rookery makes no preview cards, so a visible status has none.
      const viewer = viewerId(optionalUser(ctx, c.request, "read:statuses"));
      services.reader.visibleRow(statusId(c.params), viewer);
      return {};
    });
}
