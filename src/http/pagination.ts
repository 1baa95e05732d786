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


/** One pair as Rails' Hash#to_query writes it (arrays as key[]=v). */
function queryPair(k: string, v: string): string {
  return `${encodeURIComponent(k).replace(/%5B%5D$/i, "%5B%5D")}=${encodeURIComponent(v)}`;
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
  const { path, query } = pathAndQuery(request.url);
  const kept = keptPairs(query, options.keep ?? ["limit"]);
  // Rails' Hash#to_query: the pairs sorted as written.
  const build = (key: string, id: number) => `${publicUrl}${path}?${[...kept, `${key}=${id}`].sort().join("&")}`;
  const parts: string[] = [];
  if (options.next != null) parts.push(`<${build("max_id", options.next)}>; rel="next"`);
  if (options.prev != null) parts.push(`<${build(options.prevKey ?? "min_id", options.prev)}>; rel="prev"`);
  return parts.length ? parts.join(", ") : undefined;
}

/**
 * The query's pairs a link carries, encoded. A client asks for the same few queries page after
 * page (`limit=20`), so short ones are kept: decoding, filtering and encoding them again cost
 * more than the rest of the header.
 */
const keptQueries = new Map<string, readonly string[]>();

function keptPairs(query: string, keep: readonly string[]): readonly string[] {
  if (query === "") return [];
  const key = `${keep.join(",")}?${query}`;
  let pairs = keptQueries.get(key);
  if (pairs !== undefined) return pairs;
  const found: string[] = [];
  for (const [k, v] of new URLSearchParams(query)) if (keep.includes(k.endsWith("[]") ? k.slice(0, -2) : k)) found.push(queryPair(k, v));
  pairs = found;
  if (query.length <= 200) {
    if (keptQueries.size >= 1000) keptQueries.clear();
    keptQueries.set(key, pairs);
  }
  return pairs;
}

// Paths of these characters alone are the same in URL's pathname: nothing to resolve (no dot
// segments) or to escape. Others (an escaped tag, a stray dot) are read by URL, as they were.
const PLAIN_PATH = /^\/[A-Za-z0-9_\/-]*$/;

/**
 * The request's path (as URL's pathname) and its query string, without a URL object for the
 * paths every page has (a URL costs about as much as the rest of the header).
 */
function pathAndQuery(href: string): { path: string; query: string } {
  const start = href.indexOf("/", href.indexOf("//") + 2);
  const q = href.indexOf("?", start);
  const path = start < 0 ? "/" : q < 0 ? href.slice(start) : href.slice(start, q);
  const query = q < 0 ? "" : href.slice(q + 1);
  if (PLAIN_PATH.test(path)) return { path, query };
  const url = new URL(href);
  return { path: url.pathname, query: url.search.slice(1) };
}
