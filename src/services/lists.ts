import { and, count, eq, inArray } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import { accounts, follows, followRequests, listAccounts, listFeed, lists, type AccountRow, type ListRow, type StatusRow } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { ApiError, notFound, validationFailed } from "../errors.ts";
import type { EventBus } from "../infra/events.ts";
import { finishPage, pageQuery, type Page } from "../infra/pagination.ts";
import { visibleToSql } from "./statuses/visibility.ts";
import { remoteDomainsBlocked } from "./statuses/home-feed.ts";

export const REPLIES_POLICIES = ["followed", "list", "none"] as const;
const MAX_LISTS = 50;
const MAX_TITLE = 256;
const BACKFILL = 400;

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
  /** Whether the account is in anyone's list: most authors are in none, and then delivery asks nothing more. */
  private inAnyList;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {
    this.inAnyList = db.$client.query<{ one: number }, [number]>("SELECT 1 AS one FROM list_accounts WHERE account_id = ? LIMIT 1");
  }

  all(accountId: number): ListRow[] {
    return this.db.select().from(lists).where(eq(lists.accountId, accountId)).orderBy(lists.id).all();
  }

  own(accountId: number, id: number | null): ListRow {
    const row = id === null ? undefined : this.db.select().from(lists).where(and(eq(lists.id, id), eq(lists.accountId, accountId))).get();
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

  create(accountId: number, input: ListInput): ListRow {
    this.validate(input, true);
    const existing = this.db.select({ n: count() }).from(lists).where(eq(lists.accountId, accountId)).get()?.n ?? 0;
    if (existing >= MAX_LISTS) throw validationFailed("You have reached the maximum number of lists");
    const row: ListRow = {
      id: this.ids.next(),
      accountId,
      title: (input.title ?? "").trim(),
      repliesPolicy: input.repliesPolicy ?? "list",
      exclusive: input.exclusive ?? false,
      createdAt: this.clock.now(),
    };
    this.db.insert(lists).values(row).run();
    return row;
  }

  update(accountId: number, id: number | null, input: ListInput): ListRow {
    const row = this.own(accountId, id);
    this.validate(input, false);
    const changes: Partial<ListRow> = {};
    if (input.title !== undefined) changes.title = input.title.trim();
    if (input.repliesPolicy !== undefined) changes.repliesPolicy = input.repliesPolicy;
    if (input.exclusive !== undefined) changes.exclusive = input.exclusive;
    if (Object.keys(changes).length) this.db.update(lists).set(changes).where(eq(lists.id, row.id)).run();
    return { ...row, ...changes };
  }

  remove(accountId: number, id: number | null) {
    const row = this.own(accountId, id);
    this.db.delete(lists).where(eq(lists.id, row.id)).run();
  }

  members(accountId: number, id: number | null, page: Page): { account: AccountRow; cursor: number }[] {
    const list = this.own(accountId, id);
    const q = pageQuery(listAccounts.accountId, page);
    const rows = this.db
      .select({ account: accounts, cursor: listAccounts.accountId })
      .from(listAccounts)
      .innerJoin(accounts, eq(accounts.id, listAccounts.accountId))
      .where(and(eq(listAccounts.listId, list.id), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse);
  }

  /** Adds accounts the owner follows (or has asked to follow); all or nothing. */
  addMembers(accountId: number, id: number | null, accountIds: number[]) {
    const list = this.own(accountId, id);
    const unique = [...new Set(accountIds)];
    if (unique.length === 0) return;
    const known = new Set(this.db.select({ id: accounts.id }).from(accounts).where(inArray(accounts.id, unique)).all().map((r) => r.id));
    if (unique.some((a) => !known.has(a))) throw notFound();
    const followed = new Set([
      ...this.db.select({ id: follows.targetAccountId }).from(follows).where(and(eq(follows.accountId, accountId), inArray(follows.targetAccountId, unique))).all().map((r) => r.id),
      ...this.db
        .select({ id: followRequests.targetAccountId })
        .from(followRequests)
        .where(and(eq(followRequests.accountId, accountId), inArray(followRequests.targetAccountId, unique)))
        .all()
        .map((r) => r.id),
    ]);
    const present = new Set(
      this.db.select({ id: listAccounts.accountId }).from(listAccounts).where(and(eq(listAccounts.listId, list.id), inArray(listAccounts.accountId, unique))).all().map((r) => r.id),
    );
    const errors: string[] = [];
    if (unique.some((a) => a !== accountId && !followed.has(a))) errors.push("Account must be a followed account");
    if (unique.some((a) => present.has(a))) errors.push("Account is already on the list");
    if (errors.length) throw new ApiError(422, `Validation failed: ${errors.join(", ")}`);
    this.db.transaction((tx) => {
      for (const member of unique) tx.insert(listAccounts).values({ listId: list.id, accountId: member, createdAt: this.clock.now() }).run();
    });
    for (const member of unique) this.backfill(list, member);
  }

  removeMembers(accountId: number, id: number | null, accountIds: number[]) {
    const list = this.own(accountId, id);
    if (accountIds.length === 0) return;
    this.db.transaction((tx) => {
      tx.delete(listAccounts).where(and(eq(listAccounts.listId, list.id), inArray(listAccounts.accountId, accountIds))).run();
      tx.delete(listFeed).where(and(eq(listFeed.listId, list.id), inArray(listFeed.authorId, accountIds))).run();
    });
  }

  /** After an unfollow: the account leaves the follower's lists (as Mastodon ties list membership to the follow). */
  forgetFollow(ownerId: number, targetId: number) {
    const owned = this.all(ownerId).map((l) => l.id);
    if (owned.length === 0) return;
    this.db.transaction((tx) => {
      tx.delete(listAccounts).where(and(inArray(listAccounts.listId, owned), eq(listAccounts.accountId, targetId))).run();
      tx.delete(listFeed).where(and(inArray(listFeed.listId, owned), eq(listFeed.authorId, targetId))).run();
    });
  }

  /** Lists of `ownerId` that `accountId` is in (GET /api/v1/accounts/:id/lists). */
  containing(ownerId: number, accountId: number): ListRow[] {
    return this.db
      .select({ list: lists })
      .from(listAccounts)
      .innerJoin(lists, eq(lists.id, listAccounts.listId))
      .where(and(eq(lists.accountId, ownerId), eq(listAccounts.accountId, accountId)))
      .all()
      .map((r) => r.list);
  }

  /**
   * Puts a new status into the lists that follow its author, under each list's replies
   * policy; direct statuses never go to lists. Returns the lists it went into.
   */
  deliver(status: StatusRow, original: StatusRow | null): number[] {
    if (status.visibility === "direct" || !this.inAnyList.get(status.accountId)) return [];
    const replyTo = !original && status.inReplyToAccountId !== null && status.inReplyToAccountId !== status.accountId ? status.inReplyToAccountId : null;
    const origin = original?.accountId ?? status.accountId;
    const rows = this.db.$client
      .query<{ id: number }, Record<string, number | null>>(
        `SELECT l.id AS id FROM list_accounts la JOIN lists l ON l.id = la.list_id
         WHERE la.account_id = $author
           AND EXISTS (SELECT 1 FROM follows f WHERE f.account_id = l.account_id AND f.target_account_id = $author)
           AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = l.account_id AND b.target_account_id IN ($author, $origin))
           AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = l.account_id AND m.target_account_id IN ($author, $origin) AND (m.expires_at IS NULL OR m.expires_at > $now))
           ${remoteDomainsBlocked("l.account_id", status, original).map((c) => `AND ${c}`).join(" ")}
           AND ($replyTo IS NULL
             OR $replyTo = l.account_id
             OR (l.replies_policy = 'followed' AND EXISTS (SELECT 1 FROM follows f2 WHERE f2.account_id = l.account_id AND f2.target_account_id = $replyTo))
             OR (l.replies_policy = 'list' AND EXISTS (SELECT 1 FROM list_accounts la2 WHERE la2.list_id = l.id AND la2.account_id = $replyTo)))`,
      )
      .all({ author: status.accountId, origin, now: this.clock.now(), replyTo });
    const listIds = rows.map((r) => r.id);
    if (listIds.length === 0) return [];
    this.db.$client
      .query("INSERT OR IGNORE INTO list_feed (list_id, status_id, author_id) SELECT value, $status, $author FROM json_each($lists)")
      .run({ status: status.id, author: status.accountId, lists: JSON.stringify(listIds) });
    this.events.emit({ type: "list.delivered", status, listIds });
    return listIds;
  }

  /** list id -> owner, for lists a stream is about to be told of. */
  owners(listIds: number[]): Map<number, number> {
    if (listIds.length === 0) return new Map();
    return new Map(this.db.select({ id: lists.id, owner: lists.accountId }).from(lists).where(inArray(lists.id, listIds)).all().map((r) => [r.id, r.owner]));
  }

  /** Does the account own the list (may it stream it)? */
  owns(accountId: number, listId: number): boolean {
    return !!this.db.select({ id: lists.id }).from(lists).where(and(eq(lists.id, listId), eq(lists.accountId, accountId))).get();
  }

  /** The lists whose timelines hold the status (for the delete events of streams). */
  holding(statusId: number): number[] {
    return this.db.select({ id: listFeed.listId }).from(listFeed).where(eq(listFeed.statusId, statusId)).all().map((r) => r.id);
  }

  /** A new member brings their recent statuses the owner may see, less direct messages (as home feeds). */
  private backfill(list: ListRow, memberId: number) {
    this.db.$client
      .query(
        `INSERT OR IGNORE INTO list_feed (list_id, status_id, author_id)
         SELECT $list, s.id, s.account_id FROM statuses s
         WHERE s.account_id = $member AND ${visibleToSql("s", "$owner")} AND s.visibility <> 'direct'
         ORDER BY s.id DESC LIMIT ${BACKFILL}`,
      )
      .run({ list: list.id, member: memberId, owner: list.accountId });
  }

  page(accountId: number, id: number | null, page: Page): number[] {
    const list = this.own(accountId, id);
    const q = pageQuery(listFeed.statusId, page);
    const rows = this.db
      .select({ id: listFeed.statusId })
      .from(listFeed)
      .where(and(eq(listFeed.listId, list.id), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all()
      .map((r) => r.id);
    return finishPage(rows, q.reverse);
  }
}
