import type { AppContext } from "../context.ts";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { serializeAccount } from "../serializers/account.ts";
import { serializeFilterResult } from "../serializers/filter.ts";
import { serializeStatus } from "../serializers/status.ts";
import type { StatusView } from "../services/statuses/reader.ts";
import type { ListedAccount } from "../services/accounts/follows.ts";
import { linkHeader } from "./pagination.ts";

type SetHeaders = { headers: Record<string, string | number> };

/** What filters look at: spoiler, text, poll options and media descriptions (Mastodon's searchable_text). */
export function searchableText(view: StatusView): string {
  const poll = view.poll ? (JSON.parse(view.poll.row.options) as string[]) : [];
  const media = view.media.map((m) => m.description ?? "");
  return [view.row.spoilerText, view.row.text, ...poll, ...media].filter((s) => s !== "").join("\n\n");
}

/** The viewer's matching filters for a status, as FilterResult entities. */
export function filteredFor(ctx: AppContext, viewerId: number | null): ((view: StatusView) => unknown[]) | undefined {
  if (viewerId === null || !ctx.services.filters.hasFilters(viewerId)) return undefined;
  return (view) => {
    const subject = view.reblog ?? view;
    const ids = view.reblog ? [view.row.id, view.reblog.row.id] : [view.row.id];
    return ctx.services.filters.matches(viewerId, searchableText(subject), ids).map(serializeFilterResult);
  };
}

/** Statuses for one viewer, in one batch of queries. */
export function renderStatuses(ctx: AppContext, rows: StatusRow[], viewerId: number | null, options: { source?: boolean } = {}) {
  const media = ctx.serializeMedia;
  const filtered = filteredFor(ctx, viewerId);
  return ctx.services.reader.views(rows, viewerId).map((view) => serializeStatus(ctx.urls, view, { viewerId, source: options.source, media, filtered }));
}

export function renderStatus(ctx: AppContext, row: StatusRow, viewerId: number | null, options: { source?: boolean } = {}) {
  return renderStatuses(ctx, [row], viewerId, options)[0] as Record<string, unknown>;
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
