import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { accounts, type AccountRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { forbidden, notFound, validationFailed } from "../../errors.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import { finishPage, type Page } from "../../infra/pagination.ts";
import type { EventBus } from "../../infra/events.ts";
import type { ListedAccount, Relationship } from "../../models/views.ts";
import { assembleRelationships, relationshipFacts } from "./follow-relationships.ts";

const ACCOUNT = rowReader(accounts);
/** Where a listed row's cursor is: after the account's columns. */
const CURSOR = ACCOUNT.columns.split(", ").length;

export interface FollowOptions {
  reblogs?: boolean;
  notify?: boolean;
  languages?: string[] | null;
}

/**
 * Follows and follow requests. On the database port (issue 31): what the routes, the CLI,
 * imports, inbound federation and the `within` listeners call, and `followedAmong` (visibility,
 * quote policy), and `following` (ModerationService's `silences`).
 */
export class FollowService {
  /** The statements the routes run on every request, prepared once (docs/architecture.md, the database port). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {
    const t = port.tables;
    const orm = port.orm;
    const accountId = sql.placeholder("accountId");
    const targetId = sql.placeholder("targetId");
    const row = {
      id: sql.placeholder("id"),
      accountId,
      targetAccountId: targetId,
      showReblogs: sql.placeholder("showReblogs"),
      notify: sql.placeholder("notify"),
      languages: sql.placeholder("languages"),
      createdAt: sql.placeholder("createdAt"),
    };
    this.q = {
      target: orm.select({ locked: t.accounts.locked, domain: t.accounts.domain }).from(t.accounts).where(eq(t.accounts.id, targetId)).prepare(),
      follow: orm.select().from(t.follows).where(and(eq(t.follows.accountId, accountId), eq(t.follows.targetAccountId, targetId))).prepare(),
      request: orm
        .select()
        .from(t.followRequests)
        .where(and(eq(t.followRequests.accountId, accountId), eq(t.followRequests.targetAccountId, targetId)))
        .prepare(),
      // Nothing when the pair is there already: two follows of one pair at once (a double tap, a
      // Follow delivered twice) both find it absent on PostgreSQL; the second then finds it stored.
      insertFollow: orm.insert(t.follows).values(row).onConflictDoNothing().prepare(),
      insertRequest: orm.insert(t.followRequests).values(row).onConflictDoNothing().prepare(),
      deleteFollow: orm.delete(t.follows).where(and(eq(t.follows.accountId, accountId), eq(t.follows.targetAccountId, targetId))).prepare(),
      deleteRequest: orm
        .delete(t.followRequests)
        .where(and(eq(t.followRequests.accountId, accountId), eq(t.followRequests.targetAccountId, targetId)))
        .prepare(),
      deleteRequestById: orm.delete(t.followRequests).where(eq(t.followRequests.id, sql.placeholder("id"))).prepare(),
    };
  }

  /** Does `accountId` follow `targetId`? */
  async following(accountId: number, targetId: number): Promise<boolean> {
    return (await this.q.follow.execute({ accountId, targetId })).length > 0;
  }

  /** Whether either account blocks the other (the follow is refused), read through the port. */
  private async blockedEitherWay(a: number, b: number): Promise<boolean> {
    const row = await this.port.get(
      "SELECT 1 AS one FROM blocks WHERE (account_id = ? AND target_account_id = ?) OR (account_id = ? AND target_account_id = ?) LIMIT 1",
      [a, b, b, a],
    );
    return row !== undefined;
  }

  /**
   * Follows at once, or asks when the target is locked; following again updates the options
   * (reblogs, notify, languages) of the follow or the pending request.
   */
  async follow(actorId: number, targetId: number, options: FollowOptions): Promise<Relationship> {
    if (actorId === targetId) throw notFound();
    const [target] = await this.q.target.execute({ targetId });
    if (!target) throw notFound();
    if (await this.blockedEitherWay(actorId, targetId)) throw forbidden();
    if (options.languages && (options.languages.length > 100 || options.languages.some((l) => normalizeLanguage(l) !== l))) {
      throw validationFailed("Languages is invalid");
    }

    const values = {
      showReblogs: options.reblogs,
      notify: options.notify,
      languages: options.languages === undefined ? undefined : options.languages === null ? null : JSON.stringify(options.languages),
    };
    const set = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
    const { follows: followRows, followRequests: requestRows } = this.port.tables;
    /** Following again: the options given change on the follow or request that stands. */
    const updateOptions = async (table: typeof followRows | typeof requestRows) => {
      if (Object.keys(set).length) await this.port.orm.update(table).set(set).where(and(eq(table.accountId, actorId), eq(table.targetAccountId, targetId)));
    };

    await this.port.transaction(async () => {
      if ((await this.q.follow.execute({ accountId: actorId, targetId })).length) return updateOptions(followRows);
      if ((await this.q.request.execute({ accountId: actorId, targetId })).length) return updateOptions(requestRows);
      const row = {
        id: this.ids.next(),
        accountId: actorId,
        targetId,
        showReblogs: options.reblogs ?? true,
        notify: options.notify ?? false,
        languages: values.languages ?? null,
        createdAt: this.clock.now(),
      };
      // A remote account answers a follow with Accept: requested until then. Counted and told
      // only by the insert that wrote the row; one that found it written meanwhile updates it.
      if (target.locked || target.domain !== null) {
        if (this.port.changes(await this.q.insertRequest.execute(row)) === 0) return updateOptions(requestRows);
        await this.events.emit({ type: "follow_request.created", accountId: actorId, targetAccountId: targetId });
      } else {
        if (this.port.changes(await this.q.insertFollow.execute(row)) === 0) return updateOptions(followRows);
        await this.adjustCounts(actorId, targetId, 1);
        await this.events.emit({ type: "follow.created", accountId: actorId, targetAccountId: targetId });
      }
    });
    return this.relationship(actorId, targetId);
  }

  async unfollow(actorId: number, targetId: number): Promise<Relationship> {
    if ((await this.q.target.execute({ targetId })).length === 0) throw notFound();
    await this.removeFollow(actorId, targetId);
    await this.q.deleteRequest.execute({ accountId: actorId, targetId });
    return this.relationship(actorId, targetId);
  }

  /** Ends `accountId`'s follow of `targetId`, counted back and announced (follow.removed); nothing when there is none. */
  async removeFollow(accountId: number, targetId: number): Promise<void> {
    await this.port.transaction(async () => {
      const deleted = await this.q.deleteFollow.execute({ accountId, targetId });
      if (this.port.changes(deleted) === 0) return;
      await this.adjustCounts(accountId, targetId, -1);
      await this.events.emit({ type: "follow.removed", accountId, targetAccountId: targetId });
    });
  }

  /** The follow requests between the two, either way, withdrawn. */
  async removeFollowRequests(accountId: number, targetId: number): Promise<void> {
    await this.port.run(
      "DELETE FROM follow_requests WHERE (account_id = ? AND target_account_id = ?) OR (account_id = ? AND target_account_id = ?)",
      [accountId, targetId, targetId, accountId],
    );
  }

  /** Followers' and followees' counters, never below zero (portable: no two-argument max). */
  private async adjustCounts(followerId: number, targetId: number, delta: number) {
    await this.port.run("UPDATE accounts SET following_count = CASE WHEN following_count + ? < 0 THEN 0 ELSE following_count + ? END WHERE id = ?", [delta, delta, followerId]);
    await this.port.run("UPDATE accounts SET followers_count = CASE WHEN followers_count + ? < 0 THEN 0 ELSE followers_count + ? END WHERE id = ?", [delta, delta, targetId]);
  }

  async authorizeRequest(targetId: number, requesterId: number): Promise<Relationship> {
    if (!(await this.authorize(targetId, requesterId))) throw notFound();
    return this.relationship(targetId, requesterId);
  }

  /** An account that stopped being locked takes every pending request, as Mastodon does (account.unlocked's `within` listener). */
  async authorizeAll(targetId: number): Promise<void> {
    const pending = await this.port.all<{ account_id: number }>("SELECT account_id FROM follow_requests WHERE target_account_id = ?", [targetId]);
    for (const { account_id } of pending) await this.authorize(targetId, account_id);
  }

  /** The request becomes a follow; false when there was none. */
  private authorize(targetId: number, requesterId: number): Promise<boolean> {
    return this.port.transaction(async () => {
      const [request] = await this.q.request.execute({ accountId: requesterId, targetId });
      if (!request) return false;
      // The request's deletion is the claim: of two authorizations at once, the one that
      // deleted nothing finds it answered (and the follow is counted and told once).
      if (this.port.changes(await this.q.deleteRequestById.execute({ id: request.id })) === 0) return false;
      const inserted = await this.q.insertFollow.execute({ ...request, targetId, id: this.ids.next(), createdAt: this.clock.now() });
      if (this.port.changes(inserted) > 0) await this.adjustCounts(requesterId, targetId, 1);
      await this.events.emit({ type: "follow_request.authorized", accountId: requesterId, targetAccountId: targetId });
      return true;
    });
  }

  async rejectRequest(targetId: number, requesterId: number): Promise<Relationship> {
    const removed = await this.q.deleteRequest.execute({ accountId: requesterId, targetId });
    if (this.port.changes(removed) === 0) throw notFound();
    await this.events.emit({ type: "follow_request.rejected", accountId: requesterId, targetAccountId: targetId });
    return this.relationship(targetId, requesterId);
  }

  /** Raw SQL read by rowReader: a builder selecting whole accounts rows costs far more than running it. */
  private async listed(from: string, cursor: string, where: string[], params: unknown[], page: Page): Promise<ListedAccount[]> {
    if (page.maxId !== undefined) (where.push(`${cursor} < ?`), params.push(page.maxId));
    if (page.sinceId !== undefined) (where.push(`${cursor} > ?`), params.push(page.sinceId));
    if (page.minId !== undefined) (where.push(`${cursor} > ?`), params.push(page.minId));
    const forward = page.minId !== undefined;
    const rows = await this.port.values(`SELECT ${ACCOUNT.columns}, ${cursor} ${from} WHERE ${where.join(" AND ")} ORDER BY ${cursor} ${forward ? "ASC" : "DESC"} LIMIT ?`, [
      ...params,
      page.limit,
    ]);
    return finishPage(
      rows.map((r) => ({ account: ACCOUNT.map(r), cursor: Number(r[CURSOR]) })),
      forward,
    );
  }

  async pendingRequests(targetId: number, page: Page): Promise<ListedAccount[]> {
    return this.listed("FROM follow_requests r JOIN accounts ON accounts.id = r.account_id", "r.id", ["r.target_account_id = ?"], [targetId], page);
  }

  /** How many wait for the account's answer, counted up to `cap` (the credential account's follow_requests_count). */
  async pendingRequestCount(targetId: number, cap: number): Promise<number> {
    const row = await this.port.get<{ n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM follow_requests WHERE target_account_id = ? LIMIT ?) AS waiting`, [targetId, cap]);
    return Number(row?.n ?? 0);
  }

  /** Followers (who follow `accountId`) or following (whom it follows), newest follow first. */
  async listFollows(accountId: number, direction: "followers" | "following", page: Page, excludeIds: Set<number> = new Set()): Promise<ListedAccount[]> {
    const [ownSide, otherSide] = direction === "followers" ? ["f.target_account_id", "f.account_id"] : ["f.account_id", "f.target_account_id"];
    const exclude = [...excludeIds];
    const where = [`${ownSide} = ?`];
    if (exclude.length) where.push(`${otherSide} NOT IN (${exclude.map(() => "?").join(", ")})`);
    return this.listed(`FROM follows f JOIN accounts ON accounts.id = ${otherSide}`, "f.id", where, [accountId, ...exclude], page);
  }

  /** Ids among `accountIds` that `viewerId` follows. */
  async followedAmong(viewerId: number, accountIds: number[]): Promise<Set<number>> {
    if (accountIds.length === 0) return new Set();
    const size = paddedSize(accountIds.length);
    const found = await this.port.values(`SELECT target_account_id FROM follows WHERE account_id = ? AND target_account_id IN (${marks(size)})`, [viewerId, ...padded(accountIds, size)]);
    return new Set(found.map((r) => r[0] as number));
  }

  /**
   * For each target, the accounts the viewer follows that follow it (Mastodon's familiar
   * followers); a target that hides its collections shows none.
   */
  async familiarFollowers(viewerId: number, targets: AccountRow[]): Promise<Map<number, AccountRow[]>> {
    const out = new Map<number, AccountRow[]>(targets.map((t) => [t.id, []]));
    const open = targets.filter((t) => !t.hideCollections).map((t) => t.id);
    if (open.length === 0) return out;
    const rows = await this.port.values(
      `SELECT ${ACCOUNT.columns}, f.target_account_id FROM follows f JOIN accounts ON accounts.id = f.account_id
       WHERE f.target_account_id IN (${open.map(() => "?").join(", ")})
         AND f.account_id IN (SELECT target_account_id FROM follows WHERE account_id = ?)
       ORDER BY f.id`,
      [...open, viewerId],
    );
    for (const r of rows) out.get(Number(r[CURSOR]))?.push(ACCOUNT.map(r));
    return out;
  }

  async relationship(viewerId: number, targetId: number): Promise<Relationship> {
    return (await this.relationships(viewerId, [targetId]))[0] as Relationship;
  }

  async relationships(viewerId: number, targetIds: number[]): Promise<Relationship[]> {
    const ids = [...new Set(targetIds)];
    if (ids.length === 0) return [];
    return assembleRelationships(targetIds, await relationshipFacts(this.port, viewerId, ids, this.clock.now()));
  }

}
