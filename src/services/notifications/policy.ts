import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import {
  accounts,
  follows,
  notificationPermissions,
  notificationPolicies,
  notificationRequests,
  notifications,
  statuses,
  type NotificationPolicyRow,
  type NotificationRequestRow,
} from "../../db/schema.ts";
import { notFound, validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import { finishPage, pageQuery, type Page } from "../pagination.ts";

export type PolicyLevel = "accept" | "filter" | "drop";
const LEVELS: readonly PolicyLevel[] = ["accept", "filter", "drop"];

export const POLICY_FIELDS = ["for_not_following", "for_not_followers", "for_new_accounts", "for_private_mentions", "for_limited_accounts"] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];
export type Policy = Record<PolicyField, PolicyLevel>;

/** Mastodon's Notification::PROPERTIES filterable types: the rest always pass. */
const FILTERABLE = new Set(["mention", "reblog", "follow", "follow_request", "favourite"]);
const NEW_ACCOUNT_MS = 30 * 24 * 3600 * 1000;
const NEW_FOLLOWER_MS = 3 * 24 * 3600 * 1000;
/** Mastodon counts pending requests and notifications up to this (NotificationPolicy::MAX_MEANINGFUL_COUNT). */
const MAX_MEANINGFUL_COUNT = 100;

const DEFAULTS: Policy = { for_not_following: "accept", for_not_followers: "accept", for_new_accounts: "accept", for_private_mentions: "filter", for_limited_accounts: "filter" };

function fromRow(row: NotificationPolicyRow | undefined): Policy {
  if (!row) return { ...DEFAULTS };
  return {
    for_not_following: row.forNotFollowing as PolicyLevel,
    for_not_followers: row.forNotFollowers as PolicyLevel,
    for_new_accounts: row.forNewAccounts as PolicyLevel,
    for_private_mentions: row.forPrivateMentions as PolicyLevel,
    for_limited_accounts: row.forLimitedAccounts as PolicyLevel,
  };
}

/**
 * Mastodon 4.3's notification policy (NotifyService's DropCondition and FilterCondition): a
 * filterable notification from a sender the recipient did not accept before is dropped or held
 * back when a rule of the policy matches it. Held back, it counts towards a request per sender,
 * which the recipient accepts (its notifications come into the list, and the sender passes from
 * then on) or dismisses (they are deleted).
 *
 * Two simplifications, said here: Rookery limits no accounts, so `for_limited_accounts` never
 * matches; a private mention counts as "in response" when it replies to a status of the
 * recipient's (Mastodon also looks for earlier mentions of the sender up the thread).
 */
export class NotificationPolicies {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
  ) {}

  get(accountId: number): Policy {
    return fromRow(this.db.select().from(notificationPolicies).where(eq(notificationPolicies.accountId, accountId)).get());
  }

  /** Sets the fields given; each must be accept, filter or drop (Mastodon's 422 otherwise). */
  update(accountId: number, changes: Partial<Record<PolicyField, string>>): Policy {
    const errors: string[] = [];
    for (const [field, value] of Object.entries(changes)) {
      if (value !== undefined && !LEVELS.includes(value as PolicyLevel)) errors.push(`${field.replace(/^for_/, "For ").replace(/_/g, " ")} is not included in the list`);
    }
    if (errors.length) throw validationFailed(...errors);
    const next = { ...this.get(accountId), ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) } as Policy;
    const row = {
      accountId,
      forNotFollowing: next.for_not_following,
      forNotFollowers: next.for_not_followers,
      forNewAccounts: next.for_new_accounts,
      forPrivateMentions: next.for_private_mentions,
      forLimitedAccounts: next.for_limited_accounts,
    };
    this.db.insert(notificationPolicies).values(row).onConflictDoUpdate({ target: notificationPolicies.accountId, set: row }).run();
    return next;
  }

  summary(accountId: number): { pending_requests_count: number; pending_notifications_count: number } {
    const row = this.db
      .select({ requests: sql<number>`count(*)`, notifications: sql<number>`coalesce(sum(${notificationRequests.notificationsCount}), 0)` })
      .from(notificationRequests)
      .where(eq(notificationRequests.accountId, accountId))
      .get();
    return { pending_requests_count: Math.min(row?.requests ?? 0, MAX_MEANINGFUL_COUNT), pending_notifications_count: Math.min(row?.notifications ?? 0, MAX_MEANINGFUL_COUNT) };
  }

  /**
   * What the policy does with this notification: accept it, hold it back (filter), or drop it.
   * Only the rules that are not "accept" are looked into, each fact read once when first needed:
   * under the defaults a favourite costs one read (the policy), a public mention two.
   */
  decide(recipientId: number, fromAccountId: number, type: string, statusId: number | null): PolicyLevel {
    if (!FILTERABLE.has(type) || recipientId === fromAccountId) return "accept";
    const policy = this.get(recipientId);
    const now = this.clock.now();
    const once = <T>(read: () => T) => {
      let value: { v: T } | null = null;
      return () => (value ??= { v: read() }).v;
    };
    const following = once(() => this.followedAt(recipientId, fromAccountId) !== null);
    const notFollower = once(() => {
      const since = this.followedAt(fromAccountId, recipientId);
      return since === null || since > now - NEW_FOLLOWER_MS;
    });
    const newAccount = once(() => (this.db.select({ createdAt: accounts.createdAt }).from(accounts).where(eq(accounts.id, fromAccountId)).get()?.createdAt ?? 0) > now - NEW_ACCOUNT_MS);
    const privateMention = once(() => type === "mention" && statusId !== null && this.unansweredPrivateMention(recipientId, statusId));
    const permitted = once(() => !!this.db.select({ one: sql<number>`1` }).from(notificationPermissions).where(and(eq(notificationPermissions.accountId, recipientId), eq(notificationPermissions.fromAccountId, fromAccountId))).get());
    const matches = (level: PolicyLevel) =>
      (policy.for_not_following === level && !following()) ||
      (policy.for_not_followers === level && notFollower()) ||
      (policy.for_new_accounts === level && newAccount() && !following()) ||
      (policy.for_private_mentions === level && type === "mention" && privateMention() && !following());
    if (matches("drop")) return permitted() ? "accept" : "drop";
    if (matches("filter")) return permitted() ? "accept" : "filter";
    return "accept";
  }

  /** A filtered notification counts towards its sender's request (made on the first one). */
  held(recipientId: number, fromAccountId: number, type: string, statusId: number | null): void {
    const now = this.clock.now();
    const lastStatusId = type === "mention" ? statusId : null;
    this.db
      .insert(notificationRequests)
      .values({ id: this.ids.next(), accountId: recipientId, fromAccountId, lastStatusId, notificationsCount: 1, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [notificationRequests.accountId, notificationRequests.fromAccountId],
        set: {
          notificationsCount: sql`${notificationRequests.notificationsCount} + 1`,
          lastStatusId: sql`coalesce(excluded.last_status_id, ${notificationRequests.lastStatusId})`,
          updatedAt: now,
        },
      })
      .run();
  }

  listRequests(accountId: number, page: Page): NotificationRequestRow[] {
    const q = pageQuery(notificationRequests.id, page);
    const rows = this.db.select().from(notificationRequests).where(and(eq(notificationRequests.accountId, accountId), q.where)).orderBy(q.orderBy).limit(page.limit).all();
    return finishPage(rows, q.reverse);
  }

  request(accountId: number, id: number): NotificationRequestRow {
    const row = this.db.select().from(notificationRequests).where(and(eq(notificationRequests.id, id), eq(notificationRequests.accountId, accountId))).get();
    if (!row) throw notFound();
    return row;
  }

  /**
   * Accepting lets the sender through from now on and brings its held notifications into the
   * list; `regroup` gives each its group key (NotificationService owns that rule).
   */
  accept(request: NotificationRequestRow, regroup: (ids: number[]) => void): void {
    this.db.insert(notificationPermissions).values({ accountId: request.accountId, fromAccountId: request.fromAccountId, createdAt: this.clock.now() }).onConflictDoNothing().run();
    const held = this.heldIds(request);
    this.db.update(notifications).set({ filtered: false }).where(and(eq(notifications.accountId, request.accountId), eq(notifications.fromAccountId, request.fromAccountId), eq(notifications.filtered, true))).run();
    regroup(held);
    this.db.delete(notificationRequests).where(eq(notificationRequests.id, request.id)).run();
  }

  /** Dismissing deletes the request and the notifications it held. */
  dismiss(request: NotificationRequestRow): void {
    this.db.delete(notifications).where(and(eq(notifications.accountId, request.accountId), eq(notifications.fromAccountId, request.fromAccountId), eq(notifications.filtered, true))).run();
    this.db.delete(notificationRequests).where(eq(notificationRequests.id, request.id)).run();
  }

  private heldIds(request: NotificationRequestRow): number[] {
    return this.db
      .select({ id: notifications.id })
      .from(notifications)
      .where(and(eq(notifications.accountId, request.accountId), eq(notifications.fromAccountId, request.fromAccountId), eq(notifications.filtered, true)))
      .orderBy(notifications.id)
      .all()
      .map((r) => r.id);
  }

  private followedAt(accountId: number, targetAccountId: number): number | null {
    const row = this.db.select({ createdAt: follows.createdAt }).from(follows).where(and(eq(follows.accountId, accountId), eq(follows.targetAccountId, targetAccountId))).get();
    return row?.createdAt ?? null;
  }

  private unansweredPrivateMention(recipientId: number, statusId: number): boolean {
    const row = this.db.select({ visibility: statuses.visibility, inReplyToAccountId: statuses.inReplyToAccountId }).from(statuses).where(eq(statuses.id, statusId)).get();
    return row !== undefined && row.visibility === "direct" && row.inReplyToAccountId !== recipientId;
  }
}

