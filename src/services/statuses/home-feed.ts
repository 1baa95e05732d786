import { and, eq, or, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { homeFeed, type StatusRow } from "../../db/schema.ts";
import { domainBlockedSql, visibleTo } from "./visibility.ts";
import { mentionedIds } from "../../models/mentions.ts";

/**
 * A home feed (of the account in `account`, an SQL expression) already shows the boosted
 * `$original`: the status itself or another boost of it. Mastodon's FeedManager does not
 * insert a boost then (it looks 40 entries back; this looks at the whole feed).
 */
/**
 * The domain-block conditions of a delivery, for its remote authors alone: a local account has
 * no domain to block (a status without a uri is a local author's), and each condition costs a
 * subquery per recipient on every post.
 */
export function remoteDomainsBlocked(recipient: string, status: StatusRow, original: StatusRow | null): string[] {
  return [
    ...(status.uri !== null ? [`NOT ${domainBlockedSql(recipient, "$author")}`] : []),
    ...(original !== null && original.uri !== null ? [`NOT ${domainBlockedSql(recipient, "$origin")}`] : []),
  ];
}

const shownIn = (account: string) =>
  `EXISTS (SELECT 1 FROM home_feed h WHERE h.account_id = ${account} AND (h.status_id = $original OR h.status_id IN (SELECT id FROM statuses WHERE reblog_of_id = $original)))`;

/** How many of an account's recent statuses a new follower's home timeline receives. */
const BACKFILL = 400;

/**
 * Home timelines, written when a status is posted (Mastodon's FanOutOnWriteService and
 * FeedManager rules) so that reading one is a single range scan:
 * - the author always, and followers for public, unlisted and private statuses;
 * - direct statuses only to mentioned followers;
 * - a reply to someone else only to followers who follow that someone (or are them);
 * - boosts only to followers who show boosts and whose feed shows neither the original nor
 *   another boost of it (the booster's own feed too);
 * - never to anyone who blocks or mutes the author (or the boosted author), or blocks their domain.
 */
export class HomeFeedService {
  constructor(
    private db: Db,
    private clock: Clock,
  ) {}

  /** Adds the status to every home feed that should show it (inside its transaction); returns those accounts. */
  deliver(status: StatusRow, original: StatusRow | null): number[] {
    const author = status.accountId;
    const origin = original?.accountId ?? author;
    const direct = !original && status.visibility === "direct";
    const replyTo = !original && status.inReplyToAccountId !== null && status.inReplyToAccountId !== author ? status.inReplyToAccountId : null;
    // One statement per shape (boost / direct / reply to another), compiled once by bun:sqlite.
    const sqlite = this.db.$client;
    // Only local accounts have a home feed: remote followers are reached by delivery.
    const conditions = ["f.target_account_id = $author", "EXISTS (SELECT 1 FROM accounts a WHERE a.id = f.account_id AND a.domain IS NULL)"];
    const params: Record<string, number | string> = { author, origin, now: this.clock.now() };
    if (original) {
      conditions.push("f.show_reblogs = 1", "f.account_id <> $origin", `NOT ${shownIn("f.account_id")}`);
      params.original = original.id;
    }
    if (direct) {
      conditions.push("f.account_id IN (SELECT value FROM json_each($mentioned))");
      params.mentioned = JSON.stringify(mentionedIds(status));
    }
    if (replyTo !== null) {
      conditions.push("(f.account_id = $replyTo OR EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = f.account_id AND f2.target_account_id = $replyTo))");
      params.replyTo = replyTo;
    }
    conditions.push(
      // Members of an exclusive list post to that list instead of the home timeline.
      "NOT EXISTS (SELECT 1 FROM list_accounts la JOIN lists l ON l.id = la.list_id WHERE l.account_id = f.account_id AND l.exclusive = 1 AND la.account_id = $author)",
      "NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = f.account_id AND m.target_account_id IN ($author, $origin) AND (m.expires_at IS NULL OR m.expires_at > $now))",
      "NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = f.account_id AND b.target_account_id IN ($author, $origin))",
      // Nor to anyone who blocks the author's domain, or the boosted author's (Mastodon's FeedManager).
      ...remoteDomainsBlocked("f.account_id", status, original),
    );
    const followers = sqlite
      .query<{ id: number }, Record<string, number | string>>(`SELECT f.account_id AS id FROM follows f WHERE ${conditions.join(" AND ")}`)
      .all(params)
      .map((r) => r.id);
    // The booster's own feed follows the same rule as everyone's: no second copy of what it shows.
    const toAuthor = status.uri === null && (!original || !sqlite.query<{ shown: number }, Record<string, number>>(`SELECT ${shownIn("$author")} AS shown`).get({ author, original: original.id })!.shown);
    const recipients = [...(toAuthor ? [author] : []), ...followers, ...this.tagFollowers(status, original, replyTo, followers)];
    sqlite
      .query(
        "INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id, origin_author_id) SELECT value, $status, $author, $origin FROM json_each($recipients)",
      )
      .run({ status: status.id, author, origin, recipients: JSON.stringify(recipients) });
    return recipients;
  }

  /**
   * Followers of the status's hashtags, for public originals (Mastodon's
   * deliver_to_hashtag_followers), with the same block, mute and reply rules as followers.
   */
  private tagFollowers(status: StatusRow, original: StatusRow | null, replyTo: number | null, already: number[]): number[] {
    if (original || status.visibility !== "public" || status.tags === "[]") return [];
    const rows = this.db.$client
      .query<{ id: number }, Record<string, number>>(
        `SELECT DISTINCT tf.account_id AS id FROM tag_follows tf JOIN status_tags st ON st.tag_id = tf.tag_id
         WHERE st.status_id = $status AND tf.account_id <> $author
           AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = tf.account_id AND m.target_account_id = $author AND (m.expires_at IS NULL OR m.expires_at > $now))
           AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = tf.account_id AND b.target_account_id = $author) OR (b.account_id = $author AND b.target_account_id = tf.account_id))
           AND ($replyTo = 0 OR tf.account_id = $replyTo OR EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = tf.account_id AND f2.target_account_id = $replyTo))`,
      )
      .all({ status: status.id, author: status.accountId, now: this.clock.now(), replyTo: replyTo ?? 0 });
    const seen = new Set(already);
    return rows.map((r) => r.id).filter((id) => !seen.has(id));
  }

  /**
   * After a follow (or unmute): the followed account's recent statuses the follower may see
   * join the follower's feed; direct messages do not (they enter a feed only when posted,
   * as Mastodon's merge_into_home does), nor statuses fetched to fill a thread or a profile.
   */
  backfill(accountId: number, targetId: number) {
    const now = this.clock.now();
    this.db.run(sql`
      INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id, origin_author_id)
      SELECT ${accountId}, s.id, s.account_id, COALESCE(o.account_id, s.account_id)
      FROM statuses s
      JOIN follows f ON f.account_id = ${accountId} AND f.target_account_id = s.account_id
      LEFT JOIN statuses o ON o.id = s.reblog_of_id
      WHERE s.account_id = ${targetId}
        AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = ${accountId} AND a.domain IS NULL)
        AND ${visibleTo("s", accountId)} AND s.visibility <> 'direct'
        AND (s.reblog_of_id IS NULL OR (f.show_reblogs = 1 AND o.account_id <> ${accountId} AND ${visibleTo("o", accountId)}))
        AND (s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id IN (s.account_id, ${accountId})
             OR EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = ${accountId} AND f2.target_account_id = s.in_reply_to_account_id))
        AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = ${accountId} AND m.target_account_id = COALESCE(o.account_id, s.account_id)
                        AND (m.expires_at IS NULL OR m.expires_at > ${now}))
        AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = ${accountId} AND b.target_account_id = COALESCE(o.account_id, s.account_id))
        AND NOT EXISTS (SELECT 1 FROM backfilled_statuses bs WHERE bs.status_id = s.id)
      ORDER BY s.id DESC
      LIMIT ${BACKFILL}`);
  }

  /** After an unfollow: what the account posted or boosted leaves the feed. */
  removeAuthor(accountId: number, authorId: number) {
    this.db.delete(homeFeed).where(and(eq(homeFeed.accountId, accountId), eq(homeFeed.authorId, authorId))).run();
  }

  /** The accounts whose home feeds hold the status (whose streams are told when it changes). */
  holding(statusId: number): number[] {
    return this.db.select({ id: homeFeed.accountId }).from(homeFeed).where(eq(homeFeed.statusId, statusId)).all().map((r) => r.id);
  }

  /** Does the feed hold this status (used by tests and the streaming fan-out)? */
  contains(accountId: number, statusId: number): boolean {
    return !!this.db
      .select({ id: homeFeed.statusId })
      .from(homeFeed)
      .where(and(eq(homeFeed.accountId, accountId), or(eq(homeFeed.statusId, statusId))))
      .get();
  }
}
