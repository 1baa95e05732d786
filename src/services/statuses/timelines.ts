import { and, desc, eq, gt, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { bookmarks, favourites, statuses, statusTags, tags, type StatusRow } from "../../db/schema.ts";
import { normalizeTag } from "../../text/format.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { Page } from "../../infra/pagination.ts";
import type { ListService } from "../lists.ts";
import type { HomeFeedService } from "./home-feed.ts";
import type { StatusReader } from "./reader.ts";
import type { RenderCache } from "./render-cache.ts";
import { domainBlockedSql, visibleToSql } from "./visibility.ts";
import { rowReader } from "../../db/rows.ts";

const STATUS = rowReader(statuses);

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
const PUBLIC_TIMELINE = sql.raw("visibility = 'public' AND reblog_of_id IS NULL AND (in_reply_to_id IS NULL OR in_reply_to_account_id = account_id)");

// Public and tag timelines leave out what staff suspended or limited (Mastodon's PublicFeed:
// Account.without_suspended.without_silenced); a limited account's followers see it at home.
// One primary-key lookup a row.
const SHOWN_PUBLICLY = sql.raw("NOT EXISTS (SELECT 1 FROM accounts pa WHERE pa.id = statuses.account_id AND (pa.suspended_at IS NOT NULL OR pa.silenced_at IS NOT NULL))");

function cursorConditions(column: SQL | import("drizzle-orm/sqlite-core").SQLiteColumn, page: Page): SQL[] {
  const out: SQL[] = [];
  if (page.maxId !== undefined) out.push(lt(column as never, page.maxId));
  if (page.sinceId !== undefined) out.push(gt(column as never, page.sinceId));
  if (page.minId !== undefined) out.push(gt(column as never, page.minId));
  return out;
}

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

export class TimelineService {
  constructor(
    private db: Db,
    private reader: StatusReader,
    private feed: HomeFeedService,
    private moderation: ModerationService,
    private lists: ListService,
    private kept: Pick<RenderCache, "row" | "keepRow">,
  ) {}

  private hidden(viewerId: number | null): number[] {
    return viewerId === null ? [] : [...this.moderation.hiddenAccounts(viewerId)];
  }

  /** Statuses of domains the viewer blocks stay out (no condition at all for viewers without domain blocks). */
  private domainFilter(viewerId: number | null, account: string): SQL[] {
    if (viewerId === null || this.moderation.blockedDomains(viewerId).length === 0) return [];
    return [sql`NOT ${sql.raw(domainBlockedSql(String(viewerId), account))}`];
  }

  /**
   * Rows in the page's order; `forward` pages were read oldest first and are turned around.
   * `index`: the index to read them by, when SQLite's planner would pick a worse one.
   */
  private run(query: { where: SQL[]; orderColumn: SQL | import("drizzle-orm/sqlite-core").SQLiteColumn; index?: string }, page: Page): StatusRow[] {
    const forward = page.minId !== undefined;
    if (query.index) {
      // Drizzle selects no table's columns from a source it did not make: the ids, then the rows.
      const ids = this.db
        .select({ id: sql<number>`statuses.id` })
        .from(sql`statuses INDEXED BY ${sql.raw(query.index)}`)
        .where(and(...query.where, ...cursorConditions(query.orderColumn, page)))
        .orderBy(forward ? (query.orderColumn as never) : desc(query.orderColumn as never))
        .limit(page.limit)
        .all()
        .map((r) => r.id);
      const byId = new Map(this.reader.rowsByIds(ids).map((r) => [r.id, r]));
      const rows = ids.map((id) => byId.get(id)).filter((r): r is StatusRow => r !== undefined);
      return forward ? rows.reverse() : rows;
    }
    const rows = this.db
      .select()
      .from(statuses)
      .where(and(...query.where, ...cursorConditions(query.orderColumn, page)))
      .orderBy(forward ? (query.orderColumn as never) : desc(query.orderColumn as never))
      .limit(page.limit)
      .all();
    return forward ? rows.reverse() : rows;
  }

  home(viewerId: number, page: Page): TimelinePage {
    return this.fromFeed(viewerId, this.feed.page(viewerId, page), page.limit);
  }

  /** A list's timeline, filled like home feeds as statuses are posted. */
  list(viewerId: number, listId: number, page: Page): TimelinePage {
    return this.fromFeed(viewerId, this.lists.page(viewerId, listId, page), page.limit);
  }

  /** Status ids read from a feed table, as rows the viewer may (still) see. */
  private fromFeed(viewerId: number, ids: number[], limit: number): TimelinePage {
    const rows = this.keptRows(ids);
    return { ...pageOf(this.reader.visible(rows, viewerId, (originals) => this.keptRows(originals)), limit, ids), full: ids.length >= limit };
  }

  /**
   * Rows by id in the order asked, those the render cache keeps taken from it (a feed's
   * statuses are read again on every page load), the rest read and kept; missing ones left out.
   * A kept row is as fresh as the status's rendering, which is what the page shows: what decides
   * whether it is shown (author, visibility, mentions, what it boosts) changes only through an
   * edit, which invalidates both, and a status deleted anywhere (the command line too) leaves
   * the feed with it (home_feed and list_feed cascade), so it is never asked for.
   */
  private keptRows(ids: number[]): StatusRow[] {
    const found = ids.map((id) => this.kept.row(id));
    const missing = ids.filter((_, i) => found[i] === undefined);
    if (missing.length === 0) return found as StatusRow[];
    const read = new Map<number, StatusRow>();
    for (const row of this.reader.rowsByIds(missing)) {
      this.kept.keepRow(row);
      read.set(row.id, row);
    }
    return ids.map((id, i) => found[i] ?? read.get(id)).filter((r): r is StatusRow => r !== undefined);
  }

  public(viewerId: number | null, page: Page, options: PublicOptions): TimelinePage {
    const hidden = this.hidden(viewerId);
    const rows = this.run(
      {
        where: [
          PUBLIC_TIMELINE,
          SHOWN_PUBLICLY,
          // Remote statuses carry their IRI; local ones have none.
          ...(options.local ? [sql`uri IS NULL`] : options.remote ? [sql`uri IS NOT NULL`] : []),
          ...(options.onlyMedia ? [sql`has_media = 1`] : []),
          ...(hidden.length ? [sql`account_id NOT IN (${sql.join(hidden.map((id) => sql`${id}`), sql`, `)})`] : []),
          ...this.domainFilter(viewerId, "statuses.account_id"),
        ],
        orderColumn: statuses.id,
        // Without it SQLite reads every original through statuses_reblog_of (reblog_of_id IS
        // NULL) and sorts them all for each page: with relays' thousands of statuses, a read
        // cost 10 ms and more (issue 28's benchmark); by the partial index, a range of 20.
        index: "statuses_public",
      },
      page,
    );
    return pageOf(rows, page.limit);
  }

  /** Public statuses carrying the tag (and any of `any`, all of `all`, none of `none`). */
  tag(viewerId: number | null, name: string, page: Page, options: { any?: string[]; all?: string[]; none?: string[]; onlyMedia?: boolean; remote?: boolean }): TimelinePage {
    if (options.remote) return pageOf([], page.limit);
    const tagIds = (names: string[] | undefined) =>
      (names ?? [])
        .slice(0, 4)
        .map((n) => this.db.select({ id: tags.id }).from(tags).where(eq(tags.name, normalizeTag(n))).get()?.id)
        .filter((id): id is number => id !== undefined);
    const main = this.db.select({ id: tags.id }).from(tags).where(eq(tags.name, normalizeTag(name))).get();
    const anyIds = [...(main ? [main.id] : []), ...tagIds(options.any)];
    if (anyIds.length === 0) return pageOf([], page.limit);
    const allNames = (options.all ?? []).slice(0, 4);
    const allIds = tagIds(allNames);
    if (allIds.length < allNames.length) return pageOf([], page.limit);
    const noneIds = tagIds(options.none);
    const hidden = this.hidden(viewerId);
    const forward = page.minId !== undefined;
    const rows = this.db
      .select({ status: statuses })
      .from(statusTags)
      .innerJoin(statuses, eq(statuses.id, statusTags.statusId))
      .where(
        and(
          anyIds.length === 1 ? eq(statusTags.tagId, anyIds[0]!) : sql`${statusTags.tagId} IN (${sql.join(anyIds.map((id) => sql`${id}`), sql`, `)})`,
          sql`${statuses.visibility} = 'public'`,
          SHOWN_PUBLICLY,
          ...cursorConditions(statusTags.statusId, page),
          ...allIds.map((id) => sql`EXISTS (SELECT 1 FROM status_tags a WHERE a.status_id = ${statuses.id} AND a.tag_id = ${id})`),
          ...noneIds.map((id) => sql`NOT EXISTS (SELECT 1 FROM status_tags n WHERE n.status_id = ${statuses.id} AND n.tag_id = ${id})`),
          ...(options.onlyMedia ? [sql`${statuses.hasMedia} = 1`] : []),
          ...(hidden.length ? [sql`${statuses.accountId} NOT IN (${sql.join(hidden.map((id) => sql`${id}`), sql`, `)})`] : []),
          ...this.domainFilter(viewerId, "statuses.account_id"),
        ),
      )
      .groupBy(statusTags.statusId)
      .orderBy(forward ? statusTags.statusId : desc(statusTags.statusId))
      .limit(page.limit)
      .all()
      .map((r) => r.status);
    return pageOf(forward ? rows.reverse() : rows, page.limit);
  }

  /**
   * An account's statuses as the viewer may see them (Mastodon's AccountStatusesFilter). Its
   * query is SQL text, one statement per shape (bun:sqlite keeps them prepared): drizzle built
   * it, the visibility rule included, again on every read of a profile.
   */
  account(viewerId: number | null, accountId: number, page: Page, options: AccountTimelineOptions): TimelinePage {
    if (viewerId !== null && viewerId !== accountId && this.moderation.isBlocking(accountId, viewerId)) return pageOf([], page.limit);
    const where = ["statuses.account_id = $account"];
    const params: Record<string, number | string> = { account: accountId };
    // Filtered in the query, so that pages are full; the rows are checked again below.
    if (viewerId !== accountId) where.push(visibleToSql("statuses", viewerId === null ? null : "$viewer"));
    if (viewerId !== null && viewerId !== accountId) params.viewer = viewerId;
    if (options.excludeReplies) where.push("(statuses.in_reply_to_id IS NULL OR statuses.in_reply_to_account_id = statuses.account_id)");
    if (options.excludeReblogs) where.push("statuses.reblog_of_id IS NULL");
    if (options.onlyMedia) where.push("statuses.has_media = 1");
    if (options.tagged !== undefined) {
      where.push("statuses.id IN (SELECT st.status_id FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE t.name = $tag)");
      params.tag = normalizeTag(options.tagged);
    }
    const read = (text: string) => this.db.$client.query<unknown[], Record<string, number | string>>(text).values(params).map(STATUS.map);
    if (options.pinned) {
      // Pins are few (five at most): all of them, newest pin first, on the first page only.
      if (page.maxId !== undefined || page.minId !== undefined || page.sinceId !== undefined) return pageOf([], page.limit);
      const rows = read(`SELECT ${STATUS.columns} FROM status_pins JOIN statuses ON statuses.id = status_pins.status_id WHERE status_pins.account_id = $account AND ${where.join(" AND ")} ORDER BY status_pins.id DESC`);
      return { ...pageOf(rows, page.limit), full: false };
    }
    if (page.maxId !== undefined) (where.push("statuses.id < $max"), (params.max = page.maxId));
    if (page.sinceId !== undefined) (where.push("statuses.id > $since"), (params.since = page.sinceId));
    if (page.minId !== undefined) (where.push("statuses.id > $min"), (params.min = page.minId));
    const forward = page.minId !== undefined;
    params.limit = page.limit;
    const found = read(`SELECT ${STATUS.columns} ${STATUS.from} WHERE ${where.join(" AND ")} ORDER BY statuses.id ${forward ? "ASC" : "DESC"} LIMIT $limit`);
    const rows = forward ? found.reverse() : found;
    const hidden = new Set(this.hidden(viewerId));
    const visible = hidden.size === 0 ? rows : this.withoutBoostsOf(rows, hidden);
    return { ...pageOf(this.reader.visible(visible, viewerId), page.limit, rows.map((r) => r.id)), full: rows.length >= page.limit };
  }

  private withoutBoostsOf(rows: StatusRow[], hidden: Set<number>): StatusRow[] {
    const originals = new Map(this.reader.rowsByIds(rows.filter((r) => r.reblogOfId !== null).map((r) => r.reblogOfId as number)).map((r) => [r.id, r]));
    return rows.filter((r) => r.reblogOfId === null || !hidden.has(originals.get(r.reblogOfId)?.accountId ?? -1));
  }

  bookmarks(viewerId: number, page: Page): TimelinePage {
    return this.savedList(bookmarks, viewerId, page);
  }

  favourites(viewerId: number, page: Page): TimelinePage {
    return this.savedList(favourites, viewerId, page);
  }

  /** Bookmarks and favourites page by their own ids, newest saved first. */
  private savedList(table: typeof bookmarks | typeof favourites, viewerId: number, page: Page): TimelinePage {
    const forward = page.minId !== undefined;
    const found = this.db
      .select({ cursor: table.id, status: statuses })
      .from(table)
      .innerJoin(statuses, eq(statuses.id, table.statusId))
      .where(and(eq(table.accountId, viewerId), ...cursorConditions(table.id, page)))
      .orderBy(forward ? table.id : desc(table.id))
      .limit(page.limit)
      .all();
    if (forward) found.reverse();
    const visible = new Set(this.reader.visible(found.map((f) => f.status), viewerId).map((r) => r.id));
    return {
      rows: found.map((f) => f.status).filter((s) => visible.has(s.id)),
      first: found[0]?.cursor ?? null,
      last: found[found.length - 1]?.cursor ?? null,
      full: found.length >= page.limit && page.limit > 0,
    };
  }
}
