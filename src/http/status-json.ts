import type { AppContext } from "../context.ts";
import type { StatusRow } from "../db/schema.ts";
import { serializeStatus } from "../serializers/status.ts";
import type { StatusParts } from "../services/statuses/render-cache.ts";
import type { TimelinePage } from "../services/statuses/timelines.ts";
import { linkHeader } from "./pagination.ts";
import { renderStatuses } from "./render.ts";

const HEAD_KEYS = ["id", "created_at", "in_reply_to_id", "in_reply_to_account_id", "sensitive", "spoiler_text", "visibility", "language", "uri", "url", "replies_count", "reblogs_count", "favourites_count", "edited_at"] as const;
const TAIL_KEYS = ["application", "account", "media_attachments", "mentions", "tags", "emojis", "card", "poll"] as const;

function pick(source: Record<string, unknown>, keys: readonly string[]) {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = source[k];
  return out;
}

/** Splits an anonymous rendering into the pieces every viewer shares. */
function partsOf(rendered: Record<string, unknown>, row: StatusRow): StatusParts {
  return {
    head: JSON.stringify(pick(rendered, HEAD_KEYS)).slice(0, -1),
    content: JSON.stringify(rendered.content),
    tail: `,${JSON.stringify(pick(rendered, TAIL_KEYS)).slice(1)}`,
    visibility: row.visibility,
    reblogOfId: row.reblogOfId,
  };
}

/**
 * Statuses as JSON text for one viewer, built from the render cache: what is the same for
 * every viewer is rendered once per status, and a signed-in viewer's flags are one query
 * for the whole page. Statuses with polls, and viewers with filters, take the full path
 * (their JSON depends on the viewer beyond the flags). `rows` must already be the ones the
 * viewer may see; the order is kept.
 */
export function statusesJson(ctx: AppContext, rows: StatusRow[], viewerId: number | null): string {
  if (rows.length === 0) return "[]";
  const byId = statusJsonById(ctx, rows, viewerId);
  const out: string[] = [];
  for (const row of rows) {
    const json = byId.get(row.id);
    if (json !== undefined) out.push(json);
  }
  return `[${out.join(",")}]`;
}

/** The same, by status id (for entities that embed statuses, such as notifications). */
export function statusJsonById(ctx: AppContext, rows: StatusRow[], viewerId: number | null): Map<number, string> {
  const result = new Map<number, string>();
  if (rows.length === 0) return result;
  const { reader, renderCache, filters } = ctx.services;
  if (viewerId !== null && filters.hasFilters(viewerId)) {
    for (const rendered of renderStatuses(ctx, rows, viewerId)) result.set(Number(rendered.id), JSON.stringify(rendered));
    return result;
  }

  const byId = new Map(rows.map((r) => [r.id, r]));
  const missingOriginals = rows.filter((r) => r.reblogOfId !== null && !byId.has(r.reblogOfId)).map((r) => r.reblogOfId as number);
  for (const r of reader.rowsByIds([...new Set(missingOriginals)])) byId.set(r.id, r);

  const slow = new Set<number>();
  for (const row of rows) {
    const original = row.reblogOfId === null ? undefined : byId.get(row.reblogOfId);
    if (row.hasPoll || original?.hasPoll) slow.add(row.id);
  }

  // Render what the cache lacks, anonymously and in one batch.
  const parts = new Map<number, StatusParts>();
  const uncached: StatusRow[] = [];
  for (const row of byId.values()) {
    if (row.hasPoll) continue;
    const hit = renderCache.get(row.id);
    if (hit) parts.set(row.id, hit);
    else uncached.push(row);
  }
  if (uncached.length > 0) {
    const media = ctx.serializeMedia;
    for (const view of reader.views(uncached, null)) {
      const rendered = serializeStatus(ctx.urls, view, { viewerId: null, media });
      const own = partsOf(rendered, view.row);
      parts.set(view.row.id, own);
      renderCache.set(view.row.id, view.row.accountId, own);
    }
  }

  const slowJson = new Map<number, string>();
  const slowRows = rows.filter((r) => slow.has(r.id));
  if (slowRows.length > 0) {
    for (const rendered of renderStatuses(ctx, slowRows, viewerId)) slowJson.set(Number(rendered.id), JSON.stringify(rendered));
  }

  const flags = viewerId === null ? null : reader.viewerFlags([...byId.values()], viewerId);
  const compose = (row: StatusRow): string | null => {
    const own = parts.get(row.id);
    if (!own) return null;
    let reblog = "null";
    let subject = row;
    if (row.reblogOfId !== null) {
      const original = byId.get(row.reblogOfId);
      const inner = original ? compose(original) : null;
      if (!original || inner === null) return null;
      reblog = inner;
      subject = original;
    }
    if (!flags) return `${own.head},"content":${own.content},"reblog":${reblog}${own.tail}`;
    // A boost shows its original's flags, as Mastodon does; only an original can be pinned.
    const viewerPart =
      `,"favourited":${flags.favourited.has(subject.id)},"reblogged":${flags.reblogged.has(subject.id)}` +
      `,"muted":${flags.muted.has(subject.conversationId)},"bookmarked":${flags.bookmarked.has(subject.id)}` +
      `,"pinned":${row.reblogOfId === null && flags.pinned.has(row.id)}`;
    return `${own.head}${viewerPart},"content":${own.content},"filtered":[],"reblog":${reblog}${own.tail}`;
  };

  for (const row of rows) {
    const json = slowJson.get(row.id) ?? compose(row);
    if (json !== null) result.set(row.id, json);
  }
  return result;
}

/** One status as JSON text for one viewer; null if it cannot be rendered (its author is gone). */
export function statusJson(ctx: AppContext, row: StatusRow, viewerId: number | null): string | null {
  const json = statusesJson(ctx, [row], viewerId);
  return json === "[]" ? null : json.slice(1, -1);
}

/** The anonymous rendering straight from the cache, when it holds a public or unlisted original. */
export function cachedPublicJson(ctx: AppContext, statusId: number): string | null {
  const parts = ctx.services.renderCache.get(statusId);
  if (!parts || parts.reblogOfId !== null || (parts.visibility !== "public" && parts.visibility !== "unlisted")) return null;
  return `${parts.head},"content":${parts.content},"reblog":null${parts.tail}`;
}

export function jsonText(json: string, headers: Record<string, string> = {}) {
  return new Response(json, { headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

/**
 * A page of statuses with its Link header. `always`: Mastodon's timelines link both ways
 * whenever the page has entries; account, bookmark and favourite lists only offer `next`
 * after a full page.
 */
export function renderTimeline(
  ctx: AppContext,
  request: Request,
  page: TimelinePage,
  viewerId: number | null,
  always: boolean,
  keep: readonly string[] = ["limit"],
): Response {
  const headers: Record<string, string> = {};
  if (page.first !== null) {
    const link = linkHeader(ctx.config.publicUrl, request, { next: always || page.full ? page.last : null, prev: page.first, keep });
    if (link) headers.link = link;
  }
  return jsonText(statusesJson(ctx, page.rows, viewerId), headers);
}
