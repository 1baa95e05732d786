import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { accounts, polls, statuses, type PollRow, type StatusRow } from "../../db/schema.ts";
import { notFound } from "../../errors.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import { rowReader } from "../../db/rows.ts";
import type { StatusPolicy } from "./visibility.ts";
import { withMovedTo } from "../accounts/account-views.ts";
import type { FlagSets, MediaView, PollView, StatusView } from "../../models/views.ts";
import type { QuoteReads } from "../quotes/reads.ts";
import { approvalOf, type QuotePolicy } from "../quotes/policy.ts";

export type MediaLoader = (statusIds: number[]) => Promise<Map<number, MediaView[]>>;

/** What a page of statuses shows of quotes: their quotes for the viewer, and who may quote them. */
export interface QuoteSource {
  reads: QuoteReads;
  policy: Pick<QuotePolicy, "currentUser">;
}

const APP_CACHE_LIMIT = 1000;
const STATUS = rowReader(statuses);
const ACCOUNT = rowReader(accounts);
const POLL = rowReader(polls);

const STATUS_BY_ID = `SELECT ${STATUS.columns} ${STATUS.from} WHERE id = ?`;
// Lists of ids padded to a few sizes (db/prepared.ts): each size is one statement prepared once.
const statusesText = (n: number) => `SELECT ${STATUS.columns} ${STATUS.from} WHERE id IN (${marks(n)})`;
const accountsText = (n: number) => `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE id IN (${marks(n)})`;
const appsText = (n: number) => `SELECT id, name, website FROM applications WHERE id IN (${marks(n)})`;
const pollsText = (n: number) => `SELECT ${POLL.columns} ${POLL.from} WHERE status_id IN (${marks(n)})`;
const votesText = (n: number) => `SELECT poll_id, choice FROM poll_votes WHERE account_id = ? AND poll_id IN (${marks(n)}) ORDER BY id`;

/** The viewer's favourites, boosts, bookmarks, pins (by status) and thread mutes (by conversation) among `size` of each. */
const flagsText = (size: number) => {
  const ids = marks(size);
  return `SELECT 'f' AS k, status_id AS id FROM favourites WHERE account_id = ? AND status_id IN (${ids})
    UNION ALL SELECT 'b', status_id FROM bookmarks WHERE account_id = ? AND status_id IN (${ids})
    UNION ALL SELECT 'r', reblog_of_id FROM statuses WHERE account_id = ? AND reblog_of_id IN (${ids})
    UNION ALL SELECT 'p', status_id FROM status_pins WHERE account_id = ? AND status_id IN (${ids})
    UNION ALL SELECT 'm', conversation_id FROM conversation_mutes WHERE account_id = ? AND conversation_id IN (${marks(size)})`;
};

/** Texts by padded size, built once each. */
function bySize(build: (n: number) => string): (n: number) => string {
  const texts = new Map<number, string>();
  return (n) => texts.get(n) ?? texts.set(n, build(n)).get(n)!;
}

/**
 * Loads statuses for rendering in a fixed number of queries per page, whatever its size:
 * the rows (and boosted originals), their authors, polls with the viewer's votes, media,
 * and the viewer's flags in one UNION query. Over the database port: each statement's text is
 * one of a few (lists padded to fixed sizes), so the driver prepares each once.
 */
export class StatusReader {
  /** Application names never change after registration. */
  private appCache = new Map<number, { name: string; website: string | null }>();
  private texts = { statuses: bySize(statusesText), accounts: bySize(accountsText), apps: bySize(appsText), polls: bySize(pollsText), votes: bySize(votesText), flags: bySize(flagsText) };
  constructor(
    private port: DatabasePort,
    private clock: Clock,
    private policy: StatusPolicy,
    private media: MediaLoader,
    private quotes: QuoteSource,
  ) {}

  /** Rows by id, in one padded statement. */
  private async byIds<T>(text: (n: number) => string, ids: readonly number[], map: (r: unknown[]) => T, before: unknown[] = []): Promise<T[]> {
    const size = paddedSize(ids.length);
    return (await this.port.values(text(size), [...before, ...padded(ids, size)])).map(map);
  }

  /** Authors, and the accounts moved ones moved to (a second read only when one moved). */
  private async accountsWithMoves(ids: number[]) {
    const rows = await this.byIds(this.texts.accounts, ids, ACCOUNT.map);
    const moved = rows.flatMap((a) => (a.movedToAccountId === null ? [] : [a.movedToAccountId]));
    if (moved.length === 0) return withMovedTo(rows, () => []);
    const targets = await this.byIds(this.texts.accounts, [...new Set(moved)], ACCOUNT.map);
    return withMovedTo(rows, () => targets);
  }

  async findRow(id: number): Promise<StatusRow | undefined> {
    const values = (await this.port.values(STATUS_BY_ID, [id]))[0];
    return values ? STATUS.map(values) : undefined;
  }

  async rowsByIds(ids: number[]): Promise<StatusRow[]> {
    if (ids.length === 0) return [];
    if (ids.length === 1) {
      const row = await this.findRow(ids[0] as number);
      return row ? [row] : [];
    }
    return this.byIds(this.texts.statuses, ids, STATUS.map);
  }

  /** The status if the viewer may see it (a boost needs its original visible too), else 404. */
  async visibleRow(id: number | null, viewerId: number | null): Promise<StatusRow> {
    const row = id === null ? undefined : await this.findRow(id);
    if (!row || !(await this.policy.canSee(row, viewerId))) throw notFound();
    if (row.reblogOfId !== null) {
      const original = await this.findRow(row.reblogOfId);
      if (!original || !(await this.policy.canSee(original, viewerId))) throw notFound();
    }
    return row;
  }

  /**
   * Keeps the rows the viewer may see, boosts only when their original is visible too; order kept.
   * `rowsOf`: how the originals are read (a feed takes the render cache's kept rows).
   */
  async visible(rows: StatusRow[], viewerId: number | null, rowsOf: (ids: number[]) => Promise<StatusRow[]> | StatusRow[] = (ids) => this.rowsByIds(ids)): Promise<StatusRow[]> {
    const boosted = [...new Set(rows.filter((r) => r.reblogOfId !== null).map((r) => r.reblogOfId as number))];
    const originals = boosted.length === 0 ? [] : await rowsOf(boosted);
    // One visibility decision for the page and its originals together.
    const shown = new Set((await this.policy.visible(originals.length === 0 ? rows : [...rows, ...originals], viewerId)).map((r) => r.id));
    const visibleOriginals = new Set(originals.filter((r) => shown.has(r.id)).map((r) => r.id));
    return rows.filter((r) => shown.has(r.id) && (r.reblogOfId === null || visibleOriginals.has(r.reblogOfId)));
  }

  async view(row: StatusRow, viewerId: number | null): Promise<StatusView> {
    return (await this.views([row], viewerId))[0] as StatusView;
  }

  /**
   * `nested`: the statuses are quoted ones inside a quote post (Mastodon's ShallowStatusSerializer):
   * their own quotes name what they quote without showing it.
   */
  async views(rows: StatusRow[], viewerId: number | null, nested = false): Promise<StatusView[]> {
    if (rows.length === 0) return [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = rows.filter((r) => r.reblogOfId !== null && !byId.has(r.reblogOfId)).map((r) => r.reblogOfId as number);
    if (missing.length > 0) for (const r of await this.rowsByIds([...new Set(missing)])) byId.set(r.id, r);
    const all = [...byId.values()];

    const accountIds = [...new Set(all.map((r) => r.accountId))];
    const withMedia = all.filter((r) => r.hasMedia).map((r) => r.id);
    // Independent reads, started together: on SQLite each runs at once, and the page waits once.
    const [accountRows, , pollsByStatus, mediaByStatus, flags, quotes, currentUser] = await Promise.all([
      this.accountsWithMoves(accountIds),
      this.loadApps(all),
      this.loadPolls(all, viewerId),
      withMedia.length > 0 ? this.media(withMedia) : new Map<number, MediaView[]>(),
      viewerId === null ? null : this.viewerFlags(all, viewerId),
      this.quotes.reads.forStatuses(all, viewerId, (ids) => this.rowsByIds(ids)),
      this.quotes.policy.currentUser(all.filter((r) => r.reblogOfId === null), viewerId),
    ]);
    const accountsById = new Map(accountRows.map((a) => [a.id, a]));
    // The statuses quoted, shown one level down: rendered in one more batch, their quotes shallow.
    const shownQuoted = nested ? [] : [...new Map([...quotes.values()].flatMap((q) => (q.quoted ? [[q.quoted.id, q.quoted] as const] : []))).values()];
    const quotedViews = new Map((await this.views(shownQuoted, viewerId, true)).map((v) => [v.row.id, v]));

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

  private async loadApps(rows: StatusRow[]): Promise<void> {
    const wanted = [...new Set(rows.map((r) => r.applicationId).filter((id): id is number => id !== null && !this.appCache.has(id)))];
    if (wanted.length === 0) return;
    const found = await this.byIds(this.texts.apps, wanted, (r) => r);
    if (this.appCache.size > APP_CACHE_LIMIT) this.appCache.clear();
    for (const [id, name, website] of found) this.appCache.set(id as number, { name: name as string, website: (website as string | null) || null });
  }

  private async loadPolls(rows: StatusRow[], viewerId: number | null): Promise<Map<number, PollView>> {
    const ids = rows.filter((r) => r.hasPoll).map((r) => r.id);
    const out = new Map<number, PollView>();
    if (ids.length === 0) return out;
    const pollRows: PollRow[] = await this.byIds(this.texts.polls, ids, POLL.map);
    const votes = new Map<number, number[]>();
    if (viewerId !== null && pollRows.length > 0) {
      for (const [pollId, choice] of await this.byIds(this.texts.votes, pollRows.map((p) => p.id), (r) => r as [number, number], [viewerId])) {
        (votes.get(pollId) ?? votes.set(pollId, []).get(pollId)!).push(choice);
      }
    }
    const now = this.clock.now();
    for (const p of pollRows) {
      out.set(p.statusId, { row: p, ownVotes: viewerId === null ? null : (votes.get(p.id) ?? []), expired: p.expiresAt <= now });
    }
    return out;
  }

  /** `current_user` of each status's quote approval for the viewer (a boost: its original's). */
  quoteCurrentUser(rows: StatusRow[], viewerId: number | null): Promise<Map<number, string>> {
    return this.quotes.policy.currentUser(rows, viewerId);
  }

  /** The viewer's favourites, bookmarks, boosts, pins (by status id) and muted threads (by conversation id) among `rows`. */
  async viewerFlags(rows: StatusRow[], viewerId: number): Promise<FlagSets> {
    const flags: FlagSets = { favourited: new Set(), bookmarked: new Set(), reblogged: new Set(), pinned: new Set(), muted: new Set() };
    if (rows.length === 0) return flags;
    const ids = [...new Set(rows.map((r) => r.id))];
    const conversations = [...new Set(rows.map((r) => r.conversationId))];
    const size = paddedSize(Math.max(ids.length, conversations.length));
    const list = padded(ids, size);
    const found = await this.port.values(this.texts.flags(size), [viewerId, ...list, viewerId, ...list, viewerId, ...list, viewerId, ...list, viewerId, ...padded(conversations, size)]);
    for (const [k, id] of found as [string, number][]) {
      if (k === "f") flags.favourited.add(id);
      else if (k === "b") flags.bookmarked.add(id);
      else if (k === "r") flags.reblogged.add(id);
      else if (k === "p") flags.pinned.add(id);
      else flags.muted.add(id);
    }
    return flags;
  }
}
