import { and, eq, inArray, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import { changes, type Db } from "../../db/connection.ts";
import { accountPins, accounts, followRequests, follows, type AccountRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { forbidden, notFound, validationFailed } from "../../errors.ts";
import { inJsonList, jsonList } from "../../db/prepared.ts";
import { normalizeLanguage } from "../../text/languages.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { EventBus } from "../../infra/events.ts";
import type { ListedAccount, Relationship } from "../../models/views.ts";

export interface FollowOptions {
  reblogs?: boolean;
  notify?: boolean;
  languages?: string[] | null;
}

/** Block and mute state comes from the moderation service once it exists; follows ask it. */
export interface RelationshipFilters {
  blocked(viewerId: number, targetIds: number[]): { blocking: Set<number>; blockedBy: Set<number> };
  muted(viewerId: number, targetIds: number[]): Map<number, { notifications: boolean }>;
  /** Everyone the viewer blocks, mutes or is blocked by. */
  hiddenAccounts?(viewerId: number): Set<number>;
  /** Of `targetIds`, the accounts on a domain the viewer blocks. */
  domainBlocking?(viewerId: number, targetIds: number[]): Set<number>;
}

const noFilters: RelationshipFilters = {
  blocked: () => ({ blocking: new Set(), blockedBy: new Set() }),
  muted: () => new Map(),
};

export class FollowService {
  filters: RelationshipFilters = noFilters;
  private followedQuery;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {
    this.followedQuery = db
      .select({ id: follows.targetAccountId })
      .from(follows)
      .where(and(eq(follows.accountId, sql.placeholder("viewer")), inJsonList(follows.targetAccountId, "ids")))
      .prepare();
  }

  isFollowing(accountId: number, targetId: number): boolean {
    return !!this.db
      .select({ id: follows.id })
      .from(follows)
      .where(and(eq(follows.accountId, accountId), eq(follows.targetAccountId, targetId)))
      .get();
  }

  /**
   * Follows at once, or asks when the target is locked; following again updates the options
   * (reblogs, notify, languages) of the follow or the pending request.
   */
  follow(actorId: number, targetId: number, options: FollowOptions): Relationship {
    if (actorId === targetId) throw notFound();
    const target = this.db.select().from(accounts).where(eq(accounts.id, targetId)).get();
    if (!target) throw notFound();
    const blocks = this.filters.blocked(actorId, [targetId]);
    if (blocks.blocking.has(targetId) || blocks.blockedBy.has(targetId)) throw forbidden();
    if (options.languages && (options.languages.length > 100 || options.languages.some((l) => normalizeLanguage(l) !== l))) {
      throw validationFailed("Languages is invalid");
    }

    const values = {
      showReblogs: options.reblogs,
      notify: options.notify,
      languages: options.languages === undefined ? undefined : options.languages === null ? null : JSON.stringify(options.languages),
    };
    const set = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
    let created: "follow" | "request" | null = null;

    this.db.transaction((tx) => {
      const existing = tx.select().from(follows).where(and(eq(follows.accountId, actorId), eq(follows.targetAccountId, targetId))).get();
      if (existing) {
        if (Object.keys(set).length) tx.update(follows).set(set).where(eq(follows.id, existing.id)).run();
        return;
      }
      const pending = tx
        .select()
        .from(followRequests)
        .where(and(eq(followRequests.accountId, actorId), eq(followRequests.targetAccountId, targetId)))
        .get();
      if (pending) {
        if (Object.keys(set).length) tx.update(followRequests).set(set).where(eq(followRequests.id, pending.id)).run();
        return;
      }
      const row = {
        id: this.ids.next(),
        accountId: actorId,
        targetAccountId: targetId,
        showReblogs: options.reblogs ?? true,
        notify: options.notify ?? false,
        languages: values.languages ?? null,
        createdAt: this.clock.now(),
      };
      // A remote account answers a follow with Accept: requested until then.
      if (target.locked || target.domain !== null) {
        tx.insert(followRequests).values(row).run();
        created = "request";
      } else {
        tx.insert(follows).values(row).run();
        adjustFollowCounts(tx, actorId, targetId, 1);
        created = "follow";
      }
      if (created) this.events.emit({ type: created === "follow" ? "follow.created" : "follow_request.created", accountId: actorId, targetAccountId: targetId });
    });
    return this.relationship(actorId, targetId);
  }

  unfollow(actorId: number, targetId: number): Relationship {
    if (!this.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, targetId)).get()) throw notFound();
    this.removeFollow(actorId, targetId);
    this.db
      .delete(followRequests)
      .where(and(eq(followRequests.accountId, actorId), eq(followRequests.targetAccountId, targetId)))
      .run();
    return this.relationship(actorId, targetId);
  }

  /** Removes a follow in either direction and keeps the counters right (blocks use it too). */
  removeFollow(accountId: number, targetId: number) {
    this.db.transaction((tx) => {
      const deleted = tx
        .delete(follows)
        .where(and(eq(follows.accountId, accountId), eq(follows.targetAccountId, targetId)))
        .run();
      if (changes(deleted) === 0) return;
      adjustFollowCounts(tx, accountId, targetId, -1);
      this.events.emit({ type: "follow.removed", accountId, targetAccountId: targetId });
    });
  }

  removeFollowRequests(accountId: number, targetId: number) {
    this.db
      .delete(followRequests)
      .where(
        sql`(${followRequests.accountId} = ${accountId} AND ${followRequests.targetAccountId} = ${targetId}) OR (${followRequests.accountId} = ${targetId} AND ${followRequests.targetAccountId} = ${accountId})`,
      )
      .run();
  }

  authorizeRequest(targetId: number, requesterId: number): Relationship {
    let accepted = false;
    this.db.transaction((tx) => {
      const request = tx
        .select()
        .from(followRequests)
        .where(and(eq(followRequests.accountId, requesterId), eq(followRequests.targetAccountId, targetId)))
        .get();
      if (!request) return;
      tx.delete(followRequests).where(eq(followRequests.id, request.id)).run();
      const already = tx
        .select({ id: follows.id })
        .from(follows)
        .where(and(eq(follows.accountId, requesterId), eq(follows.targetAccountId, targetId)))
        .get();
      if (!already) {
        tx.insert(follows)
          .values({ ...request, id: this.ids.next(), createdAt: this.clock.now() })
          .run();
        adjustFollowCounts(tx, requesterId, targetId, 1);
      }
      accepted = true;
      this.events.emit({ type: "follow_request.authorized", accountId: requesterId, targetAccountId: targetId });
    });
    if (!accepted) throw notFound();
    return this.relationship(targetId, requesterId);
  }

  /** An account that stopped being locked takes every pending request, as Mastodon does. */
  authorizeAll(targetId: number) {
    const pending = this.db.select({ id: followRequests.accountId }).from(followRequests).where(eq(followRequests.targetAccountId, targetId)).all();
    for (const { id } of pending) this.authorizeRequest(targetId, id);
  }

  rejectRequest(targetId: number, requesterId: number): Relationship {
    const removed = this.db
      .delete(followRequests)
      .where(and(eq(followRequests.accountId, requesterId), eq(followRequests.targetAccountId, targetId)))
      .run();
    if (changes(removed) === 0) throw notFound();
    this.events.emit({ type: "follow_request.rejected", accountId: requesterId, targetAccountId: targetId });
    return this.relationship(targetId, requesterId);
  }

  pendingRequests(targetId: number, page: Page): ListedAccount[] {
    const q = pageQuery(followRequests.id, page);
    const rows = this.db
      .select({ account: accounts, cursor: followRequests.id })
      .from(followRequests)
      .innerJoin(accounts, eq(accounts.id, followRequests.accountId))
      .where(and(eq(followRequests.targetAccountId, targetId), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse);
  }

  pendingRequestCount(targetId: number, cap: number): number {
    const row = this.db
      .select({ n: sql<number>`count(*)` })
      .from(sql`(SELECT 1 FROM ${followRequests} WHERE ${followRequests.targetAccountId} = ${targetId} LIMIT ${cap})`)
      .get();
    return row?.n ?? 0;
  }

  /** Followers (who follow `accountId`) or following (whom it follows), newest follow first. */
  listFollows(accountId: number, direction: "followers" | "following", page: Page, excludeIds: Set<number> = new Set()): ListedAccount[] {
    const q = pageQuery(follows.id, page);
    const ownSide = direction === "followers" ? follows.targetAccountId : follows.accountId;
    const otherSide = direction === "followers" ? follows.accountId : follows.targetAccountId;
    const exclude = [...excludeIds];
    const rows = this.db
      .select({ account: accounts, cursor: follows.id })
      .from(follows)
      .innerJoin(accounts, eq(accounts.id, otherSide))
      .where(and(eq(ownSide, accountId), q.where, exclude.length ? sql`${otherSide} NOT IN ${exclude}` : undefined))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse);
  }

  /** Ids among `accountIds` that `viewerId` follows. */
  followedAmong(viewerId: number, accountIds: number[]): Set<number> {
    if (accountIds.length === 0) return new Set();
    return new Set(this.followedQuery.all({ viewer: viewerId, ids: jsonList(accountIds) }).map((r) => r.id));
  }

  /**
   * For each target, the accounts the viewer follows that follow it (Mastodon's familiar
   * followers); a target that hides its collections shows none.
   */
  familiarFollowers(viewerId: number, targets: AccountRow[]): Map<number, AccountRow[]> {
    const out = new Map<number, AccountRow[]>(targets.map((t) => [t.id, []]));
    const open = targets.filter((t) => !t.hideCollections).map((t) => t.id);
    if (open.length === 0) return out;
    const rows = this.db
      .select({ target: follows.targetAccountId, account: accounts })
      .from(follows)
      .innerJoin(accounts, eq(accounts.id, follows.accountId))
      .where(
        and(
          inArray(follows.targetAccountId, open),
          inArray(follows.accountId, this.db.select({ id: follows.targetAccountId }).from(follows).where(eq(follows.accountId, viewerId))),
        ),
      )
      .orderBy(follows.id)
      .all();
    for (const r of rows) out.get(r.target)?.push(r.account);
    return out;
  }

  relationship(viewerId: number, targetId: number): Relationship {
    return this.relationships(viewerId, [targetId])[0] as Relationship;
  }

  relationships(viewerId: number, targetIds: number[]): Relationship[] {
    const ids = [...new Set(targetIds)];
    if (ids.length === 0) return [];
    const outgoing = this.db
      .select()
      .from(follows)
      .where(and(eq(follows.accountId, viewerId), inArray(follows.targetAccountId, ids)))
      .all();
    const incoming = this.db
      .select({ id: follows.accountId })
      .from(follows)
      .where(and(eq(follows.targetAccountId, viewerId), inArray(follows.accountId, ids)))
      .all();
    const requested = this.db
      .select()
      .from(followRequests)
      .where(and(eq(followRequests.accountId, viewerId), inArray(followRequests.targetAccountId, ids)))
      .all();
    const requestedBy = this.db
      .select({ id: followRequests.accountId })
      .from(followRequests)
      .where(and(eq(followRequests.targetAccountId, viewerId), inArray(followRequests.accountId, ids)))
      .all();
    const blocks = this.filters.blocked(viewerId, ids);
    const mutes = this.filters.muted(viewerId, ids);
    const domainBlocking = this.filters.domainBlocking?.(viewerId, ids) ?? new Set<number>();
    const endorsed = new Set(
      this.db
        .select({ id: accountPins.targetAccountId })
        .from(accountPins)
        .where(and(eq(accountPins.accountId, viewerId), inArray(accountPins.targetAccountId, ids)))
        .all()
        .map((r) => r.id),
    );
    const followedBy = new Set(incoming.map((r) => r.id));
    const requestedById = new Set(requestedBy.map((r) => r.id));
    return targetIds.map((id) => {
      const follow = outgoing.find((f) => f.targetAccountId === id);
      const request = requested.find((f) => f.targetAccountId === id);
      const source = follow ?? request;
      const mute = mutes.get(id);
      return {
        id,
        following: !!follow,
        showingReblogs: source ? source.showReblogs : false,
        notifying: source ? source.notify : false,
        languages: source?.languages ? (JSON.parse(source.languages) as string[]) : null,
        followedBy: followedBy.has(id),
        blocking: blocks.blocking.has(id),
        blockedBy: blocks.blockedBy.has(id),
        muting: !!mute,
        mutingNotifications: mute?.notifications ?? false,
        requested: !!request,
        requestedBy: requestedById.has(id),
        domainBlocking: domainBlocking.has(id),
        endorsed: endorsed.has(id),
      };
    });
  }
}

function adjustFollowCounts(tx: Pick<Db, "update">, followerId: number, targetId: number, delta: number) {
  tx.update(accounts)
    .set({ followingCount: sql`max(0, ${accounts.followingCount} + ${delta})` })
    .where(eq(accounts.id, followerId))
    .run();
  tx.update(accounts)
    .set({ followersCount: sql`max(0, ${accounts.followersCount} + ${delta})` })
    .where(eq(accounts.id, targetId))
    .run();
}
