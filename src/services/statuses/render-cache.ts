const LIMIT = 5_000;

interface Entry {
  json: string;
  accountId: number;
  accountEpoch: number;
}

/**
 * The rendered JSON of statuses as an anonymous reader sees them: the hottest read of a
 * public server. An entry is dropped when its status changes (counters, deletion, media
 * finishing processing) and is ignored once its author's account changed (profile, follow
 * or status counts), which every writer of those announces with touchAccount(). Polls are
 * never cached, since `expired` moves with time.
 */
export class RenderCache {
  private entries = new Map<number, Entry>();
  private accountEpochs = new Map<number, number>();

  get(statusId: number): string | undefined {
    const entry = this.entries.get(statusId);
    if (!entry) return undefined;
    if ((this.accountEpochs.get(entry.accountId) ?? 0) !== entry.accountEpoch) {
      this.entries.delete(statusId);
      return undefined;
    }
    return entry.json;
  }

  set(statusId: number, accountId: number, json: string) {
    if (this.entries.size >= LIMIT) this.entries.delete(this.entries.keys().next().value as number);
    this.entries.set(statusId, { json, accountId, accountEpoch: this.accountEpochs.get(accountId) ?? 0 });
  }

  invalidateStatus(statusId: number) {
    this.entries.delete(statusId);
  }

  touchAccount(accountId: number) {
    this.accountEpochs.set(accountId, (this.accountEpochs.get(accountId) ?? 0) + 1);
  }
}
