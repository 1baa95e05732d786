import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { type StatusRow } from "../../db/schema.ts";
import { domainBlockedSql, visibleToSql } from "./visibility.ts";
import { mentionedIds } from "../../models/mentions.ts";

/**
 * The domain-block conditions of a delivery, for its remote authors alone: a local account has
 * no domain to block (a status without a uri is a local author's), and each condition costs a
 * subquery per recipient on every post. Positional: each term binds the id beside it.
 */
export function remoteDomainsBlocked(dialect: DatabasePort["dialect"], recipient: string, status: StatusRow, original: StatusRow | null): { terms: string[]; params: number[] } {
  const terms: string[] = [];
  const params: number[] = [];
  const blocked = `NOT ${portable(dialect, domainBlockedSql(recipient, "?"))}`;
  if (status.uri !== null) (terms.push(blocked), params.push(status.accountId));
  if (original !== null && original.uri !== null) (terms.push(blocked), params.push(original.accountId));
  return { terms, params };
}

/** hostSql's instr is strpos on PostgreSQL (same arguments, same answer). */
export function portable(dialect: DatabasePort["dialect"], text: string): string {
  return dialect === "postgres" ? text.replaceAll("instr(", "strpos(") : text;
}

/**
 * A home feed (of the account in `account`, an SQL expression) already shows the boosted
 * original (bound twice after the account): the status itself or another boost of it.
 * Mastodon's FeedManager does not insert a boost then (it looks 40 entries back; this looks at
 * the whole feed).
 */
const shownIn = (account: string) =>
  `EXISTS (SELECT 1 FROM home_feed h WHERE h.account_id = ${account} AND (h.status_id = ? OR h.status_id IN (SELECT id FROM statuses WHERE reblog_of_id = ?)))`;

/** How many of an account's recent statuses a new follower's home timeline receives. */
const BACKFILL = 400;

/** Rows a multi-row INSERT takes: a few fixed sizes, so that a few statement texts serve any count (and stay prepared). */
const CHUNKS = [64, 8, 1];

/**
 * `INSERT INTO <head> VALUES (...), ... ON CONFLICT DO NOTHING` for `rows` (each `width`
 * values), in chunks of CHUNKS' sizes: portable, where SQLite's `json_each` list was not.
 */
export async function insertRows(port: DatabasePort, head: string, width: number, rows: unknown[][]): Promise<void> {
  const tuple = `(${Array.from({ length: width }, () => "?").join(", ")})`;
  let at = 0;
  for (const size of CHUNKS) {
    const text = `INSERT INTO ${head} VALUES ${Array.from({ length: size }, () => tuple).join(", ")} ON CONFLICT DO NOTHING`;
    for (; rows.length - at >= size; at += size) await port.run(text, rows.slice(at, at + size).flat());
  }
}

/**
 * Home timelines, written when a status is posted (Mastodon's FanOutOnWriteService and
 * FeedManager rules) so that reading one is a single range scan:
 * - the author always, and followers for public, unlisted and private statuses;
 * - direct statuses only to mentioned followers;
 * - a reply to someone else only to followers who follow that someone (or are them);
 * - boosts only to followers who show boosts and whose feed shows neither the original nor
 *   another boost of it (the booster's own feed too);
 * - never to anyone who blocks or mutes the author (or the boosted author), or blocks their domain.
 *
 * All on the database port: the writes (`within` listeners of follows and posts) and `holding`
 * (streaming's).
 */
export class HomeFeedService {
  constructor(
    private port: DatabasePort,
    private clock: Clock,
  ) {}

  /** Adds the status to every home feed that should show it (inside its transaction); returns those accounts. */
  async deliver(status: StatusRow, original: StatusRow | null): Promise<number[]> {
    const author = status.accountId;
    const origin = original?.accountId ?? author;
    const direct = !original && status.visibility === "direct";
    const replyTo = !original && status.inReplyToAccountId !== null && status.inReplyToAccountId !== author ? status.inReplyToAccountId : null;
    // Only local accounts have a home feed: remote followers are reached by delivery.
    const terms = ["f.target_account_id = ?", "EXISTS (SELECT 1 FROM accounts a WHERE a.id = f.account_id AND a.domain IS NULL)"];
    const params: unknown[] = [author];
    if (original) {
      terms.push("f.show_reblogs = TRUE", "f.account_id <> ?", `NOT ${shownIn("f.account_id")}`);
      params.push(origin, original.id, original.id);
    }
    if (direct) {
      const mentioned = mentionedIds(status);
      terms.push(mentioned.length === 0 ? "1 = 0" : `f.account_id IN (${mentioned.map(() => "?").join(", ")})`);
      params.push(...mentioned);
    }
    if (replyTo !== null) {
      terms.push("(f.account_id = ? OR EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = f.account_id AND f2.target_account_id = ?))");
      params.push(replyTo, replyTo);
    }
    terms.push(
      // Members of an exclusive list post to that list instead of the home timeline.
      "NOT EXISTS (SELECT 1 FROM list_accounts la JOIN lists l ON l.id = la.list_id WHERE l.account_id = f.account_id AND l.exclusive = TRUE AND la.account_id = ?)",
      "NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = f.account_id AND m.target_account_id IN (?, ?) AND (m.expires_at IS NULL OR m.expires_at > ?))",
      "NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = f.account_id AND b.target_account_id IN (?, ?))",
    );
    params.push(author, author, origin, this.clock.now(), author, origin);
    // Nor to anyone who blocks the author's domain, or the boosted author's (Mastodon's FeedManager).
    const domains = remoteDomainsBlocked(this.port.dialect, "f.account_id", status, original);
    terms.push(...domains.terms);
    params.push(...domains.params);
    // One statement text per shape (boost / direct / reply to another / remote), kept prepared by the driver.
    const followers = (await this.port.values(`SELECT f.account_id FROM follows f WHERE ${terms.join(" AND ")}`, params)).map((r) => r[0] as number);
    // The booster's own feed follows the same rule as everyone's: no second copy of what it shows.
    const toAuthor = status.uri === null && (!original || !(await this.port.values(`SELECT 1 WHERE ${shownIn("?")}`, [author, original.id, original.id])).length);
    const recipients = [...(toAuthor ? [author] : []), ...followers, ...(await this.tagFollowers(status, original, replyTo, followers))];
    await insertRows(
      this.port,
      "home_feed (account_id, status_id, author_id, origin_author_id)",
      4,
      recipients.map((id) => [id, status.id, author, origin]),
    );
    return recipients;
  }

  /**
   * Followers of the status's hashtags, for public originals (Mastodon's
   * deliver_to_hashtag_followers), with the same block, mute and reply rules as followers.
   */
  private async tagFollowers(status: StatusRow, original: StatusRow | null, replyTo: number | null, already: number[]): Promise<number[]> {
    if (original || status.visibility !== "public" || status.tags === "[]") return [];
    const author = status.accountId;
    const rows = await this.port.values(
      `SELECT DISTINCT tf.account_id FROM tag_follows tf JOIN status_tags st ON st.tag_id = tf.tag_id
       WHERE st.status_id = ? AND tf.account_id <> ?
         AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = tf.account_id AND m.target_account_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?))
         AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = tf.account_id AND b.target_account_id = ?) OR (b.account_id = ? AND b.target_account_id = tf.account_id))
         ${replyTo === null ? "" : "AND (tf.account_id = ? OR EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = tf.account_id AND f2.target_account_id = ?))"}`,
      [status.id, author, author, this.clock.now(), author, author, ...(replyTo === null ? [] : [replyTo, replyTo])],
    );
    const seen = new Set(already);
    return rows.map((r) => r[0] as number).filter((id) => !seen.has(id));
  }

  /**
   * After a follow (or unmute): the followed account's recent statuses the follower may see
   * join the follower's feed; direct messages do not (they enter a feed only when posted,
   * as Mastodon's merge_into_home does), nor statuses fetched to fill a thread or a profile.
   */
  async backfill(accountId: number, targetId: number): Promise<void> {
    // The viewer is bound as often as visibleToSql's text names them.
    const visible = portable(this.port.dialect, visibleToSql("s", "\u0000")).split("\u0000");
    const visibleOrigin = portable(this.port.dialect, visibleToSql("o", "\u0000")).split("\u0000");
    const viewer = (parts: string[]) => parts.slice(1).map(() => accountId);
    await this.port.run(
      `INSERT INTO home_feed (account_id, status_id, author_id, origin_author_id)
      SELECT ?, s.id, s.account_id, COALESCE(o.account_id, s.account_id)
      FROM statuses s
      JOIN follows f ON f.account_id = ? AND f.target_account_id = s.account_id
      LEFT JOIN statuses o ON o.id = s.reblog_of_id
      WHERE s.account_id = ?
        AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = ? AND a.domain IS NULL)
        AND ${visible.join("?")} AND s.visibility <> 'direct'
        AND (s.reblog_of_id IS NULL OR (f.show_reblogs = TRUE AND o.account_id <> ? AND ${visibleOrigin.join("?")}))
        AND (s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id IN (s.account_id, ?)
             OR EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = ? AND f2.target_account_id = s.in_reply_to_account_id))
        AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = ? AND m.target_account_id = COALESCE(o.account_id, s.account_id)
                        AND (m.expires_at IS NULL OR m.expires_at > ?))
        AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = ? AND b.target_account_id = COALESCE(o.account_id, s.account_id))
        AND NOT EXISTS (SELECT 1 FROM backfilled_statuses bs WHERE bs.status_id = s.id)
      ORDER BY s.id DESC
      LIMIT ${BACKFILL}
      ON CONFLICT DO NOTHING`,
      [accountId, accountId, targetId, accountId, ...viewer(visible), accountId, ...viewer(visibleOrigin), accountId, accountId, accountId, this.clock.now(), accountId],
    );
  }

  /** After an unfollow: what the account posted or boosted leaves the feed. */
  async removeAuthor(accountId: number, authorId: number): Promise<void> {
    await this.port.run("DELETE FROM home_feed WHERE account_id = ? AND author_id = ?", [accountId, authorId]);
  }

  /** The accounts whose home feeds hold the status (whose streams are told when it changes). */
  async holding(statusId: number): Promise<number[]> {
    return (await this.port.values("SELECT account_id FROM home_feed WHERE status_id = ?", [statusId])).map((r) => Number(r[0]));
  }
}
