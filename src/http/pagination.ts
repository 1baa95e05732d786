import type { Page } from "../infra/pagination.ts";
import { parseId } from "../ids.ts";
import { limitParam, str, type Params } from "./params.ts";

/** A page by id: Mastodon's limit_param, and the cursors that are ids (anything else is none). */
export function pageParams(p: Params, defaultLimit: number, max = defaultLimit * 2): Page {
  const page: Page = { limit: limitParam(p.limit, defaultLimit, max) };
  const maxId = parseId(str(p.max_id, "max_id"));
  const sinceId = parseId(str(p.since_id, "since_id"));
  const minId = parseId(str(p.min_id, "min_id"));
  if (maxId !== null) page.maxId = maxId;
  if (sinceId !== null) page.sinceId = sinceId;
  if (minId !== null) page.minId = minId;
  return page;
}


/** Rails' Hash#to_query: keys sorted, arrays as key[]=v. */
function toQuery(params: [string, string][]): string {
  return params
    .map(([k, v]) => `${encodeURIComponent(k).replace(/%5B%5D$/i, "%5B%5D")}=${encodeURIComponent(v)}`)
    .sort()
    .join("&");
}

export interface LinkOptions {
  /** Cursor for the next (older) page: present when the page may continue. */
  next?: number | null;
  /** Cursor for the previous (newer) page. */
  prev?: number | null;
  /** Mastodon uses since_id for prev on some lists (mutes, blocks, reblogged_by...). */
  prevKey?: "min_id" | "since_id";
  /**
   * Query parameters carried into the links besides the cursor: `limit` and the endpoint's
   * own filters. Nothing else is copied, so neither a token nor a stray secret in the query
   * can reach a header every origin may read.
   */
  keep?: readonly string[];
}

/**
 * The Link header (`<url>; rel="next", <url>; rel="prev"`) for the same path with the
 * request's other query parameters kept, absolute under PUBLIC_URL.
 */
export function linkHeader(publicUrl: string, request: Request, options: LinkOptions): string | undefined {
  const url = new URL(request.url);
  const keep = new Set(options.keep ?? ["limit"]);
  const kept = [...url.searchParams].filter(([k]) => keep.has(k.endsWith("[]") ? k.slice(0, -2) : k));
  const build = (key: string, id: number) => `${publicUrl}${url.pathname}?${toQuery([...kept, [key, String(id)]])}`;
  const parts: string[] = [];
  if (options.next != null) parts.push(`<${build("max_id", options.next)}>; rel="next"`);
  if (options.prev != null) parts.push(`<${build(options.prevKey ?? "min_id", options.prev)}>; rel="prev"`);
  return parts.length ? parts.join(", ") : undefined;
}
