import type { Database } from "bun:sqlite";
import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accounts, applications, pollVotes, polls, statuses, type StatusRow } from "../../db/schema.ts";
import { notFound } from "../../errors.ts";
import { inJsonList, jsonList } from "../../db/prepared.ts";
import { rowReader } from "../../db/rows.ts";
import type { StatusPolicy } from "./visibility.ts";
import { withMovedTo } from "../accounts/account-views.ts";
import type { FlagSets, MediaView, PollView, StatusView } from "../../models/views.ts";
import type { QuoteReads } from "../quotes/reads.ts";
import { approvalOf, type QuotePolicy } from "../quotes/policy.ts";

export type MediaLoader = (statusIds: number[]) => Map<number, MediaView[]>;

/** What a page of statuses shows of quotes: their quotes for the viewer, and who may quote them. */
export interface QuoteSource {
  reads: QuoteReads;
  policy: Pick<QuotePolicy, "currentUser">;
}

const APP_CACHE_LIMIT = 1000;
const STATUS = rowReader(statuses);
const ACCOUNT = rowReader(accounts);

/**
 * Loads statuses for rendering in a fixed number of queries per page, whatever its size:
 * the rows (and boosted originals), their authors, polls with the viewer's votes, media,
 * and the viewer's flags in one UNION query.
 */
export class StatusReader {
  /** Application names never change after registration. */
  private appCache = new Map<number, { name: string; website: string | null }>();

  private q;
  private sqlite;
  private flagQueries = new Map<number, ReturnType<typeof flagsQuery>>();

  constructor(
    db: Db,
    private clock: Clock,
    private policy: StatusPolicy,
    private media: MediaLoader,
    private quotes: QuoteSource,
  ) {
    const sqlite = db.$client;
    this.sqlite = sqlite;
    this.q = {
      status: sqlite.query<unknown[], [number]>(`SELECT ${STATUS.columns} ${STATUS.from} WHERE id = ?`),
      statuses: sqlite.query<unknown[], [string]>(`SELECT ${STATUS.columns} ${STATUS.from} WHERE id IN (SELECT value FROM json_each(?))`),
      accounts: sqlite.query<unknown[], [string]>(`SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE id IN (SELECT value FROM json_each(?))`),
      apps: db
        .select({ id: applications.id, name: applications.name, website: applications.website })
        .from(applications)
        .where(inJsonList(applications.id, "ids"))
        .prepare(),
      polls: db.select().from(polls).where(inJsonList(polls.statusId, "ids")).prepare(),
      votes: db
        .select({ pollId: pollVotes.pollId, choice: pollVotes.choice })
        .from(pollVotes)
        .where(and(eq(pollVotes.accountId, sql.placeholder("account")), inJsonList(pollVotes.pollId, "ids")))
        .orderBy(pollVotes.id)
        .prepare(),
    };
  }

  /** Authors, and the accounts moved ones moved to. */
  private accountsByIds = (ids: number[]) => this.q.accounts.values(jsonList(ids)).map(ACCOUNT.map);

  findRow(id: number): StatusRow | undefined {
    const values = this.q.status.values(id)[0];
    return values ? STATUS.map(values) : undefined;
  }

  rowsByIds(ids: number[]): StatusRow[] {
    if (ids.length === 0) return [];
    if (ids.length === 1) {
      const row = this.findRow(ids[0] as number);
      return row ? [row] : [];
    }
    return this.q.statuses.values(jsonList(ids)).map(STATUS.map);
  }

  /** The status if the viewer may see it (a boost needs its original visible too), else 404. */
  visibleRow(id: number | null, viewerId: number | null): StatusRow {
    const row = id === null ? undefined : this.findRow(id);
    if (!row || !this.policy.canSee(row, viewerId)) throw notFound();
    if (row.reblogOfId !== null) {
      const original = this.findRow(row.reblogOfId);
      if (!original || !this.policy.canSee(original, viewerId)) throw notFound();
    }
    return row;
  }

  /**
   * Keeps the rows the viewer may see, boosts only when their original is visible too; order kept.
   * `rowsOf`: how the originals are read (a feed takes the render cache's kept rows).
   */
  visible(rows: StatusRow[], viewerId: number | null, rowsOf: (ids: number[]) => StatusRow[] = (ids) => this.rowsByIds(ids)): StatusRow[] {
    const boosted = [...new Set(rows.filter((r) => r.reblogOfId !== null).map((r) => r.reblogOfId as number))];
    const originals = boosted.length === 0 ? [] : rowsOf(boosted);
    const visibleOriginals = new Set(this.policy.visible(originals, viewerId).map((r) => r.id));
    return this.policy.visible(rows, viewerId).filter((r) => r.reblogOfId === null || visibleOriginals.has(r.reblogOfId));
  }

  view(row: StatusRow, viewerId: number | null): StatusView {
    return this.views([row], viewerId)[0] as StatusView;
  }

  /**
   * `nested`: the statuses are quoted ones inside a quote post (Mastodon's ShallowStatusSerializer):
   * their own quotes name what they quote without showing it.
   */
  views(rows: StatusRow[], viewerId: number | null, nested = false): StatusView[] {
    if (rows.length === 0) return [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = rows.filter((r) => r.reblogOfId !== null && !byId.has(r.reblogOfId)).map((r) => r.reblogOfId as number);
    for (const r of this.rowsByIds([...new Set(missing)])) byId.set(r.id, r);
    const all = [...byId.values()];

    const accountIds = [...new Set(all.map((r) => r.accountId))];
    const accountRows = withMovedTo(this.accountsByIds(accountIds), this.accountsByIds);
    const accountsById = new Map(accountRows.map((a) => [a.id, a]));
    this.loadApps(all);
    const pollsByStatus = this.loadPolls(all, viewerId);
    const mediaByStatus = all.some((r) => r.hasMedia) ? this.media(all.filter((r) => r.hasMedia).map((r) => r.id)) : new Map();
    const flags = viewerId === null ? null : this.viewerFlags(all, viewerId);
    const quotes = this.quotes.reads.forStatuses(all, viewerId, (ids) => this.rowsByIds(ids));
    // The statuses quoted, shown one level down: rendered in one more batch, their quotes shallow.
    const shownQuoted = nested ? [] : [...new Map([...quotes.values()].flatMap((q) => (q.quoted ? [[q.quoted.id, q.quoted] as const] : []))).values()];
    const quotedViews = new Map(this.views(shownQuoted, viewerId, true).map((v) => [v.row.id, v]));
    const currentUser = this.quotes.policy.currentUser(all.filter((r) => r.reblogOfId === null), viewerId);

    const build = (row: StatusRow): StatusView | null => {
      const account = accountsById.get(row.accountId);
      if (!account) return null;
      const reblogRow = row.reblogOfId !== null ? byId.get(row.reblogOfId) : undefined;
      const reblog = reblogRow ? build(reblogRow) : null;
      if (row.reblogOfId !== null && !reblog) return null;
      // A boost shows its original's flags, as Mastodon does for single statuses.
      const subject = reblogRow ?? row;
      const quote = quotes.get(row.id);
      return {
        row,
        account,
        application: row.applicationId !== null ? (this.appCache.get(row.applicationId) ?? null) : null,
        poll: pollsByStatus.get(row.id) ?? null,
        media: mediaByStatus.get(row.id) ?? [],
        reblog,
        viewer: flags
          ? {
              favourited: flags.favourited.has(subject.id),
              reblogged: flags.reblogged.has(subject.id),
              muted: flags.muted.has(subject.conversationId),
              bookmarked: flags.bookmarked.has(subject.id),
              pinned: row.reblogOfId === null && flags.pinned.has(row.id),
            }
          : null,
        quote: quote ? { state: quote.state, quotedStatusId: quote.quoted?.id ?? null, status: quote.quoted ? (quotedViews.get(quote.quoted.id) ?? null) : null } : null,
        // A boost tells its original's policy (Mastodon's object.proper).
        quoteApproval: { ...approvalOf(subject), currentUser: currentUser.get(subject.id) ?? "denied" },
      };
    };
    return rows.map(build).filter((v): v is StatusView => v !== null);
  }

  private loadApps(rows: StatusRow[]) {
    const wanted = [...new Set(rows.map((r) => r.applicationId).filter((id): id is number => id !== null && !this.appCache.has(id)))];
    if (wanted.length === 0) return;
    if (this.appCache.size > APP_CACHE_LIMIT) this.appCache.clear();
    for (const app of this.q.apps.all({ ids: jsonList(wanted) })) {
      this.appCache.set(app.id, { name: app.name, website: app.website || null });
    }
  }

  private loadPolls(rows: StatusRow[], viewerId: number | null): Map<number, PollView> {
    const ids = rows.filter((r) => r.hasPoll).map((r) => r.id);
    const out = new Map<number, PollView>();
    if (ids.length === 0) return out;
    const pollRows = this.q.polls.all({ ids: jsonList(ids) });
    const votes = new Map<number, number[]>();
    if (viewerId !== null && pollRows.length > 0) {
      for (const v of this.q.votes.all({ account: viewerId, ids: jsonList(pollRows.map((p) => p.id)) })) {
        (votes.get(v.pollId) ?? votes.set(v.pollId, []).get(v.pollId)!).push(v.choice);
      }
    }
    const now = this.clock.now();
    for (const p of pollRows) {
      out.set(p.statusId, { row: p, ownVotes: viewerId === null ? null : (votes.get(p.id) ?? []), expired: p.expiresAt <= now });
    }
    return out;
  }

  /** `current_user` of each status's quote approval for the viewer (a boost: its original's). */
  quoteCurrentUser(rows: StatusRow[], viewerId: number | null): Map<number, string> {
    return this.quotes.policy.currentUser(rows, viewerId);
  }

  /** The viewer's favourites, bookmarks, boosts, pins (by status id) and muted threads (by conversation id) among `rows`. */
  viewerFlags(rows: StatusRow[], viewerId: number): FlagSets {
    const flags: FlagSets = { favourited: new Set(), bookmarked: new Set(), reblogged: new Set(), pinned: new Set(), muted: new Set() };
    if (rows.length === 0) return flags;
    const ids = [...new Set(rows.map((r) => r.id))];
    const conversations = [...new Set(rows.map((r) => r.conversationId))];
    // Lists padded to a few fixed sizes (repeating the last id), so each size is one
    // statement prepared once: bound parameters cost a fraction of json_each here.
    const size = bucket(Math.max(ids.length, conversations.length));
    let query = this.flagQueries.get(size);
    if (!query) this.flagQueries.set(size, (query = flagsQuery(this.sqlite, size)));
    const found = query.all(viewerId, ...pad(ids, size), ...pad(conversations, size));
    for (const f of found) {
      if (f.k === "f") flags.favourited.add(f.id);
      else if (f.k === "b") flags.bookmarked.add(f.id);
      else if (f.k === "r") flags.reblogged.add(f.id);
      else if (f.k === "p") flags.pinned.add(f.id);
      else flags.muted.add(f.id);
    }
    return flags;
  }
}

// The pages' own sizes among them (20 statuses a page, 40 notifications): padding 20 ids to 32
// cost a third more of the flags query, the dearest statement of a signed-in page.
const BUCKETS = [1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 128];

function bucket(n: number): number {
  return BUCKETS.find((b) => b >= n) ?? Math.ceil(n / 128) * 128;
}

function pad(values: number[], size: number): number[] {
  const out = values.slice(0, size);
  while (out.length < size) out.push(values[values.length - 1] as number);
  return out;
}

/** The viewer's favourites, bookmarks, boosts, pins and thread mutes among `size` statuses and conversations. */
function flagsQuery(sqlite: Database, size: number) {
  const ids = Array.from({ length: size }, (_, i) => `?${i + 2}`).join(",");
  const conversations = Array.from({ length: size }, (_, i) => `?${i + 2 + size}`).join(",");
  return sqlite.query<{ k: string; id: number }, number[]>(`
    SELECT 'f' AS k, status_id AS id FROM favourites WHERE account_id = ?1 AND status_id IN (${ids})
    UNION ALL SELECT 'b', status_id FROM bookmarks WHERE account_id = ?1 AND status_id IN (${ids})
    UNION ALL SELECT 'r', reblog_of_id FROM statuses WHERE account_id = ?1 AND reblog_of_id IN (${ids})
    UNION ALL SELECT 'p', status_id FROM status_pins WHERE account_id = ?1 AND status_id IN (${ids})
    UNION ALL SELECT 'm', conversation_id FROM conversation_mutes WHERE account_id = ?1 AND conversation_id IN (${conversations})`);
}
