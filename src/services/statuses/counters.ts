import type { DatabasePort } from "../../db/port.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { RenderCache } from "./render-cache.ts";

/** `column + delta`, never below zero (portable: SQLite's two-argument max is GREATEST on PostgreSQL). */
const moved = (column: string) => `${column} = CASE WHEN ${column} + ? < 0 THEN 0 ELSE ${column} + ? END`;

/** Raw statements, kept prepared by the driver: every post, boost and favourite runs one. */
const SQL = {
  posted: "UPDATE accounts SET statuses_count = statuses_count + 1, last_status_at = ? WHERE id = ?",
  imported: "UPDATE accounts SET statuses_count = statuses_count + 1, last_status_at = CASE WHEN coalesce(last_status_at, 0) > ? THEN last_status_at ELSE ? END WHERE id = ?",
  unposted: "UPDATE accounts SET statuses_count = CASE WHEN statuses_count > 0 THEN statuses_count - 1 ELSE 0 END WHERE id = ?",
  replies: `UPDATE statuses SET ${moved("replies_count")} WHERE id = ?`,
  reblogs: `UPDATE statuses SET ${moved("reblogs_count")} WHERE id = ?`,
  favourites: `UPDATE statuses SET ${moved("favourites_count")} WHERE id = ?`,
  quotes: `UPDATE statuses SET ${moved("quotes_count")} WHERE id = ?`,
};

/**
 * The denormalised counters (statuses per account, replies, boosts and favourites per
 * status), on the database port: every post, boost and favourite moves one of them, inside its
 * transaction (`within` listeners). Never below zero. Direct statuses do not count toward an
 * account's statuses, as in Mastodon.
 */
export class Counters {
  constructor(
    private port: DatabasePort,
    private cache: RenderCache,
  ) {}

  /** A new status or boost: its author's statuses, its original's boosts, its parent's replies. */
  async statusAdded(row: StatusRow): Promise<void> {
    if (row.reblogOfId !== null) await this.reblogs(row.reblogOfId, 1);
    await this.authorPosted(row.accountId, row.visibility, row.createdAt);
    if (row.inReplyToId !== null) await this.reply(row.inReplyToId, row.visibility, 1);
  }

  /**
   * A status imported from an archive: counted as posted, and as a reply to its parent; the
   * account's last status date moves only forward (an old post is not its latest).
   */
  async statusImported(row: StatusRow): Promise<void> {
    await this.port.run(SQL.imported, [row.createdAt, row.createdAt, row.accountId]);
    this.cache.touchAccount(row.accountId);
    if (row.inReplyToId !== null) await this.reply(row.inReplyToId, row.visibility, 1);
  }

  /** A status or boost deleted: the same counters back (a boost's original deleted with it has none left to move). */
  async statusRemoved(row: StatusRow): Promise<void> {
    await this.authorUnposted(row.accountId, row.visibility);
    if (row.reblogOfId !== null) await this.reblogs(row.reblogOfId, -1);
    if (row.inReplyToId !== null) await this.reply(row.inReplyToId, row.visibility, -1);
  }

  async authorPosted(accountId: number, visibility: string, now: number): Promise<void> {
    if (visibility === "direct") return;
    await this.port.run(SQL.posted, [now, accountId]);
    this.cache.touchAccount(accountId);
  }

  async authorUnposted(accountId: number, visibility: string): Promise<void> {
    if (visibility === "direct") return;
    await this.port.run(SQL.unposted, [accountId]);
    this.cache.touchAccount(accountId);
  }

  /** Only public and unlisted replies count toward their parent. */
  async reply(parentId: number, visibility: string, delta: 1 | -1): Promise<void> {
    if (visibility !== "public" && visibility !== "unlisted") return;
    await this.port.run(SQL.replies, [delta, delta, parentId]);
    this.cache.invalidateStatus(parentId);
  }

  /** A reply that arrived before its parent now answers it: counted, and shown with its parent. */
  async replyLinked(parentId: number, childId: number, visibility: string): Promise<void> {
    await this.reply(parentId, visibility, 1);
    this.cache.invalidateStatus(childId);
  }

  async reblogs(statusId: number, delta: 1 | -1): Promise<void> {
    await this.port.run(SQL.reblogs, [delta, delta, statusId]);
    this.cache.invalidateStatus(statusId);
  }

  /** Accepted quotes of a status (Mastodon's quotes_count). */
  async quotes(statusId: number, delta: 1 | -1): Promise<void> {
    await this.port.run(SQL.quotes, [delta, delta, statusId]);
    this.cache.invalidateStatus(statusId);
  }

  async favourites(statusId: number, delta: 1 | -1): Promise<void> {
    await this.port.run(SQL.favourites, [delta, delta, statusId]);
    this.cache.invalidateStatus(statusId);
  }
}
