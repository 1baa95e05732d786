import { accountDomain } from "../net/domains.ts";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { accounts, type AccountRow, type StatusRow } from "../db/schema.ts";
import { rowReader } from "../db/rows.ts";
import { normalizeTag } from "../text/format.ts";
import type { StatusReader } from "./statuses/reader.ts";
import type { RemoteAccounts } from "./remote/accounts.ts";
import type { RemoteFetcher } from "./remote/fetcher.ts";
import type { RemoteNotes } from "./remote/notes.ts";
import { visibleToSql } from "./statuses/visibility.ts";
import type { TagHit } from "../models/views.ts";
import { idFloorForTime } from "../ids.ts";

export type SearchType = "accounts" | "hashtags" | "statuses";

export interface SearchOptions {
  type?: SearchType;
  limit: number;
  offset: number;
  resolve: boolean;
  following: boolean;
}

/** How long a search waits for another server to answer (WebFinger, the object's document). */
const RESOLVE_TIMEOUT_MS = 10_000;

export interface SearchResults {
  accounts: AccountRow[];
  statuses: StatusRow[];
  hashtags: TagHit[];
}

const ACCOUNT = rowReader(accounts);
/** Below this length an anonymous search only finds an exact `user@domain` (Mastodon's MIN_QUERY_LENGTH). */
const MIN_QUERY_LENGTH = 3;
const DAY = 86_400_000;
/** Trending hashtags: ranked at most this often, and this many kept (Mastodon offers 20 at a time). */
const TRENDS_CACHE_MS = 5 * 60 * 1000;
const MAX_TRENDING = 100;

/**
 * Search as a Mastodon server without Elasticsearch answers it: accounts by username or
 * display-name prefix (exact username first, then followed accounts, then the most
 * followed), hashtags by name prefix (shortest first), and statuses only as the resolution
 * of a local status URL, since full-text status search needs a search engine.
 */
export class SearchService {
  private q;
  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private reader: StatusReader,
    private remote: RemoteAccounts,
    /** Where a status fetched for resolve=true is stored. */
    private notes: RemoteNotes,
    /** Fetches what URLs of other servers name (resolve=true); null while federation is off. */
    private fetcher: RemoteFetcher | null,
    private publicUrl: string,
    private domain: string,
  ) {
    const postgres = db.dialect === "postgres";
    // A prefix (or a word of the display name) by position, not LIKE: SQLite prepares a
    // statement again on every run when a LIKE pattern is a bound parameter (its LIKE
    // optimization depends on the value), 25-60 µs each time, more than the search itself.
    // PostgreSQL spells instr strpos.
    const instr = postgres ? "strpos" : "instr";
    // Raw SQL, run through the port's statement cache (SQLite's query cache): the planner hints
    // below and the list of tag ids are not drizzle's to build. Parameters are positional, so
    // one that is used twice is given twice. The viewer's id is compared with 0 as a BIGINT:
    // PostgreSQL would take a bare `? = 0` for an int4 and refuse an id over 2^31.
    const viewer = "CAST(? AS BIGINT)";
    this.q = {
      // Parameters: name, name, " name", viewer, viewer, viewer, following, viewer, name, viewer, limit, offset.
      accounts: `
        SELECT ${ACCOUNT.columns} ${ACCOUNT.from}
        WHERE (${instr}(lower(username), ?) = 1 OR ${instr}(lower(display_name), ?) = 1 OR ${instr}(lower(display_name), ?) > 0)
          AND suspended_at IS NULL
          AND (${viewer} = 0 OR (
                id NOT IN (SELECT target_account_id FROM blocks WHERE account_id = ?)
            AND id NOT IN (SELECT account_id FROM blocks WHERE target_account_id = ?)))
          AND (? = 0 OR id IN (SELECT target_account_id FROM follows WHERE account_id = ?))
          AND id NOT IN (SELECT account_id FROM users WHERE approved = FALSE)
        ORDER BY lower(username) = ? DESC,
                 id IN (SELECT target_account_id FROM follows WHERE account_id = ?) DESC,
                 domain IS NULL DESC,
                 followers_count DESC, id
        LIMIT ? OFFSET ?`,
      byUsername: `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE lower(username) = ? AND domain IS NULL AND id NOT IN (SELECT account_id FROM users WHERE approved = FALSE)`,
      // Parameters: username, domain, viewer, viewer, viewer.
      byHandle: `
        SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE lower(username) = ? AND lower(domain) = ?
          AND (${viewer} = 0 OR (
                id NOT IN (SELECT target_account_id FROM blocks WHERE account_id = ?)
            AND id NOT IN (SELECT account_id FROM blocks WHERE target_account_id = ?)))`,
      // Names are stored normalized, as the query is: a prefix by position (see accounts, above).
      tags: `SELECT id, name FROM tags WHERE ${instr}(name, ?) = 1 ORDER BY length(name), name LIMIT ? OFFSET ?`,
      follows: "SELECT 1 AS one FROM follows WHERE account_id = ? AND target_account_id = ?",
      tagByName: "SELECT id, name FROM tags WHERE name = ?",
      // Tags used in the public statuses of the last days, by how many accounts used them.
      // On SQLite, CROSS JOIN keeps statuses the outer loop, read as a rowid range from the id
      // of a week ago (ids grow with time), and `+` keeps the reblog test off the reblog_of
      // index; PostgreSQL plans for itself (and has no CROSS JOIN ... ON).
      trending: `
        SELECT t.id, t.name FROM statuses s ${postgres ? "JOIN" : "CROSS JOIN"} status_tags st ON st.status_id = s.id JOIN tags t ON t.id = st.tag_id
        WHERE s.id >= ? AND s.created_at >= ? AND s.visibility = 'public' AND ${postgres ? "" : "+"}s.reblog_of_id IS NULL
        GROUP BY t.id ORDER BY count(DISTINCT s.account_id) DESC, count(*) DESC, t.name LIMIT ?`,
      // The tag ids are a list of `?` (at most a page of tags), written in by usage().
      usage: (ids: number) => `
        SELECT st.tag_id AS "tagId", (s.created_at / ${DAY}) * ${DAY} AS day, count(*) AS uses, count(DISTINCT s.account_id) AS accounts
        FROM status_tags st JOIN statuses s ON s.id = st.status_id
        WHERE st.tag_id IN (${Array(ids).fill("?").join(", ")}) AND s.created_at >= ? AND ${visibleToSql("s", null)}
        GROUP BY st.tag_id, day`,
    };
  }

  async search(viewerId: number | null, rawQuery: string, options: SearchOptions): Promise<SearchResults> {
    const results: SearchResults = { accounts: [], statuses: [], hashtags: [] };
    const query = rawQuery.trim();
    // Pagination by offset exists only for one type at a time.
    const offset = options.type ? options.offset : 0;
    if (query === "" || options.limit <= 0) return results;

    if (/^https?:\/\//i.test(query)) {
      if (options.resolve && offset === 0) {
        if (query.toLowerCase().startsWith(`${this.publicUrl.toLowerCase()}/`)) await this.resolveUrl(query, viewerId, options.type, results);
        else await this.resolveRemoteUrl(query, viewerId, options.type, results);
      }
      return results;
    }
    const wants = (type: SearchType) => options.type === undefined || options.type === type;
    if (wants("accounts") && !(query.startsWith("#") || (query.includes("@") && query.includes(" ")))) {
      results.accounts = await this.findAccounts(viewerId, query, { ...options, offset });
    }
    if (wants("hashtags") && !query.includes("@")) results.hashtags = await this.hashtags(query, options.limit, offset);
    return results;
  }

  /**
   * Accounts matching a query (also GET /api/v1/accounts/search): a handle of another server
   * is that account, fetched through WebFinger first with `resolve` (Mastodon's
   * ResolveAccountService), else only when it is stored here.
   */
  async findAccounts(viewerId: number | null, rawQuery: string, options: { limit: number; offset: number; following: boolean; resolve: boolean }): Promise<AccountRow[]> {
    const handle = this.remoteHandle(rawQuery);
    if (handle && options.resolve && viewerId !== null && options.offset === 0) {
      await this.remote.lookup(handle.username, handle.domain, AbortSignal.timeout(RESOLVE_TIMEOUT_MS));
    }
    return this.accounts(viewerId, rawQuery, options);
  }

  /** `user@domain` (an @ before it or not) of another server; null for anything else. */
  private remoteHandle(rawQuery: string): { username: string; domain: string } | null {
    const m = /^@?([A-Za-z0-9_.-]+)@([^\s@/?#]+)$/.exec(rawQuery.trim());
    // Spelt as accounts' domains are stored (lower case, punycode, no trailing dot, port kept).
    const domain = m ? accountDomain(m[2]!) : null;
    if (!m || domain === null || this.isLocal(domain)) return null;
    return { username: m[1]!, domain };
  }

  private isLocal(domain: string): boolean {
    return domain === (accountDomain(this.domain) ?? this.domain.toLowerCase());
  }

  /** Accounts stored here matching a query: local and remote ones by name prefix, or one remote handle exactly. */
  private async accounts(viewerId: number | null, rawQuery: string, options: { limit: number; offset: number; following: boolean }): Promise<AccountRow[]> {
    const query = rawQuery.trim().replace(/^@/, "");
    const [username = "", domain] = query.split("@");
    if (domain !== undefined && !this.isLocal(accountDomain(domain) ?? domain.toLowerCase())) {
      const handle = this.remoteHandle(query);
      if (!handle || options.offset > 0 || options.limit <= 0) return [];
      const viewer = viewerId ?? 0;
      const [row] = await this.db.values(this.q.byHandle, [handle.username.toLowerCase(), handle.domain, viewer, viewer, viewer]);
      if (!row) return [];
      const account = ACCOUNT.map(row);
      return options.following && viewerId !== null && !(await this.db.get(this.q.follows, [viewerId, account.id])) ? [] : [account];
    }
    const name = username.toLowerCase();
    if (name === "" || options.limit <= 0) return [];
    const following = options.following && viewerId !== null;
    if (viewerId === null && name.length < MIN_QUERY_LENGTH) {
      // Too short to search for anonymously: only `user@domain` written out finds its account.
      if (domain === undefined || options.offset > 0) return [];
      const [exact] = await this.db.values(this.q.byUsername, [name]);
      return exact ? [ACCOUNT.map(exact)] : [];
    }
    const viewer = viewerId ?? 0;
    const rows = await this.db.values(this.q.accounts, [name, name, ` ${name}`, viewer, viewer, viewer, following ? 1 : 0, viewer, name, viewer, options.limit, options.offset]);
    return rows.map(ACCOUNT.map);
  }

  async hashtags(rawQuery: string, limit: number, offset: number): Promise<TagHit[]> {
    const name = normalizeTag(rawQuery.trim().replace(/^#/, ""));
    if (name === "") return [];
    const rows = await this.db.all<{ id: number; name: string }>(this.q.tags, [name, limit, offset]);
    // The exact tag leads, as Mastodon patches its results.
    const exactIndex = rows.findIndex((r) => r.name === name);
    if (exactIndex > 0) rows.unshift(...rows.splice(exactIndex, 1));
    return this.withHistory(rows);
  }

  /**
   * GET /api/v1/trends/tags without Mastodon's review queue and scores: the hashtags of the
   * public statuses this server holds (its own and those federation brought) of the last
   * seven days, those used by the most accounts first, then by the most statuses.
   */
  async trendingTags(limit: number, offset: number): Promise<TagHit[]> {
    const now = this.clock.now();
    // Ranked once every few minutes (clients ask at every start; the ranking moves slowly).
    if (!this.trends || this.trends.at + TRENDS_CACHE_MS <= now || this.trends.at > now) {
      const since = now - 7 * DAY;
      this.trends = { at: now, rows: await this.db.all<{ id: number; name: string }>(this.q.trending, [idFloorForTime(since), since, MAX_TRENDING]) };
    }
    return this.withHistory(this.trends.rows.slice(offset, offset + limit));
  }

  private trends: { at: number; rows: { id: number; name: string }[] } | null = null;

  /** One tag by name (GET /api/v1/tags/:name); one that was never used has no id. */
  async tag(rawName: string): Promise<TagHit | null> {
    const name = normalizeTag(rawName);
    if (name === "") return null;
    const row = await this.db.get<{ id: number; name: string }>(this.q.tagByName, [name]);
    return row ? ((await this.withHistory([row]))[0] as TagHit) : { id: null, name, history: this.emptyHistory() };
  }

  private emptyHistory() {
    const today = Math.floor(this.clock.now() / DAY) * DAY;
    return Array.from({ length: 7 }, (_, i) => ({ day: today - i * DAY, uses: 0, accounts: 0 }));
  }

  /**
   * These tags with Mastodon's 7-day usage history, today first; one never used (no id) has an
   * empty one. Public for the services that read their tags through the database port.
   */
  async withHistory(rows: { id: number | null; name: string }[]): Promise<TagHit[]> {
    if (rows.length === 0) return [];
    const days = this.emptyHistory();
    const since = days[days.length - 1]!.day;
    const usage = new Map<string, { uses: number; accounts: number }>();
    const ids = rows.flatMap((r) => (r.id === null ? [] : [r.id]));
    if (ids.length > 0) {
      const used = await this.db.all<{ tagId: number; day: number; uses: number; accounts: number }>(this.q.usage(ids.length), [...ids, since]);
      for (const u of used) usage.set(`${u.tagId}:${u.day}`, u);
    }
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      history: days.map((d) => ({ day: d.day, uses: usage.get(`${r.id}:${d.day}`)?.uses ?? 0, accounts: usage.get(`${r.id}:${d.day}`)?.accounts ?? 0 })),
    }));
  }

  /** A URL of another server: the account or status it names, fetched and stored (Mastodon's ResolveURLService). */
  private async resolveRemoteUrl(query: string, viewerId: number | null, type: SearchType | undefined, results: SearchResults) {
    if (!this.fetcher || viewerId === null) return;
    const found = await this.fetchAndStore(this.fetcher, query, AbortSignal.timeout(RESOLVE_TIMEOUT_MS)).catch(() => null);
    if (found?.account && (!type || type === "accounts")) results.accounts = [found.account];
    const status = found?.status;
    if (status && (!type || type === "statuses") && status.reblogOfId === null && (await this.reader.visible([status], viewerId)).length === 1) results.statuses = [status];
  }

  /** What a URL of another server names, stored: an actor as an account, a Note as a status. */
  private async fetchAndStore(fetcher: RemoteFetcher, url: string, signal: AbortSignal): Promise<{ account?: AccountRow | null; status?: StatusRow | null } | null> {
    const found = await fetcher.object(url, signal);
    if (!found) return null;
    return "actor" in found ? { account: await this.remote.upsert(found.actor) } : { status: await this.notes.store(found.note, { fetched: true }) };
  }

  /** A URL of this server naming an account or a status the viewer may see. */
  private async resolveUrl(query: string, viewerId: number | null, type: SearchType | undefined, results: SearchResults) {
    const path = query.slice(this.publicUrl.length).replace(/[?#].*$/, "").replace(/\/$/, "");
    const status = /^\/(?:@([A-Za-z0-9_]+)|users\/([A-Za-z0-9_]+)\/statuses)\/(\d{1,19})$/.exec(path);
    if (status) {
      if (type && type !== "statuses") return;
      const id = Number(status[3]);
      const row = Number.isSafeInteger(id) ? await this.reader.findRow(id) : undefined;
      if (row && row.reblogOfId === null && (await this.reader.visible([row], viewerId)).length === 1) results.statuses = [row];
      return;
    }
    const account = /^\/(?:@|users\/)([A-Za-z0-9_]+)$/.exec(path);
    if (account) {
      if (type && type !== "accounts") return;
      const [row] = await this.db.values(this.q.byUsername, [(account[1] as string).toLowerCase()]);
      if (row) results.accounts = [ACCOUNT.map(row)];
    }
  }
}
