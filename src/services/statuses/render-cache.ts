const LIMIT = 5_000;
import type { StatusParts } from "../../models/views.ts";

interface Entry {
  parts: StatusParts;
  accountId: number;
  accountEpoch: number;
}

/** What made entries stale, as the serving threads (src/threads) replay it on their own caches. */
export type RenderCacheChange = { status: number } | { account: number } | "clear";

/**
 * Rendered statuses, the hottest reads of a server. An entry is dropped when its status
 * changes (counters, deletion, media finishing processing) and is ignored once its
 * author's account changed (profile, follow or status counts), which every writer of those
 * announces with touchAccount(). Statuses with polls are never cached, since `expired`
 * moves with time and the votes are per viewer.
 */
export class RenderCache {
  private entries = new Map<number, Entry>();
  private accountEpochs = new Map<number, number>();
  /**
   * Moves with every invalidation of any kind: what is built from many rendered statuses and
   * accounts at once (a public status page with its thread) is fresh while it has not moved.
   */
  generation = 0;

  /** `told`: hears of every invalidation (the main thread passes them on to the serving threads). */
  constructor(private told?: (change: RenderCacheChange) => void) {}

  get(statusId: number): StatusParts | undefined {
    const entry = this.entries.get(statusId);
    if (!entry) return undefined;
    if ((this.accountEpochs.get(entry.accountId) ?? 0) !== entry.accountEpoch) {
      this.entries.delete(statusId);
      return undefined;
    }
    return entry.parts;
  }

  set(statusId: number, accountId: number, parts: StatusParts) {
    if (this.entries.size >= LIMIT) this.entries.delete(this.entries.keys().next().value as number);
    this.entries.set(statusId, { parts, accountId, accountEpoch: this.accountEpochs.get(accountId) ?? 0 });
  }

  invalidateStatus(statusId: number) {
    this.told?.({ status: statusId });
    this.generation++;
    this.entries.delete(statusId);
  }

  /** Everything goes (another process changed the database: see server.ts). */
  clear() {
    this.told?.("clear");
    this.generation++;
    this.entries.clear();
  }

  touchAccount(accountId: number) {
    this.told?.({ account: accountId });
    this.generation++;
    this.accountEpochs.set(accountId, (this.accountEpochs.get(accountId) ?? 0) + 1);
  }
}
