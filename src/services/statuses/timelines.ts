import type { DatabasePort } from "../../db/port.ts";
import type { StatusRow } from "../../db/schema.ts";
import { statuses } from "../../db/schema.ts";
import { normalizeTag } from "../../text/format.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { Page } from "../../infra/pagination.ts";
import type { ListService } from "../lists.ts";
import type { StatusReader } from "./reader.ts";
import type { RenderCache } from "./render-cache.ts";
import { rowReader } from "../../db/rows.ts";
import { Conditions } from "./timeline-sql.ts";

const STATUS = rowReader(statuses);
/** Where a saved list's own id (its cursor) is, after the status's columns. */
const CURSOR = STATUS.columns.split(", ").length;

/** A page of statuses with the cursor each one was found by (for Link headers). */
export interface TimelinePage {
  rows: StatusRow[];
  /** Cursor of the oldest and newest entry (a bookmark's or favourite's own id on those lists). */
  first: number | null;
  last: number | null;
  /** Whether the query returned a full page (there may be more). */
  full: boolean;
}

// The exact predicate of the statuses_public partial index, so SQLite can use it. Public
// timelines show public statuses only: a condition of these timelines, narrower than the
// visibility rule (visibleTo), and blocks are left out with the viewer's hidden accounts.
const PUBLIC_TIMELINE = "visibility = 'public' AND reblog_of_id IS NULL AND (in_reply_to_id IS NULL OR in_reply_to_account_id = account_id)";

// Public and tag timelines leave out what staff suspended or limited (Mastodon's PublicFeed:
// Account.without_suspended.without_silenced); a limited account's followers see it at home.
// One primary-key lookup a row.
const SHOWN_PUBLICLY = "NOT EXISTS (SELECT 1 FROM accounts pa WHERE pa.id = statuses.account_id AND (pa.suspended_at IS NOT NULL OR pa.silenced_at IS NOT NULL))";

function pageOf(rows: StatusRow[], limit: number, cursors?: number[]): TimelinePage {
  const ids = cursors ?? rows.map((r) => r.id);
  return { rows, first: ids[0] ?? null, last: ids[ids.length - 1] ?? null, full: ids.length >= limit && limit > 0 };
}

export interface PublicOptions {
  onlyMedia?: boolean;
  local?: boolean;
  remote?: boolean;
}

export interface AccountTimelineOptions {
  pinned?: boolean;
  excludeReplies?: boolean;
  excludeReblogs?: boolean;
  onlyMedia?: boolean;
  tagged?: string;
}

/**
 * Timelines (issue 31: on the database port). Home and list timelines read their feed tables'
 * ids, then the rows (the render cache keeps a feed's rows), which StatusReader checks and renders.
 */
export class TimelineService {
  constructor(
    private port: DatabasePort,
    private reader: StatusReader,
    private moderation: ModerationService,
    private lists: ListService,
    private kept: Pick<RenderCache, "row" | "keepRow" | "stamp">,
  ) {}

  private async hidden(viewerId: number | null): Promise<number[]> {
    return viewerId === null ? [] : [...(await this.moderation.hiddenAccounts(viewerId))];
  }

  private where(): Conditions {
    return new Conditions(this.port.dialect);
  }

  /** Statuses of domains the viewer blocks stay out (no condition at all for viewers without domain blocks). */
  private async domainFilter(where: Conditions, viewerId: number | null, account: string) {
    if (viewerId !== null && (await this.moderation.blockedDomains(viewerId)).length > 0) where.notDomainBlocked(viewerId, account);
  }

  /** Status rows, read from the values of a statement selecting STATUS.columns. */
  private async rows(text: string, params: unknown[]): Promise<StatusRow[]> {
    return (await this.port.values(text, params)).map(STATUS.map);
  }

  async home(viewerId: number, page: Page): Promise<TimelinePage> {
    return this.fromFeed(viewerId, await this.homeIds(viewerId, page), page.limit);
  }

  /** Status ids of one page of the home feed (HomeFeedService fills it), newest first. */
  private async homeIds(accountId: number, page: Page): Promise<number[]> {
    const where = this.where().add("account_id = ?", accountId).page("status_id", page);
    const forward = page.minId !== undefined;
    const found = await this.port.values(`SELECT status_id FROM home_feed WHERE ${where.where} ORDER BY status_id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`, where.params);
    const ids = found.map((r) => r[0] as number);
    return forward ? ids.reverse() : ids;
  }

  /** A list's timeline, filled like home feeds as statuses are posted. */
  async list(viewerId: number, listId: number, page: Page): Promise<TimelinePage> {
    return this.fromFeed(viewerId, await this.lists.page(viewerId, listId, page), page.limit);
  }

  /** Status ids read from a feed table, as rows the viewer may (still) see. */
  private async fromFeed(viewerId: number, ids: number[], limit: number): Promise<TimelinePage> {
    const rows = await this.keptRows(ids);
    return { ...pageOf(await this.reader.visible(rows, viewerId, (originals) => this.keptRows(originals)), limit, ids), full: ids.length >= limit };
  }

  /**
   * Rows by id in the order asked, those the render cache keeps taken from it (a feed's
   * statuses are read again on every page load), the rest read and kept; missing ones left out.
   * A kept row is as fresh as the status's rendering, which is what the page shows: what decides
   * whether it is shown (author, visibility, mentions, what it boosts) changes only through an
   * edit, which invalidates both, and a status deleted anywhere (the command line too) leaves
   * the feed with it (home_feed and list_feed cascade), so it is never asked for.
   */
  private async keptRows(ids: number[]): Promise<StatusRow[]> {
    const found = ids.map((id) => this.kept.row(id));
    const missing = ids.filter((_, i) => found[i] === undefined);
    if (missing.length === 0) return found as StatusRow[];
    const read = new Map<number, StatusRow>();
    const stamp = this.kept.stamp();
    for (const row of await this.reader.rowsByIds(missing)) {
      this.kept.keepRow(row, stamp);
      read.set(row.id, row);
    }
    return ids.map((id, i) => found[i] ?? read.get(id)).filter((r): r is StatusRow => r !== undefined);
  }

  async public(viewerId: number | null, page: Page, options: PublicOptions): Promise<TimelinePage> {
    const where = this.where().add(PUBLIC_TIMELINE).add(SHOWN_PUBLICLY);
    // Remote statuses carry their IRI; local ones have none.
    if (options.local) where.add("uri IS NULL");
    else if (options.remote) where.add("uri IS NOT NULL");
    if (options.onlyMedia) where.add("has_media = TRUE");
    where.notIn("account_id", await this.hidden(viewerId));
    await this.domainFilter(where, viewerId, "statuses.account_id");
    where.page("statuses.id", page);
    const forward = page.minId !== undefined;
    // Without the index SQLite reads every original through statuses_reblog_of (reblog_of_id IS
    // NULL) and sorts them all for each page: with relays' thousands of statuses, a read cost
    // 10 ms and more (issue 28's benchmark); by the partial index, a range of 20. PostgreSQL
    // takes no such hint.
    const from = this.port.dialect === "sqlite" ? "statuses INDEXED BY statuses_public" : "statuses";
    const rows = await this.rows(
      `SELECT ${STATUS.columns} FROM ${from} WHERE ${where.where} ORDER BY statuses.id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`,
      where.params,
    );
    return pageOf(forward ? rows.reverse() : rows, page.limit);
  }

  /** Public statuses carrying the tag (and any of `any`, all of `all`, none of `none`). */
  async tag(viewerId: number | null, name: string, page: Page, options: { any?: string[]; all?: string[]; none?: string[]; onlyMedia?: boolean; remote?: boolean }): Promise<TimelinePage> {
    if (options.remote) return pageOf([], page.limit);
    const allNames = (options.all ?? []).slice(0, 4).map(normalizeTag);
    const anyNames = [normalizeTag(name), ...(options.any ?? []).slice(0, 4).map(normalizeTag)];
    const noneNames = (options.none ?? []).slice(0, 4).map(normalizeTag);
    const ids = await this.tagIds([...anyNames, ...allNames, ...noneNames]);
    const idsOf = (names: string[]) => names.flatMap((n) => ids.get(n) ?? []);
    const anyIds = [...new Set(idsOf(anyNames))];
    if (anyIds.length === 0) return pageOf([], page.limit);
    const allIds = idsOf(allNames);
    if (allIds.length < allNames.length) return pageOf([], page.limit);
    const where = this.where()
      .add(`status_tags.tag_id IN (${anyIds.map(() => "?").join(", ")})`, ...anyIds)
      .add("statuses.visibility = 'public'")
      .add(SHOWN_PUBLICLY)
      .page("status_tags.status_id", page);
    for (const id of allIds) where.add("EXISTS (SELECT 1 FROM status_tags a WHERE a.status_id = statuses.id AND a.tag_id = ?)", id);
    for (const id of idsOf(noneNames)) where.add("NOT EXISTS (SELECT 1 FROM status_tags n WHERE n.status_id = statuses.id AND n.tag_id = ?)", id);
    if (options.onlyMedia) where.add("statuses.has_media = TRUE");
    where.notIn("statuses.account_id", await this.hidden(viewerId));
    await this.domainFilter(where, viewerId, "statuses.account_id");
    const forward = page.minId !== undefined;
    // A status carrying two of the tags is one entry; grouped by the status's key too, so that
    // PostgreSQL takes its columns (one tag needs no grouping: a status carries a tag once).
    const group = anyIds.length > 1 ? " GROUP BY status_tags.status_id, statuses.id" : "";
    const rows = await this.rows(
      `SELECT ${STATUS.columns} FROM status_tags INNER JOIN statuses ON statuses.id = status_tags.status_id
       WHERE ${where.where}${group} ORDER BY status_tags.status_id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`,
      where.params,
    );
    return pageOf(forward ? rows.reverse() : rows, page.limit);
  }

  /** Tags' ids by their normalized names (those that exist). */
  private async tagIds(names: string[]): Promise<Map<string, number>> {
    const unique = [...new Set(names)];
    const found = await this.port.values(`SELECT name, id FROM tags WHERE name IN (${unique.map(() => "?").join(", ")})`, unique);
    return new Map(found.map((r) => [r[0] as string, r[1] as number]));
  }

  /**
   * An account's statuses as the viewer may see them (Mastodon's AccountStatusesFilter). Its
   * query is SQL text, one statement per shape (kept prepared by the driver): drizzle built it,
   * the visibility rule included, again on every read of a profile.
   */
  async account(viewerId: number | null, accountId: number, page: Page, options: AccountTimelineOptions): Promise<TimelinePage> {
    if (viewerId !== null && viewerId !== accountId && (await this.moderation.isBlocking(accountId, viewerId))) return pageOf([], page.limit);
    const where = this.where().add("statuses.account_id = ?", accountId);
    // Filtered in the query, so that pages are full; the rows are checked again below.
    if (viewerId !== accountId) where.visibleTo("statuses", viewerId);
    if (options.excludeReplies) where.add("(statuses.in_reply_to_id IS NULL OR statuses.in_reply_to_account_id = statuses.account_id)");
    if (options.excludeReblogs) where.add("statuses.reblog_of_id IS NULL");
    if (options.onlyMedia) where.add("statuses.has_media = TRUE");
    if (options.tagged !== undefined) {
      where.add("statuses.id IN (SELECT st.status_id FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = ?)", normalizeTag(options.tagged));
    }
    if (options.pinned) {
      // Pins are few (five at most): all of them, newest pin first, on the first page only.
      if (page.maxId !== undefined || page.minId !== undefined || page.sinceId !== undefined) return pageOf([], page.limit);
      const rows = await this.rows(
        `SELECT ${STATUS.columns} FROM status_pins JOIN statuses ON statuses.id = status_pins.status_id WHERE status_pins.account_id = ? AND ${where.where} ORDER BY status_pins.id DESC`,
        [accountId, ...where.params],
      );
      return { ...pageOf(rows, page.limit), full: false };
    }
    where.page("statuses.id", page);
    const forward = page.minId !== undefined;
    const found = await this.rows(`SELECT ${STATUS.columns} ${STATUS.from} WHERE ${where.where} ORDER BY statuses.id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`, where.params);
    const rows = forward ? found.reverse() : found;
    const hidden = new Set(await this.hidden(viewerId));
    const visible = hidden.size === 0 ? rows : await this.withoutBoostsOf(rows, hidden);
    return { ...pageOf(await this.reader.visible(visible, viewerId), page.limit, rows.map((r) => r.id)), full: rows.length >= page.limit };
  }

  private async withoutBoostsOf(rows: StatusRow[], hidden: Set<number>): Promise<StatusRow[]> {
    const originals = new Map((await this.reader.rowsByIds(rows.filter((r) => r.reblogOfId !== null).map((r) => r.reblogOfId as number))).map((r) => [r.id, r]));
    return rows.filter((r) => r.reblogOfId === null || !hidden.has(originals.get(r.reblogOfId)?.accountId ?? -1));
  }

  bookmarks(viewerId: number, page: Page): Promise<TimelinePage> {
    return this.savedList("bookmarks", viewerId, page);
  }

  favourites(viewerId: number, page: Page): Promise<TimelinePage> {
    return this.savedList("favourites", viewerId, page);
  }

  /** Bookmarks and favourites page by their own ids, newest saved first. */
  private async savedList(table: "bookmarks" | "favourites", viewerId: number, page: Page): Promise<TimelinePage> {
    const forward = page.minId !== undefined;
    const where = this.where().add("saved.account_id = ?", viewerId).page("saved.id", page);
    const found = (
      await this.port.values(
        `SELECT ${STATUS.columns}, saved.id FROM ${table} saved INNER JOIN statuses ON statuses.id = saved.status_id
         WHERE ${where.where} ORDER BY saved.id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`,
        where.params,
      )
    ).map((r) => ({ status: STATUS.map(r), cursor: r[CURSOR] as number }));
    if (forward) found.reverse();
    const visible = new Set((await this.reader.visible(found.map((f) => f.status), viewerId)).map((r) => r.id));
    return {
      rows: found.map((f) => f.status).filter((s) => visible.has(s.id)),
      first: found[0]?.cursor ?? null,
      last: found[found.length - 1]?.cursor ?? null,
      full: found.length >= page.limit && page.limit > 0,
    };
  }
}
