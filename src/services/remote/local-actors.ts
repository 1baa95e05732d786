import { and, asc, desc, eq, gt, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { accounts, follows, statusPins, statuses, users, type AccountRow, type StatusRow } from "../../db/schema.ts";
import { rowReader } from "../../db/rows.ts";

const ACCOUNT = rowReader(accounts);

/** Visibilities that appear in the outbox and as fetchable objects without authorization. */
export const PUBLISHED_VISIBILITIES = ["public", "unlisted"] as const;

export interface Page<T> {
  items: T[];
  /** The cursor of the next page; null on the last one. */
  next: string | null;
}

/**
 * What the actor documents and collections read: local accounts, published statuses,
 * followers, pins (their key pairs are src/federation/keys.ts's).
 */
export class FederationActors {
  /**
   * The lookups every incoming activity makes, prepared once: drizzle builds a query's SQL
   * anew on each call (tens of microseconds for a whole accounts row), more than running it.
   */
  private readonly q;
  /** Asked after every local post (whom to deliver it to): prepared once, rows read without drizzle's mapping. */
  private remoteFollowersQuery;

  constructor(private db: Db) {
    this.remoteFollowersQuery = db.$client.query<unknown[], [number]>(
      `SELECT ${ACCOUNT.columns} FROM follows f JOIN accounts ON accounts.id = f.account_id WHERE f.target_account_id = ? AND accounts.domain IS NOT NULL`,
    );
    this.q = {
      localAccount: db
        .select()
        .from(accounts)
        .where(sql`lower(${accounts.username}) = ${sql.placeholder("username")} AND ${accounts.domain} IS NULL`)
        .prepare(),
      hasLocalFollowers: db
        .select({ one: sql`1` })
        .from(follows)
        .innerJoin(accounts, eq(accounts.id, follows.accountId))
        .where(and(eq(follows.targetAccountId, sql.placeholder("account")), sql`${accounts.domain} IS NULL`))
        .limit(1)
        .prepare(),
    };
  }

  localAccount(username: string): AccountRow | undefined {
    return this.q.localAccount.get({ username: username.toLowerCase() });
  }

  /** A local account staff deleted: its row stays (suspended, its name taken), its user is gone. */
  deletedLocally(account: AccountRow): boolean {
    return account.domain === null && account.suspendedAt !== null && !this.db.select({ id: users.accountId }).from(users).where(eq(users.accountId, account.id)).get();
  }

  /** A status of this account that anyone may fetch (public or unlisted, not a boost). */
  publishedStatus(accountId: number, statusId: number): StatusRow | undefined {
    return this.db
      .select()
      .from(statuses)
      .where(
        and(
          eq(statuses.id, statusId),
          eq(statuses.accountId, accountId),
          inArray(statuses.visibility, [...PUBLISHED_VISIBILITIES]),
          sql`${statuses.reblogOfId} IS NULL`,
        ),
      )
      .get();
  }

  /** A status of this account, whatever its visibility (not a boost): for a signed fetch by someone who may see it. */
  ownStatus(accountId: number, statusId: number): StatusRow | undefined {
    return this.db
      .select()
      .from(statuses)
      .where(and(eq(statuses.id, statusId), eq(statuses.accountId, accountId), sql`${statuses.reblogOfId} IS NULL`))
      .get();
  }

  /** Newest first; the cursor is the id below which the next page starts. */
  outbox(accountId: number, cursor: string | null, limit: number): Page<StatusRow> {
    const below = cursor === null ? null : Number(cursor);
    const rows = this.db
      .select()
      .from(statuses)
      .where(
        and(
          eq(statuses.accountId, accountId),
          inArray(statuses.visibility, [...PUBLISHED_VISIBILITIES]),
          sql`${statuses.reblogOfId} IS NULL`,
          below === null || !Number.isSafeInteger(below) ? undefined : lt(statuses.id, below),
        ),
      )
      .orderBy(desc(statuses.id))
      .limit(limit + 1)
      .all();
    const items = rows.slice(0, limit);
    return { items, next: rows.length > limit ? String(items[items.length - 1]!.id) : null };
  }

  outboxCount(accountId: number): number {
    return (
      this.db
        .select({ n: sql<number>`count(*)` })
        .from(statuses)
        .where(and(eq(statuses.accountId, accountId), inArray(statuses.visibility, [...PUBLISHED_VISIBILITIES]), sql`${statuses.reblogOfId} IS NULL`))
        .get()?.n ?? 0
    );
  }

  /** Followers, newest first, as the accounts' usernames; the cursor is a follow row id. */
  followers(accountId: number, cursor: string | null, limit: number): Page<AccountRow> {
    const below = cursor === null ? null : Number(cursor);
    const rows = this.db
      .select({ id: follows.id, account: accounts })
      .from(follows)
      .innerJoin(accounts, eq(accounts.id, follows.accountId))
      .where(and(eq(follows.targetAccountId, accountId), below === null || !Number.isSafeInteger(below) ? undefined : lt(follows.id, below)))
      .orderBy(desc(follows.id))
      .limit(limit + 1)
      .all();
    const items = rows.slice(0, limit);
    return { items: items.map((r) => r.account), next: rows.length > limit ? String(items[items.length - 1]!.id) : null };
  }

  /** The remote followers' inboxes (for delivery; local followers read the database). */
  remoteFollowers(accountId: number): AccountRow[] {
    return this.remoteFollowersQuery.values(accountId).map(ACCOUNT.map);
  }

  /** The local accounts a (remote) account follows. */
  localFollowed(accountId: number): number[] {
    return this.db
      .select({ id: follows.targetAccountId })
      .from(follows)
      .innerJoin(accounts, eq(accounts.id, follows.targetAccountId))
      .where(and(eq(follows.accountId, accountId), sql`${accounts.domain} IS NULL`))
      .all()
      .map((r) => r.id);
  }

  hasLocalFollowers(accountId: number): boolean {
    return !!this.q.hasLocalFollowers.get({ account: accountId });
  }

  /**
   * Whether the account hides its statuses and collections from a reader: it blocks the
   * reader's account, or the reader's domain (Mastodon's permitted_for and for_signed_account:
   * `blocking?` or `domain_blocking?`). The reader is a remote account we may not have stored
   * (null) and the host it signs from, normalized as domain rules are.
   */
  hidesFrom(accountId: number, reader: { accountId: number | null; host: string | null }): boolean {
    return !!this.db.$client
      .query<{ one: number }, [number, number, string]>(
        `SELECT 1 AS one FROM blocks WHERE account_id = ?1 AND target_account_id = ?2
         UNION ALL SELECT 1 FROM account_domain_blocks WHERE account_id = ?1 AND domain = ?3 LIMIT 1`,
      )
      .get(accountId, reader.accountId ?? 0, reader.host ?? "");
  }

  /**
   * The public and unlisted replies to a status, local and remote, oldest first (Mastodon's
   * replies collection lists those too); the cursor is the id after which the next page starts.
   */
  replies(statusId: number, cursor: string | null, limit: number): Page<StatusRow> {
    return this.thread(eq(statuses.inReplyToId, statusId), cursor, limit);
  }

  /** The public and unlisted statuses of a thread (its top's and its replies', at any depth), oldest first: its FEP-7888 context. */
  conversation(conversationId: number, cursor: string | null, limit: number): Page<StatusRow> {
    return this.thread(eq(statuses.conversationId, conversationId), cursor, limit);
  }

  private thread(which: SQL, cursor: string | null, limit: number): Page<StatusRow> {
    const after = cursor === null ? null : Number(cursor);
    const rows = this.db
      .select()
      .from(statuses)
      .where(
        and(
          which,
          inArray(statuses.visibility, [...PUBLISHED_VISIBILITIES]),
          sql`${statuses.reblogOfId} IS NULL`,
          after === null || !Number.isSafeInteger(after) ? undefined : gt(statuses.id, after),
        ),
      )
      .orderBy(asc(statuses.id))
      .limit(limit + 1)
      .all();
    const items = rows.slice(0, limit);
    return { items, next: rows.length > limit ? String(items[items.length - 1]!.id) : null };
  }

  /** Pinned statuses that anyone may see, newest pin first. */
  pinned(accountId: number): StatusRow[] {
    return this.db
      .select({ status: statuses })
      .from(statusPins)
      .innerJoin(statuses, eq(statuses.id, statusPins.statusId))
      .where(and(eq(statusPins.accountId, accountId), inArray(statuses.visibility, [...PUBLISHED_VISIBILITIES])))
      .orderBy(desc(statusPins.id))
      .all()
      .map((r) => r.status);
  }
}
