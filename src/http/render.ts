import type { AppContext } from "../context.ts";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { serializeAccount } from "../serializers/account.ts";
import { serializeStatus } from "../serializers/status.ts";
import type { ListedAccount } from "../services/accounts/follows.ts";
import type { TimelinePage } from "../services/statuses/timelines.ts";
import { linkHeader } from "./pagination.ts";

type SetHeaders = { headers: Record<string, string | number> };

/** Statuses for one viewer, in one batch of queries. */
export function renderStatuses(ctx: AppContext, rows: StatusRow[], viewerId: number | null, options: { source?: boolean } = {}) {
  const media = ctx.serializeMedia;
  return ctx.services.reader.views(rows, viewerId).map((view) => serializeStatus(ctx.urls, view, { viewerId, source: options.source, media }));
}

export function renderStatus(ctx: AppContext, row: StatusRow, viewerId: number | null, options: { source?: boolean } = {}) {
  return renderStatuses(ctx, [row], viewerId, options)[0] as Record<string, unknown>;
}

/**
 * A page of statuses with its Link header. `always`: Mastodon's timelines link both ways
 * whenever the page has entries; account, bookmark and favourite lists only offer `next`
 * after a full page.
 */
export function renderTimeline(
  ctx: AppContext,
  request: Request,
  set: SetHeaders,
  page: TimelinePage,
  viewerId: number | null,
  always: boolean,
  keep: readonly string[] = ["limit"],
) {
  if (page.first !== null) {
    const link = linkHeader(ctx.config.publicUrl, request, { next: always || page.full ? page.last : null, prev: page.first, keep });
    if (link) set.headers.link = link;
  }
  return renderStatuses(ctx, page.rows, viewerId);
}

/** A page of accounts listed by some record's id (follows, favourites, boosts...). */
export function renderAccountList<R extends ListedAccount>(
  ctx: AppContext,
  request: Request,
  set: SetHeaders,
  rows: R[],
  limit: number,
  prevKey: "min_id" | "since_id" = "min_id",
  serialize: (row: R) => unknown = (r) => serializeAccount(ctx.urls, r.account),
) {
  if (rows.length > 0) {
    const link = linkHeader(ctx.config.publicUrl, request, {
      next: rows.length >= limit ? rows[rows.length - 1]!.cursor : null,
      prev: rows[0]!.cursor,
      prevKey,
    });
    if (link) set.headers.link = link;
  }
  return rows.map(serialize);
}

export function renderAccount(ctx: AppContext, account: AccountRow) {
  return serializeAccount(ctx.urls, account);
}
