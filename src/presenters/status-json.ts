import type { StatusRow } from "../db/schema.ts";
import type { FilterMatch, FlagSets, StatusParts, StatusView } from "../models/views.ts";
import type { Urls } from "./account.ts";
import { serializeFilterResult } from "./filter.ts";
import { composeStatusJson, serializeStatus, statusPartsJson } from "./status.ts";

/** A viewer's filters as the filter service compiled them: passed back to it to match. */
export interface ViewerFilters {
  readonly accountId: number;
}

/**
 * What rendering statuses reads, and nothing more: the services provide it (the caller passes
 * them in). The rows handed over must already be the ones the viewer may see; what is read
 * here is how they look, never whether they are shown.
 */
export interface StatusSource {
  reader: {
    /** Rows by id (the originals a page of boosts lacks). */
    rowsByIds(ids: number[]): Promise<StatusRow[]>;
    /** Everything to render the rows for the viewer (authors, media, polls, flags), in one batch. */
    views(rows: StatusRow[], viewerId: number | null): Promise<StatusView[]>;
    /** The viewer's favourites, boosts, bookmarks, pins and muted threads among the rows: one query. */
    viewerFlags(rows: StatusRow[], viewerId: number): Promise<FlagSets>;
    /** How each status's quote policy applies to the viewer (quote_approval.current_user), by status id. */
    quoteCurrentUser(rows: StatusRow[], viewerId: number | null): Promise<Map<number, string>>;
  };
  /** Statuses rendered as every viewer sees them (see StatusParts). */
  renderCache: {
    /** `row`: the status's row as the request read it (a kept rendering of an older one is not used). */
    get(statusId: number, row?: StatusRow): StatusParts | undefined;
    /** Taken before the reads a rendering is made of, and given to `set` (RenderCache.stamp). */
    stamp(): number | undefined;
    set(statusId: number, accountId: number, parts: StatusParts, row?: StatusRow, stamp?: number): void;
  };
  /** The viewer's filters: a status's `filtered`. */
  filters: {
    /** The viewer's active filters, read before rendering; null when none. */
    matcherFor(accountId: number): Promise<ViewerFilters | null>;
    matches(filters: ViewerFilters, searchable: string, statusIds: number[]): FilterMatch[];
  };
}

/** What filters look at: spoiler, text, poll options and media descriptions (Mastodon's searchable_text). */
export function searchableText(view: StatusView): string {
  const poll = view.poll ? (JSON.parse(view.poll.row.options) as string[]) : [];
  const media = view.media.map((m) => m.description ?? "");
  return [view.row.spoilerText, view.row.text, ...poll, ...media].filter((s) => s !== "").join("\n\n");
}

/** The viewer's matching filters for a status, as FilterResult entities. */
export async function filteredFor(source: StatusSource, viewerId: number | null): Promise<((view: StatusView) => unknown[]) | undefined> {
  const filters = viewerId === null ? null : await source.filters.matcherFor(viewerId);
  if (filters === null) return undefined;
  return (view) => {
    const subject = view.reblog ?? view;
    const ids = view.reblog ? [view.row.id, view.reblog.row.id] : [view.row.id];
    return source.filters.matches(filters, searchableText(subject), ids).map(serializeFilterResult);
  };
}

/** Statuses for one viewer, in one batch of queries. */
export async function renderStatuses(source: StatusSource, urls: Urls, rows: StatusRow[], viewerId: number | null, options: { source?: boolean } = {}) {
  const filtered = await filteredFor(source, viewerId);
  return (await source.reader.views(rows, viewerId)).map((view) => serializeStatus(urls, view, { viewerId, source: options.source, filtered }));
}

export async function renderStatus(source: StatusSource, urls: Urls, row: StatusRow, viewerId: number | null, options: { source?: boolean } = {}) {
  return (await renderStatuses(source, urls, [row], viewerId, options))[0] as Record<string, unknown>;
}

/**
 * Statuses as JSON text for one viewer, built from the render cache: what is the same for
 * every viewer is rendered once per status, and a signed-in viewer's flags are one query
 * for the whole page. Statuses with polls, and viewers with filters, take the full path
 * (their JSON depends on the viewer beyond the flags). `rows` must already be the ones the
 * viewer may see; the order is kept.
 */
export async function statusesJson(source: StatusSource, urls: Urls, rows: StatusRow[], viewerId: number | null): Promise<string> {
  if (rows.length === 0) return "[]";
  const byId = await statusJsonById(source, urls, rows, viewerId);
  // Brackets and commas joined with the statuses in one join: a template around a join is a
  // rope of 30 KB that the Response copies flat before encoding it (about 10 µs a page).
  const out: string[] = ["["];
  for (const row of rows) {
    const json = byId.get(row.id);
    if (json === undefined) continue;
    if (out.length > 1) out.push(",");
    out.push(json);
  }
  out.push("]");
  return out.join("");
}

/** The same, by status id (for entities that embed statuses, such as notifications). */
export async function statusJsonById(source: StatusSource, urls: Urls, rows: StatusRow[], viewerId: number | null): Promise<Map<number, string>> {
  const result = new Map<number, string>();
  if (rows.length === 0) return result;
  const { reader, renderCache, filters } = source;
  if (viewerId !== null && (await filters.matcherFor(viewerId)) !== null) {
    for (const rendered of await renderStatuses(source, urls, rows, viewerId)) result.set(Number(rendered.id), JSON.stringify(rendered));
    return result;
  }

  const byId = new Map(rows.map((r) => [r.id, r]));
  const missingOriginals = rows.filter((r) => r.reblogOfId !== null && !byId.has(r.reblogOfId)).map((r) => r.reblogOfId as number);
  if (missingOriginals.length > 0) for (const r of await reader.rowsByIds([...new Set(missingOriginals)])) byId.set(r.id, r);

  // Render what the cache lacks, anonymously and in one batch.
  const parts = new Map<number, StatusParts>();
  const uncached: StatusRow[] = [];
  for (const row of byId.values()) {
    if (row.hasPoll) continue;
    const hit = renderCache.get(row.id, row);
    if (hit) parts.set(row.id, hit);
    else uncached.push(row);
  }
  if (uncached.length > 0) {
    const stamp = renderCache.stamp();
    for (const view of await reader.views(uncached, null)) {
      const own = statusPartsJson(urls, view, { viewerId: null });
      parts.set(view.row.id, own);
      renderCache.set(view.row.id, view.row.accountId, own, view.row, stamp);
    }
  }

  // Polls and quotes are the viewer's own to render (votes, what the viewer may see of the quoted status).
  const slow = new Set<number>();
  for (const row of rows) {
    const original = row.reblogOfId === null ? undefined : byId.get(row.reblogOfId);
    if (row.hasPoll || original?.hasPoll || parts.get(row.id)?.quoted || (original && parts.get(original.id)?.quoted)) slow.add(row.id);
  }
  const slowJson = new Map<number, string>();
  const slowRows = rows.filter((r) => slow.has(r.id));
  if (slowRows.length > 0) {
    for (const rendered of await renderStatuses(source, urls, slowRows, viewerId)) slowJson.set(Number(rendered.id), JSON.stringify(rendered));
  }

  const fast = [...byId.values()].filter((r) => !slow.has(r.id));
  const [flags, currentUser] = viewerId === null ? [null, null] : await Promise.all([reader.viewerFlags(fast, viewerId), reader.quoteCurrentUser(fast.filter((r) => r.reblogOfId === null), viewerId)]);
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
    // A boost tells its original's quote policy.
    const quoting = currentUser?.get(subject.id) ?? "denied";
    if (!flags) return composeStatusJson(own, reblog, null, quoting);
    // A boost shows its original's flags, as Mastodon does; only an original can be pinned.
    return composeStatusJson(
      own,
      reblog,
      {
        favourited: flags.favourited.has(subject.id),
        reblogged: flags.reblogged.has(subject.id),
        muted: flags.muted.has(subject.conversationId),
        bookmarked: flags.bookmarked.has(subject.id),
        pinned: row.reblogOfId === null && flags.pinned.has(row.id),
      },
      quoting,
    );
  };

  for (const row of rows) {
    const json = slowJson.get(row.id) ?? compose(row);
    if (json !== null) result.set(row.id, json);
  }
  return result;
}

/** One status as JSON text for one viewer; null if it cannot be rendered (its author is gone). */
export async function statusJson(source: StatusSource, urls: Urls, row: StatusRow, viewerId: number | null): Promise<string | null> {
  const json = await statusesJson(source, urls, [row], viewerId);
  return json === "[]" ? null : json.slice(1, -1);
}

/** The anonymous rendering straight from the cache, when it holds a public or unlisted original that quotes nothing. */
export function cachedPublicJson(source: Pick<StatusSource, "renderCache">, statusId: number): string | null {
  const parts = source.renderCache.get(statusId);
  if (!parts || parts.reblogOfId !== null || parts.quoted || (parts.visibility !== "public" && parts.visibility !== "unlisted")) return null;
  return composeStatusJson(parts, "null", null);
}

/**
 * A status as a signed-in reader with no relation to it sees it: not favourited, boosted,
 * bookmarked, pinned or muted by them, no filters, no vote. Right after it is posted that
 * is nearly everyone it reaches, so streams render this once and share it.
 */
export async function strangerStatusJson(source: StatusSource, urls: Urls, row: StatusRow): Promise<string> {
  const view = (await source.reader.views([row], null))[0]!;
  view.viewer = { favourited: false, reblogged: false, muted: false, bookmarked: false, pinned: false };
  if (view.poll) view.poll = { ...view.poll, ownVotes: [] };
  // As a signed-in reader who follows nobody involved may quote it (viewer 0 is nobody).
  const subject = view.reblog ?? view;
  const quoting = (await source.reader.quoteCurrentUser([subject.row], 0)).get(subject.row.id) ?? "denied";
  subject.quoteApproval = { ...subject.quoteApproval, currentUser: quoting };
  if (view.reblog) view.quoteApproval = subject.quoteApproval;
  // viewerId 0 is nobody: poll totals stay hidden as for any reader but the author.
  return JSON.stringify(serializeStatus(urls, view, { viewerId: 0 }));
}
