import type { Database } from "bun:sqlite";
import type { StatusRow } from "../../db/schema.ts";
import type { RenderCache } from "./render-cache.ts";

/**
 * The denormalised counters (statuses per account, replies, boosts and favourites per
 * status), as prepared statements: every post, boost and favourite moves one of them.
 * Never below zero. Direct statuses do not count toward an account's statuses, as in Mastodon.
 */
export class Counters {
  private q;

  constructor(
    sqlite: Database,
    private cache: RenderCache,
  ) {
    this.q = {
      posted: sqlite.query("UPDATE accounts SET statuses_count = statuses_count + 1, last_status_at = $now WHERE id = $id"),
      imported: sqlite.query("UPDATE accounts SET statuses_count = statuses_count + 1, last_status_at = max(coalesce(last_status_at, 0), $at) WHERE id = $id"),
      unposted: sqlite.query("UPDATE accounts SET statuses_count = max(0, statuses_count - 1) WHERE id = $id"),
      replies: sqlite.query("UPDATE statuses SET replies_count = max(0, replies_count + $delta) WHERE id = $id"),
      reblogs: sqlite.query("UPDATE statuses SET reblogs_count = max(0, reblogs_count + $delta) WHERE id = $id"),
      favourites: sqlite.query("UPDATE statuses SET favourites_count = max(0, favourites_count + $delta) WHERE id = $id"),
      quotes: sqlite.query("UPDATE statuses SET quotes_count = max(0, quotes_count + $delta) WHERE id = $id"),
    };
  }

  /** A new status or boost: its author's statuses, its original's boosts, its parent's replies. */
  statusAdded(row: StatusRow) {
    if (row.reblogOfId !== null) this.reblogs(row.reblogOfId, 1);
    this.authorPosted(row.accountId, row.visibility, row.createdAt);
    if (row.inReplyToId !== null) this.reply(row.inReplyToId, row.visibility, 1);
  }

  /**
   * A status imported from an archive: counted as posted, and as a reply to its parent; the
   * account's last status date moves only forward (an old post is not its latest).
   */
  statusImported(row: StatusRow) {
    this.q.imported.run({ id: row.accountId, at: row.createdAt });
    this.cache.touchAccount(row.accountId);
    if (row.inReplyToId !== null) this.reply(row.inReplyToId, row.visibility, 1);
  }

  /** A status or boost deleted: the same counters back (a boost's original deleted with it has none left to move). */
  statusRemoved(row: StatusRow) {
    this.authorUnposted(row.accountId, row.visibility);
    if (row.reblogOfId !== null) this.reblogs(row.reblogOfId, -1);
    if (row.inReplyToId !== null) this.reply(row.inReplyToId, row.visibility, -1);
  }

  authorPosted(accountId: number, visibility: string, now: number) {
    if (visibility === "direct") return;
    this.q.posted.run({ id: accountId, now });
    this.cache.touchAccount(accountId);
  }

  authorUnposted(accountId: number, visibility: string) {
    if (visibility === "direct") return;
    this.q.unposted.run({ id: accountId });
    this.cache.touchAccount(accountId);
  }

  /** Only public and unlisted replies count toward their parent. */
  reply(parentId: number, visibility: string, delta: 1 | -1) {
    if (visibility !== "public" && visibility !== "unlisted") return;
    this.q.replies.run({ id: parentId, delta });
    this.cache.invalidateStatus(parentId);
  }

  /** A reply that arrived before its parent now answers it: counted, and shown with its parent. */
  replyLinked(parentId: number, childId: number, visibility: string) {
    this.reply(parentId, visibility, 1);
    this.cache.invalidateStatus(childId);
  }

  reblogs(statusId: number, delta: 1 | -1) {
    this.q.reblogs.run({ id: statusId, delta });
    this.cache.invalidateStatus(statusId);
  }

  /** Accepted quotes of a status (Mastodon's quotes_count). */
  quotes(statusId: number, delta: 1 | -1) {
    this.q.quotes.run({ id: statusId, delta });
    this.cache.invalidateStatus(statusId);
  }

  favourites(statusId: number, delta: 1 | -1) {
    this.q.favourites.run({ id: statusId, delta });
    this.cache.invalidateStatus(statusId);
  }
}
