const LIMIT = 5_000;
import type { DatabasePort } from "../../db/port.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { StatusParts } from "../../models/views.ts";

interface Entry {
  parts: StatusParts;
  accountId: number;
  accountEpoch: number;
  /** On PostgreSQL, what of its row the rendering showed that changes in place (see `versionOf`). */
  version?: string;
}

/**
 * The columns of a status row that change without a new row or an account change: its counters,
 * its edits (edited_at moves with every column an edit sets), its quote policy (changed without
 * an edit), its parent (a reply stored before its parent is joined to it when the parent comes)
 * and its link card (set once its page is read; its JSON's length stands for it: a card is set
 * once and then only taken away). A rendering kept from an older row than the one a request has
 * just read is stale: on PostgreSQL a request that read the row before another transaction's
 * COMMIT can keep its rendering after the invalidations that commit made (see RenderCache's
 * `commits`). Every UPDATE of statuses in src/ is checked against these by
 * test/statuses/render-cache-commit.test.ts.
 */
const versionOf = (row: StatusRow) => `${row.repliesCount} ${row.reblogsCount} ${row.favouritesCount} ${row.quotesCount} ${row.editedAt} ${row.card?.length ?? -1} ${row.quoteApproval} ${row.inReplyToId}`;

/** What made entries stale, as the serving threads (src/threads) replay it on their own caches. */
export type RenderCacheChange = { status: number } | { account: number } | "clear";

/** A change as a key of the `render` cache kind across processes (src/infra/pg-generations.ts): `s<id>`, `a<id>` or `*`. */
export function renderKey(change: RenderCacheChange): string {
  return change === "clear" ? "*" : "status" in change ? `s${change.status}` : `a${change.account}`;
}

/** Another process's changes (renderKey's keys), applied to this process's cache. */
export function applyRenderKeys(cache: RenderCache, keys: string[]): void {
  for (const key of keys) {
    if (key[0] === "s") cache.invalidateStatus(Number(key.slice(1)));
    else if (key[0] === "a") cache.touchAccount(Number(key.slice(1)));
    else cache.clear();
  }
}

/**
 * Rendered statuses, the hottest reads of a server. An entry is dropped when its status
 * changes (counters, deletion, media finishing processing) and is ignored once its
 * author's account changed (profile, follow or status counts), which every writer of those
 * announces with touchAccount(). Statuses with polls are never cached, since `expired`
 * moves with time and the votes are per viewer.
 */
export class RenderCache {
  private entries = new Map<number, Entry>();
  /**
   * Status rows as read from the database, for pages that read many by id (home and list
   * feeds): reading 20 rows of 29 columns was the largest cost of a home page. Kept and
   * dropped exactly as the rendered parts are (every change to a status invalidates it, its
   * author's account changes forget it), so a row is never staler than its rendering.
   */
  private rows = new Map<number, { row: StatusRow; accountEpoch: number }>();
  private accountEpochs = new Map<number, number>();
  /**
   * Moves with every invalidation of any kind: what is built from many rendered statuses and
   * accounts at once (a public status page with its thread) is fresh while it has not moved.
   */
  generation = 0;

  /**
   * `told`: hears of every invalidation (the main thread passes them on to the serving threads).
   * `commits`: on PostgreSQL, the port, so that an invalidation made inside a transaction is
   * made again once it commits. Reads there do not wait for a transaction (READ COMMITTED, on
   * other connections): a request that read the row between the invalidation and the COMMIT
   * would otherwise keep its rendering of the old row until the next change. On SQLite a port
   * transaction holds the connection, so no read lands in between: none is given.
   */
  constructor(
    private told?: (change: RenderCacheChange) => void,
    private commits?: Pick<DatabasePort, "inTransaction" | "afterCommit">,
  ) {}

  /** Drops what `forget` drops now and, inside a transaction (see `commits`), again after its commit. */
  private dropped(forget: () => void) {
    forget();
    if (this.commits?.inTransaction) this.commits.afterCommit(forget);
  }

  /** The kept rendering; none if `row` (the status's row as just read) is newer than what it shows. */
  get(statusId: number, row?: StatusRow): StatusParts | undefined {
    const entry = this.entries.get(statusId);
    if (!entry) return undefined;
    if ((this.accountEpochs.get(entry.accountId) ?? 0) !== entry.accountEpoch || (row && entry.version !== undefined && entry.version !== versionOf(row))) {
      this.entries.delete(statusId);
      return undefined;
    }
    return entry.parts;
  }

  /**
   * Taken before the reads a rendering or a kept row is made of, and given back to `set` or
   * `keepRow`: on PostgreSQL (see `commits`) what was read while any invalidation happened
   * (another transaction's commit, here or in another process) is not kept, since it may show
   * what that commit changed as it was before. It closes what the row check (`versionOf`)
   * cannot see: a quote's state, media finishing, anything read from other tables. Undefined on
   * SQLite, where no read lands between a write and its commit.
   */
  stamp(): number | undefined {
    return this.commits ? this.generation : undefined;
  }

  /** Whether what was read since `stamp` may be kept. */
  private fresh(stamp: number | undefined) {
    return stamp === undefined || stamp === this.generation;
  }

  /** Keeps a rendering; `row`, the status's row it was rendered from, if known; `stamp`, taken before the reads it was made of. */
  set(statusId: number, accountId: number, parts: StatusParts, row?: StatusRow, stamp?: number) {
    if (!this.fresh(stamp)) return;
    if (this.entries.size >= LIMIT) this.entries.delete(this.entries.keys().next().value as number);
    this.entries.set(statusId, { parts, accountId, accountEpoch: this.accountEpochs.get(accountId) ?? 0, version: this.commits && row ? versionOf(row) : undefined });
  }

  /** The status's row as kept (see `rows`), if its author's account has not changed since. */
  row(statusId: number): StatusRow | undefined {
    const kept = this.rows.get(statusId);
    if (!kept) return undefined;
    if ((this.accountEpochs.get(kept.row.accountId) ?? 0) !== kept.accountEpoch) {
      this.rows.delete(statusId);
      return undefined;
    }
    return kept.row;
  }

  /** `row` as just read from the database (never one built or changed in memory); `stamp`, taken before it was read. */
  keepRow(row: StatusRow, stamp?: number) {
    if (!this.fresh(stamp)) return;
    if (this.rows.size >= LIMIT) this.rows.delete(this.rows.keys().next().value as number);
    this.rows.set(row.id, { row, accountEpoch: this.accountEpochs.get(row.accountId) ?? 0 });
  }

  invalidateStatus(statusId: number) {
    this.told?.({ status: statusId });
    this.dropped(() => {
      this.generation++;
      this.entries.delete(statusId);
      this.rows.delete(statusId);
    });
  }

  /** Everything goes (another process changed the database: see server.ts). */
  clear() {
    this.told?.("clear");
    this.dropped(() => {
      this.generation++;
      this.entries.clear();
      this.rows.clear();
    });
  }

  touchAccount(accountId: number) {
    this.told?.({ account: accountId });
    this.dropped(() => {
      this.generation++;
      this.accountEpochs.set(accountId, (this.accountEpochs.get(accountId) ?? 0) + 1);
    });
  }
}
