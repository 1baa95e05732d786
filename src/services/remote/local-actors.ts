import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { accounts, statuses, type AccountRow, type StatusRow } from "../../db/schema.ts";

const ACCOUNT = rowReader(accounts);
const STATUS = rowReader(statuses);

/** Visibilities that appear in the outbox and as fetchable objects without authorization. */
export const PUBLISHED_VISIBILITIES = ["public", "unlisted"] as const;
/** The same, as SQL: constants of the code, never input. */
const PUBLISHED = `(${PUBLISHED_VISIBILITIES.map((v) => `'${v}'`).join(", ")})`;

export interface Page<T> {
  items: T[];
  /** The cursor of the next page; null on the last one. */
  next: string | null;
}

/**
 * The statements, raw and read by rowReader: they run for every incoming activity (the local
 * accounts it names, whether its author has followers here) and every fetch of ours, and
 * drizzle's building and mapping of whole rows costs more than running them.
 */
const Q = {
  localAccount: `SELECT ${ACCOUNT.columns} ${ACCOUNT.from} WHERE lower(username) = ? AND domain IS NULL LIMIT 1`,
  hasUser: "SELECT 1 AS one FROM users WHERE account_id = ?",
  published: `SELECT ${STATUS.columns} ${STATUS.from} WHERE id = ? AND account_id = ? AND visibility IN ${PUBLISHED} AND reblog_of_id IS NULL`,
  own: `SELECT ${STATUS.columns} ${STATUS.from} WHERE id = ? AND account_id = ? AND reblog_of_id IS NULL`,
  outbox: `SELECT ${STATUS.columns} ${STATUS.from} WHERE account_id = ? AND visibility IN ${PUBLISHED} AND reblog_of_id IS NULL`,
  outboxCount: `SELECT count(*) AS n FROM statuses WHERE account_id = ? AND visibility IN ${PUBLISHED} AND reblog_of_id IS NULL`,
  followers: `SELECT ${ACCOUNT.columns}, f.id FROM follows f JOIN accounts ON accounts.id = f.account_id WHERE f.target_account_id = ?`,
  localFollowed: "SELECT f.target_account_id AS id FROM follows f JOIN accounts a ON a.id = f.target_account_id WHERE f.account_id = ? AND a.domain IS NULL",
  hasLocalFollowers: "SELECT 1 AS one FROM follows f JOIN accounts a ON a.id = f.account_id WHERE f.target_account_id = ? AND a.domain IS NULL LIMIT 1",
  hides: `SELECT 1 AS one FROM blocks WHERE account_id = ? AND target_account_id = ?
    UNION ALL SELECT 1 FROM account_domain_blocks WHERE account_id = ? AND domain = ? LIMIT 1`,
  /** Asked after every local post (whom to deliver it to). */
  remoteFollowers: `SELECT ${ACCOUNT.columns} FROM follows f JOIN accounts ON accounts.id = f.account_id WHERE f.target_account_id = ? AND accounts.domain IS NOT NULL`,
  pinned: `SELECT ${STATUS.columns} FROM status_pins p JOIN statuses ON statuses.id = p.status_id WHERE p.account_id = ? AND statuses.visibility IN ${PUBLISHED} ORDER BY p.id DESC`,
};

/**
 * What the actor documents and collections read: local accounts, published statuses,
 * followers, pins (their key pairs are src/federation/keys.ts's).
 */
export class FederationActors {
  constructor(private port: DatabasePort) {}

  async localAccount(username: string): Promise<AccountRow | undefined> {
    const [row] = await this.port.values(Q.localAccount, [username.toLowerCase()]);
    return row && ACCOUNT.map(row);
  }

  /** A local account staff deleted: its row stays (suspended, its name taken), its user is gone. */
  async deletedLocally(account: AccountRow): Promise<boolean> {
    return account.domain === null && account.suspendedAt !== null && !(await this.port.get(Q.hasUser, [account.id]));
  }

  /** A status of this account that anyone may fetch (public or unlisted, not a boost). */
  async publishedStatus(accountId: number, statusId: number): Promise<StatusRow | undefined> {
    const [row] = await this.port.values(Q.published, [statusId, accountId]);
    return row && STATUS.map(row);
  }

  /** A status of this account, whatever its visibility (not a boost): for a signed fetch by someone who may see it. */
  async ownStatus(accountId: number, statusId: number): Promise<StatusRow | undefined> {
    const [row] = await this.port.values(Q.own, [statusId, accountId]);
    return row && STATUS.map(row);
  }

  /** Newest first; the cursor is the id below which the next page starts. */
  async outbox(accountId: number, cursor: string | null, limit: number): Promise<Page<StatusRow>> {
    const below = cursorId(cursor);
    const rows = await this.port.values(`${Q.outbox}${below === null ? "" : " AND id < ?"} ORDER BY id DESC LIMIT ?`, below === null ? [accountId, limit + 1] : [accountId, below, limit + 1]);
    return pageOf(rows.map(STATUS.map), limit, (s) => s.id);
  }

  async outboxCount(accountId: number): Promise<number> {
    return Number((await this.port.get<{ n: number }>(Q.outboxCount, [accountId]))?.n ?? 0);
  }

  /** Followers, newest first, as the accounts' usernames; the cursor is a follow row id. */
  async followers(accountId: number, cursor: string | null, limit: number): Promise<Page<AccountRow>> {
    const below = cursorId(cursor);
    const rows = await this.port.values(`${Q.followers}${below === null ? "" : " AND f.id < ?"} ORDER BY f.id DESC LIMIT ?`, below === null ? [accountId, limit + 1] : [accountId, below, limit + 1]);
    const page = pageOf(rows, limit, (r) => Number(r[r.length - 1]));
    return { items: page.items.map(ACCOUNT.map), next: page.next };
  }

  /** The remote followers' inboxes (for delivery; local followers read the database). */
  async remoteFollowers(accountId: number): Promise<AccountRow[]> {
    return (await this.port.values(Q.remoteFollowers, [accountId])).map(ACCOUNT.map);
  }

  /** The local accounts a (remote) account follows. */
  async localFollowed(accountId: number): Promise<number[]> {
    return (await this.port.all<{ id: number }>(Q.localFollowed, [accountId])).map((r) => r.id);
  }

  async hasLocalFollowers(accountId: number): Promise<boolean> {
    return (await this.port.values(Q.hasLocalFollowers, [accountId])).length > 0;
  }

  /**
   * Whether the account hides its statuses and collections from a reader: it blocks the
   * reader's account, or the reader's domain (Mastodon's permitted_for and for_signed_account:
   * `blocking?` or `domain_blocking?`). The reader is a remote account we may not have stored
   * (null) and the host it signs from, normalized as domain rules are.
   */
  async hidesFrom(accountId: number, reader: { accountId: number | null; host: string | null }): Promise<boolean> {
    return (await this.port.values(Q.hides, [accountId, reader.accountId ?? 0, accountId, reader.host ?? ""])).length > 0;
  }

  /**
   * The public and unlisted replies to a status, local and remote, oldest first (Mastodon's
   * replies collection lists those too); the cursor is the id after which the next page starts.
   */
  replies(statusId: number, cursor: string | null, limit: number): Promise<Page<StatusRow>> {
    return this.thread("in_reply_to_id", statusId, cursor, limit);
  }

  /** The public and unlisted statuses of a thread (its top's and its replies', at any depth), oldest first: its FEP-7888 context. */
  conversation(conversationId: number, cursor: string | null, limit: number): Promise<Page<StatusRow>> {
    return this.thread("conversation_id", conversationId, cursor, limit);
  }

  private async thread(column: "in_reply_to_id" | "conversation_id", id: number, cursor: string | null, limit: number): Promise<Page<StatusRow>> {
    const after = cursorId(cursor);
    const where = `${column} = ? AND visibility IN ${PUBLISHED} AND reblog_of_id IS NULL${after === null ? "" : " AND id > ?"}`;
    const rows = await this.port.values(`SELECT ${STATUS.columns} ${STATUS.from} WHERE ${where} ORDER BY id ASC LIMIT ?`, after === null ? [id, limit + 1] : [id, after, limit + 1]);
    return pageOf(rows.map(STATUS.map), limit, (s) => s.id);
  }

  /** Pinned statuses that anyone may see, newest pin first. */
  async pinned(accountId: number): Promise<StatusRow[]> {
    return (await this.port.values(Q.pinned, [accountId])).map(STATUS.map);
  }
}

/** A page's cursor as an id; a cursor that is none is ignored (the first page), as before. */
function cursorId(cursor: string | null): number | null {
  const id = cursor === null ? null : Number(cursor);
  return id === null || !Number.isSafeInteger(id) ? null : id;
}

/** The first `limit` of `limit + 1` rows read, and the cursor of the next page when there is one. */
function pageOf<T>(rows: T[], limit: number, idOf: (row: T) => number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? String(idOf(items[items.length - 1]!)) : null };
}
