import type { AppContext } from "../context.ts";
import type { AccountView, ListedAccount } from "../models/views.ts";
import { serializeAccount } from "../presenters/account.ts";
import { statusesJson } from "../presenters/status-json.ts";
import type { TimelinePage } from "../services/statuses/timelines.ts";
import { linkHeader } from "./pagination.ts";

type SetHeaders = { headers: Record<string, string | number> };

/** A page of accounts listed by some record's id (follows, favourites, boosts...), those that moved with where to. */
export async function renderAccountList<R extends ListedAccount>(
  ctx: AppContext,
  request: Request,
  set: SetHeaders,
  rows: R[],
  limit: number,
  prevKey: "min_id" | "since_id" = "min_id",
  serialize: (row: R, account: AccountView) => unknown = (_, account) => serializeAccount(ctx.urls, account),
) {
  if (rows.length > 0) {
    const link = linkHeader(ctx.config.publicUrl, request, {
      next: rows.length >= limit ? rows[rows.length - 1]!.cursor : null,
      prev: rows[0]!.cursor,
      prevKey,
    });
    if (link) set.headers.link = link;
  }
  const accounts = await ctx.services.accounts.showMany(rows.map((r) => r.account));
  return rows.map((r, i) => serialize(r, accounts[i]!));
}

export function jsonText(json: string, headers: Record<string, string> = {}) {
  return new Response(json, { headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

/**
 * A page of statuses with its Link header. `always`: Mastodon's timelines link both ways
 * whenever the page has entries; account, bookmark and favourite lists only offer `next`
 * after a full page.
 */
export async function renderTimeline(
  ctx: AppContext,
  request: Request,
  page: TimelinePage,
  viewerId: number | null,
  always: boolean,
  keep: readonly string[] = ["limit"],
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (page.first !== null) {
    const link = linkHeader(ctx.config.publicUrl, request, { next: always || page.full ? page.last : null, prev: page.first, keep });
    if (link) headers.link = link;
  }
  return jsonText(await statusesJson(ctx.services, ctx.urls, page.rows, viewerId), headers);
}
