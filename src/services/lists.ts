import { and, count, eq, inArray, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { rowReader } from "../db/rows.ts";
import { lockAccount } from "../db/row-locks.ts";
import { marks, padded, paddedSize } from "../db/prepared.ts";
import { accounts, type AccountRow, type ListRow, type StatusRow } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { ApiError, notFound, validationFailed } from "../errors.ts";
import type { EventBus } from "../infra/events.ts";
import { finishPage, type Page } from "../infra/pagination.ts";
import { visibleToSql } from "./statuses/visibility.ts";
import { insertRows, remoteDomainsBlocked } from "./statuses/home-feed.ts";

/** Whether the account is in anyone's list: most authors are in none, and then delivery asks nothing more. */
const IN_ANY_LIST = "SELECT 1 AS one FROM list_accounts WHERE account_id = ? LIMIT 1";

export const REPLIES_POLICIES = ["followed", "list", "none"] as const;
const MAX_LISTS = 50;
const MAX_TITLE = 256;
const BACKFILL = 400;
const ACCOUNT = rowReader(accounts);

export interface ListInput {
  title?: string;
  repliesPolicy?: string;
  exclusive?: boolean;
}

/**
 * Lists of followed accounts and their timelines. Like home timelines they are filled when a
 * status is posted, so reading one is a range scan and the list stream knows its audience.
 */
export class ListService {
  /** The statements the routes run on every request, prepared once (see docs/architecture.md, the database port). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {
    const { lists: listRows, listAccounts: members } = port.tables;
    const orm = port.orm;
    const accountId = sql.placeholder("accountId");
    const id = sql.placeholder("id");
    this.q = {
      all: orm.select().from(listRows).where(eq(listRows.accountId, accountId)).orderBy(listRows.id).prepare(),
      own: orm.select().from(listRows).where(and(eq(listRows.id, id), eq(listRows.accountId, accountId))).prepare(),
      count: orm.select({ n: count().mapWith(Number) }).from(listRows).where(eq(listRows.accountId, accountId)).prepare(),
      insert: orm
        .insert(listRows)
        .values({ id, accountId, title: sql.placeholder("title"), repliesPolicy: sql.placeholder("repliesPolicy"), exclusive: sql.placeholder("exclusive"), createdAt: sql.placeholder("createdAt") })
        .prepare(),
      remove: orm.delete(listRows).where(eq(listRows.id, id)).prepare(),
      containing: orm
        .select({ list: listRows })
        .from(members)
        .innerJoin(listRows, eq(listRows.id, members.listId))
        .where(and(eq(listRows.accountId, accountId), eq(members.accountId, sql.placeholder("memberId"))))
        .prepare(),
    };
  }

  async all(accountId: number): Promise<ListRow[]> {
    return this.q.all.execute({ accountId });
  }

  async own(accountId: number, id: number | null): Promise<ListRow> {
    const [row] = id === null ? [] : await this.q.own.execute({ id, accountId });
    if (!row) throw notFound();
    return row;
  }

  private validate(input: ListInput, creating: boolean) {
    const errors: string[] = [];
    if (creating || input.title !== undefined) {
      const title = (input.title ?? "").trim();
      if (title === "") errors.push("Title can't be blank");
      else if (title.length > MAX_TITLE) errors.push(`Title is too long (maximum is ${MAX_TITLE} characters)`);
    }
    if (input.repliesPolicy !== undefined && !(REPLIES_POLICIES as readonly string[]).includes(input.repliesPolicy)) {
      errors.push("Replies policy is not included in the list");
    }
    if (errors.length) throw validationFailed(...errors);
  }

  async create(accountId: number, input: ListInput): Promise<ListRow> {
    this.validate(input, true);
    const row: ListRow = {
      id: this.ids.next(),
      accountId,
      title: (input.title ?? "").trim(),
      repliesPolicy: input.repliesPolicy ?? "list",
      exclusive: input.exclusive ?? false,
      createdAt: this.clock.now(),
    };
    // Counted and written under the account's lock: lists made at once count one after another.
    await this.port.transaction(async () => {
      await lockAccount(this.port, accountId);
      const [counted] = await this.q.count.execute({ accountId });
      if ((counted?.n ?? 0) >= MAX_LISTS) throw validationFailed("You have reached the maximum number of lists");
      await this.q.insert.execute(row);
    });
    return row;
  }

  async update(accountId: number, id: number | null, input: ListInput): Promise<ListRow> {
    const row = await this.own(accountId, id);
    this.validate(input, false);
    const changes: Partial<ListRow> = {};
    if (input.title !== undefined) changes.title = input.title.trim();
    if (input.repliesPolicy !== undefined) changes.repliesPolicy = input.repliesPolicy;
    if (input.exclusive !== undefined) changes.exclusive = input.exclusive;
    const { lists: listRows } = this.port.tables;
    if (Object.keys(changes).length) await this.port.orm.update(listRows).set(changes).where(eq(listRows.id, row.id));
    return { ...row, ...changes };
  }

  async remove(accountId: number, id: number | null) {
    const row = await this.own(accountId, id);
    await this.q.remove.execute({ id: row.id });
  }

  async members(accountId: number, id: number | null, page: Page): Promise<{ account: AccountRow; cursor: number }[]> {
    const list = await this.own(accountId, id);
    // Raw SQL read by rowReader: a builder selecting whole accounts rows costs far more than running it.
    const where = ["la.list_id = ?"];
    const params: unknown[] = [list.id];
    if (page.maxId !== undefined) (where.push("la.account_id < ?"), params.push(page.maxId));
    if (page.sinceId !== undefined) (where.push("la.account_id > ?"), params.push(page.sinceId));
    if (page.minId !== undefined) (where.push("la.account_id > ?"), params.push(page.minId));
    const forward = page.minId !== undefined;
    const rows = await this.port.values(
      `SELECT ${ACCOUNT.columns}, la.account_id FROM list_accounts la JOIN accounts ON accounts.id = la.account_id
       WHERE ${where.join(" AND ")} ORDER BY la.account_id ${forward ? "ASC" : "DESC"} LIMIT ?`,
      [...params, page.limit],
    );
    return finishPage(
      rows.map((r) => ({ account: ACCOUNT.map(r), cursor: Number(r[r.length - 1]) })),
      forward,
    );
  }

  /** Adds accounts the owner follows (or has asked to follow); all or nothing. */
  async addMembers(accountId: number, id: number | null, accountIds: number[]) {
    const list = await this.own(accountId, id);
    const unique = [...new Set(accountIds)];
    if (unique.length === 0) return;
    const { accounts: accountRows, follows: followRows, followRequests: requests, listAccounts: members } = this.port.tables;
    const orm = this.port.orm;
    const known = new Set((await orm.select({ id: accountRows.id }).from(accountRows).where(inArray(accountRows.id, unique))).map((r) => r.id));
    if (unique.some((a) => !known.has(a))) throw notFound();
    const followed = new Set([
      ...(await orm.select({ id: followRows.targetAccountId }).from(followRows).where(and(eq(followRows.accountId, accountId), inArray(followRows.targetAccountId, unique)))).map((r) => r.id),
      ...(await orm.select({ id: requests.targetAccountId }).from(requests).where(and(eq(requests.accountId, accountId), inArray(requests.targetAccountId, unique)))).map((r) => r.id),
    ]);
    const present = new Set(
      (await orm.select({ id: members.accountId }).from(members).where(and(eq(members.listId, list.id), inArray(members.accountId, unique)))).map((r) => r.id),
    );
    const errors: string[] = [];
    if (unique.some((a) => a !== accountId && !followed.has(a))) errors.push("Account must be a followed account");
    if (unique.some((a) => present.has(a))) errors.push("Account is already on the list");
    if (errors.length) throw new ApiError(422, `Validation failed: ${errors.join(", ")}`);
    await this.port.transaction(async () => {
      const createdAt = this.clock.now();
      const added = await orm
        .insert(members)
        .values(unique.map((member) => ({ listId: list.id, accountId: member, createdAt })))
        .onConflictDoNothing({ target: [members.listId, members.accountId] });
      // A request beside this one (a double submit; PostgreSQL) added one of them first: refused
      // as if it had come before, all or nothing (thrown, so that what was added is rolled back).
      if (this.port.changes(added) < unique.length) throw new ApiError(422, "Validation failed: Account is already on the list");
    });
    for (const member of unique) await this.backfill(list, member);
  }

  async removeMembers(accountId: number, id: number | null, accountIds: number[]) {
    const list = await this.own(accountId, id);
    if (accountIds.length === 0) return;
    const { listAccounts: members, listFeed: feed } = this.port.tables;
    await this.port.transaction(async () => {
      await this.port.orm.delete(members).where(and(eq(members.listId, list.id), inArray(members.accountId, accountIds)));
      await this.port.orm.delete(feed).where(and(eq(feed.listId, list.id), inArray(feed.authorId, accountIds)));
    });
  }

  /** After an unfollow: the account leaves the follower's lists (as Mastodon ties list membership to the follow). */
  async forgetFollow(ownerId: number, targetId: number): Promise<void> {
    await this.port.run("DELETE FROM list_accounts WHERE account_id = ? AND list_id IN (SELECT id FROM lists WHERE account_id = ?)", [targetId, ownerId]);
    await this.port.run("DELETE FROM list_feed WHERE author_id = ? AND list_id IN (SELECT id FROM lists WHERE account_id = ?)", [targetId, ownerId]);
  }

  /** Lists of `ownerId` that `accountId` is in (GET /api/v1/accounts/:id/lists). */
  async containing(ownerId: number, accountId: number): Promise<ListRow[]> {
    return (await this.q.containing.execute({ accountId: ownerId, memberId: accountId })).map((r) => r.list);
  }

  /**
   * Puts a new status into the lists that follow its author, under each list's replies
   * policy; direct statuses never go to lists. Returns the lists it went into.
   */
  async deliver(status: StatusRow, original: StatusRow | null): Promise<number[]> {
    // Most authors are in no list: one indexed probe, and nothing more.
    if (status.visibility === "direct" || !(await this.port.get(IN_ANY_LIST, [status.accountId]))) return [];
    const replyTo = !original && status.inReplyToAccountId !== null && status.inReplyToAccountId !== status.accountId ? status.inReplyToAccountId : null;
    const author = status.accountId;
    const origin = original?.accountId ?? author;
    const domains = remoteDomainsBlocked(this.port.dialect, "l.account_id", status, original);
    const rows = await this.port.values(
      `SELECT l.id FROM list_accounts la JOIN lists l ON l.id = la.list_id
       WHERE la.account_id = ?
         AND EXISTS (SELECT 1 FROM follows f WHERE f.account_id = l.account_id AND f.target_account_id = ?)
         AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = l.account_id AND b.target_account_id IN (?, ?))
         AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = l.account_id AND m.target_account_id IN (?, ?) AND (m.expires_at IS NULL OR m.expires_at > ?))
         ${domains.terms.map((c) => `AND ${c}`).join(" ")}
         ${
           replyTo === null
             ? ""
             : `AND (? = l.account_id
                OR (l.replies_policy = 'followed' AND EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = l.account_id AND f2.target_account_id = ?))
                OR (l.replies_policy = 'list' AND EXISTS (SELECT 1 FROM list_accounts la2 WHERE la2.list_id = l.id AND la2.account_id = ?)))`
         }`,
      [author, author, author, origin, author, origin, this.clock.now(), ...domains.params, ...(replyTo === null ? [] : [replyTo, replyTo, replyTo])],
    );
    const listIds = rows.map((r) => r[0] as number);
    if (listIds.length === 0) return [];
    await insertRows(
      this.port,
      "list_feed (list_id, status_id, author_id)",
      3,
      listIds.map((id) => [id, status.id, author]),
    );
    await this.events.emit({ type: "list.delivered", status, listIds });
    return listIds;
  }

  /** list id -> owner, for lists a stream is about to be told of. */
  async owners(listIds: number[]): Promise<Map<number, number>> {
    if (listIds.length === 0) return new Map();
    const size = paddedSize(listIds.length);
    return new Map((await this.port.values(`SELECT id, account_id FROM lists WHERE id IN (${marks(size)})`, padded(listIds, size))).map((r) => [Number(r[0]), Number(r[1])]));
  }

  /** Does the account own the list (may it stream it)? */
  async owns(accountId: number, listId: number): Promise<boolean> {
    return (await this.q.own.execute({ id: listId, accountId })).length > 0;
  }

  /** The lists whose timelines hold the status (for the delete events of streams). */
  async holding(statusId: number): Promise<number[]> {
    return (await this.port.values("SELECT list_id FROM list_feed WHERE status_id = ?", [statusId])).map((r) => Number(r[0]));
  }

  /** A new member brings their recent statuses the owner may see, less direct messages (as home feeds). */
  private async backfill(list: ListRow, memberId: number) {
    // Portable: ON CONFLICT DO NOTHING for INSERT OR IGNORE; the viewer bound twice in visibleToSql's text.
    // hostSql's instr is strpos on PostgreSQL (same arguments, same answer).
    const text = visibleToSql("s", "\u0000");
    const visible = (this.port.dialect === "postgres" ? text.replaceAll("instr(", "strpos(") : text).split("\u0000");
    await this.port.run(
      `INSERT INTO list_feed (list_id, status_id, author_id)
       SELECT ?, s.id, s.account_id FROM statuses s
       WHERE s.account_id = ? AND ${visible.join("?")} AND s.visibility <> 'direct'
       ORDER BY s.id DESC LIMIT ${BACKFILL}
       ON CONFLICT DO NOTHING`,
      [list.id, memberId, ...visible.slice(1).map(() => list.accountId)],
    );
  }

  /** Status ids of one page of a list's timeline, newest first (TimelineService reads the rows). */
  async page(accountId: number, id: number | null, page: Page): Promise<number[]> {
    const list = await this.own(accountId, id);
    const where = ["list_id = ?"];
    const params: number[] = [list.id];
    if (page.maxId !== undefined) (where.push("status_id < ?"), params.push(page.maxId));
    if (page.sinceId !== undefined) (where.push("status_id > ?"), params.push(page.sinceId));
    if (page.minId !== undefined) (where.push("status_id > ?"), params.push(page.minId));
    const forward = page.minId !== undefined;
    const found = await this.port.values(`SELECT status_id FROM list_feed WHERE ${where.join(" AND ")} ORDER BY status_id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`, params);
    return finishPage(
      found.map((r) => r[0] as number),
      forward,
    );
  }
}
