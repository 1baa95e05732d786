import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { NotificationPolicyRow, NotificationRequestRow } from "../../db/schema.ts";
import { notFound, validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { NotificationRequest } from "../../models/views.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";

export type PolicyLevel = "accept" | "filter" | "drop";
const LEVELS: readonly PolicyLevel[] = ["accept", "filter", "drop"];

export const POLICY_FIELDS = ["for_not_following", "for_not_followers", "for_new_accounts", "for_private_mentions", "for_limited_accounts"] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];
export type Policy = Record<PolicyField, PolicyLevel>;

/** Mastodon's Notification::PROPERTIES filterable types: the rest always pass. */
const FILTERABLE = new Set(["mention", "reblog", "follow", "follow_request", "favourite", "quote"]);
const NEW_ACCOUNT_MS = 30 * 24 * 3600 * 1000;
const NEW_FOLLOWER_MS = 3 * 24 * 3600 * 1000;
/** Mastodon counts pending requests and notifications up to this (NotificationPolicy::MAX_MEANINGFUL_COUNT). */
const MAX_MEANINGFUL_COUNT = 100;

/** Mentions the policy holds back from a request's sender, counted up to Mastodon's 100 (correlated: one index range each). */
// Spelled out: drizzle leaves columns unqualified in a one-table select, which inside the subquery
// would name the notification's own columns.
// `= TRUE` reads SQLite's 1 and PostgreSQL's boolean alike; the count is PostgreSQL's int8, hence mapWith.
const heldMentions = sql<number>`(SELECT count(*) FROM (SELECT 1 FROM notifications n WHERE n.account_id = notification_requests.account_id AND n.from_account_id = notification_requests.from_account_id AND n.type = 'mention' AND n.filtered = TRUE LIMIT 100) held)`.mapWith(Number);

/** What the policy needs of a mention's status, when the caller has the row at hand. */
export interface StatusFacts {
  visibility: string;
  inReplyToAccountId: number | null;
}

const POLICY_CACHE_SIZE = 10_000;

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
  /** The statements the routes run, prepared once (docs/architecture.md, the database port). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
  ) {
    const { notificationPolicies: policies, notificationRequests: requests } = port.tables;
    const orm = port.orm;
    const accountId = sql.placeholder("accountId");
    this.q = {
      policy: orm.select().from(policies).where(eq(policies.accountId, accountId)).prepare(),
      held: orm.select({ held: heldMentions }).from(requests).where(eq(requests.accountId, accountId)).prepare(),
      request: orm
        .select({ request: requests, held: heldMentions })
        .from(requests)
        .where(and(eq(requests.id, sql.placeholder("id")), eq(requests.accountId, accountId)))
        .prepare(),
    };
  }

  /** Kept in memory once read (every filterable notification asks): only PATCH changes a policy. */
  private cache = new Map<number, Policy>();

  /**
   * Bumped whenever cached policies may be stale: a policy read through the port is kept only if
   * nothing changed while it was awaited (an update in between would otherwise be hidden by it).
   */
  private generation = 0;

  /** Another connection committed: policies are read again. */
  forgetCached() {
    this.cache.clear();
    this.generation++;
  }

  private keep(accountId: number, policy: Policy) {
    if (this.cache.size >= POLICY_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(accountId, policy);
  }

  async get(accountId: number): Promise<Policy> {
    return { ...(await this.policyOf(accountId)) };
  }

  /** The kept policy itself (`decide` only reads it). */
  private async policyOf(accountId: number): Promise<Policy> {
    const kept = this.cache.get(accountId);
    if (kept) return kept;
    const generation = this.generation;
    const policy = fromRow((await this.q.policy.execute({ accountId }))[0]);
    if (generation === this.generation) this.keep(accountId, policy);
    return policy;
  }

  /** Sets the fields given; each must be accept, filter or drop (Mastodon's 422 otherwise). */
  async update(accountId: number, changes: Partial<Record<PolicyField, string>>): Promise<Policy> {
    const errors: string[] = [];
    for (const [field, value] of Object.entries(changes)) {
      if (value !== undefined && !LEVELS.includes(value as PolicyLevel)) errors.push(`${field.replace(/^for_/, "For ").replace(/_/g, " ")} is not included in the list`);
    }
    if (errors.length) throw validationFailed(...errors);
    const next = { ...(await this.get(accountId)), ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) } as Policy;
    const row = {
      accountId,
      forNotFollowing: next.for_not_following,
      forNotFollowers: next.for_not_followers,
      forNewAccounts: next.for_new_accounts,
      forPrivateMentions: next.for_private_mentions,
      forLimitedAccounts: next.for_limited_accounts,
    };
    const { notificationPolicies: policies } = this.port.tables;
    await this.port.orm.insert(policies).values(row).onConflictDoUpdate({ target: policies.accountId, set: row });
    this.cache.delete(accountId);
    this.generation++;
    return next;
  }

  async summary(accountId: number): Promise<{ pending_requests_count: number; pending_notifications_count: number }> {
    const counts = (await this.q.held.execute({ accountId })).map((r) => r.held).filter((n) => n > 0);
    return {
      pending_requests_count: Math.min(counts.length, MAX_MEANINGFUL_COUNT),
      pending_notifications_count: Math.min(counts.reduce((a, b) => a + b, 0), MAX_MEANINGFUL_COUNT),
    };
  }

  /**
   * What the policy does with this notification: accept it, hold it back (filter), or drop it.
   * Only the rules that are not "accept" are looked into, each fact read once when first needed:
   * under the defaults a favourite costs one read (the policy), a public mention two.
   */
  async decide(recipientId: number, fromAccountId: number, type: string, statusId: number | null, status?: StatusFacts): Promise<PolicyLevel> {
    if (!FILTERABLE.has(type) || recipientId === fromAccountId) return "accept";
    const policy = await this.policyOf(recipientId);
    const now = this.clock.now();
    // Each fact read at most once, and only when a rule asks (they are asked one after another).
    const once = <T>(read: () => Promise<T>) => {
      let value: Promise<T> | null = null;
      return () => (value ??= read());
    };
    const following = once(async () => (await this.followedAt(recipientId, fromAccountId)) !== null);
    const notFollower = once(async () => {
      const since = await this.followedAt(fromAccountId, recipientId);
      return since === null || since > now - NEW_FOLLOWER_MS;
    });
    const newAccount = once(async () => ((await this.port.get<{ createdAt: number }>('SELECT created_at AS "createdAt" FROM accounts WHERE id = ?', [fromAccountId]))?.createdAt ?? 0) > now - NEW_ACCOUNT_MS);
    const privateMention = once(async () => type === "mention" && statusId !== null && (await this.unansweredPrivateMention(recipientId, statusId, status)));
    const permitted = once(async () => (await this.port.get("SELECT 1 AS one FROM notification_permissions WHERE account_id = ? AND from_account_id = ?", [recipientId, fromAccountId])) !== undefined);
    const matches = async (level: PolicyLevel) =>
      (policy.for_not_following === level && !(await following())) ||
      (policy.for_not_followers === level && (await notFollower())) ||
      (policy.for_new_accounts === level && (await newAccount()) && !(await following())) ||
      (policy.for_private_mentions === level && type === "mention" && (await privateMention()) && !(await following()));
    if (await matches("drop")) return (await permitted()) ? "accept" : "drop";
    if (await matches("filter")) return (await permitted()) ? "accept" : "filter";
    return "accept";
  }

  /**
   * A held-back mention opens its sender's request (or brings it up to date); other held-back
   * notifications wait without one, listed with include_filtered, as in Mastodon.
   */
  async held(recipientId: number, fromAccountId: number, type: string, statusId: number | null): Promise<void> {
    if (type !== "mention") return;
    const now = this.clock.now();
    await this.port.run(
      "INSERT INTO notification_requests (id, account_id, from_account_id, last_status_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, from_account_id) DO UPDATE SET last_status_id = excluded.last_status_id, updated_at = excluded.updated_at",
      [this.ids.next(), recipientId, fromAccountId, statusId, now, now],
    );
  }

  /** The viewer's requests that still hold something, newest first, with how many mentions each holds. */
  async listRequests(accountId: number, page: Page): Promise<NotificationRequest[]> {
    const { notificationRequests: requests } = this.port.tables;
    const q = pageQuery(requests.id, page);
    const rows = await this.port.orm
      .select({ request: requests, held: heldMentions })
      .from(requests)
      .where(and(eq(requests.accountId, accountId), q.where, sql`${heldMentions} > 0`))
      .orderBy(q.orderBy)
      .limit(page.limit);
    return finishPage(rows, q.reverse).map((r) => ({ ...r.request, notificationsCount: r.held }));
  }

  /** One of the viewer's requests, or 404 (also when it no longer holds anything). */
  async request(accountId: number, id: number): Promise<NotificationRequest> {
    const [row] = await this.q.request.execute({ id, accountId });
    if (!row || row.held === 0) throw notFound();
    return { ...row.request, notificationsCount: row.held };
  }

  /**
   * Accepting lets the sender through from now on and brings its held notifications into the
   * list; `regroup` gives each its group key (NotificationService owns that rule). Inside the
   * caller's transaction.
   */
  async accept(request: NotificationRequestRow, regroup: (ids: number[]) => Promise<void>): Promise<void> {
    const { notificationPermissions: permissions, notifications: rows, notificationRequests: requests } = this.port.tables;
    const orm = this.port.orm;
    await orm.insert(permissions).values({ accountId: request.accountId, fromAccountId: request.fromAccountId, createdAt: this.clock.now() }).onConflictDoNothing();
    const held = (await orm.select({ id: rows.id }).from(rows).where(this.heldBy(request)).orderBy(rows.id)).map((r) => r.id);
    await orm.update(rows).set({ filtered: false }).where(this.heldBy(request));
    await regroup(held);
    await orm.delete(requests).where(eq(requests.id, request.id));
  }

  /** Dismissing deletes the request and the notifications it held (inside the caller's transaction). */
  async dismiss(request: NotificationRequestRow): Promise<void> {
    const { notificationRequests: requests } = this.port.tables;
    await this.port.orm.delete(this.port.tables.notifications).where(this.heldBy(request));
    await this.port.orm.delete(requests).where(eq(requests.id, request.id));
  }

  private heldBy(request: NotificationRequestRow) {
    const { notifications: rows } = this.port.tables;
    return and(eq(rows.accountId, request.accountId), eq(rows.fromAccountId, request.fromAccountId), eq(rows.filtered, true));
  }

  private async followedAt(accountId: number, targetAccountId: number): Promise<number | null> {
    const row = await this.port.get<{ createdAt: number }>('SELECT created_at AS "createdAt" FROM follows WHERE account_id = ? AND target_account_id = ?', [accountId, targetAccountId]);
    return row?.createdAt ?? null;
  }

  private async unansweredPrivateMention(recipientId: number, statusId: number, known?: StatusFacts): Promise<boolean> {
    const row = known ?? (await this.port.get<StatusFacts>('SELECT visibility, in_reply_to_account_id AS "inReplyToAccountId" FROM statuses WHERE id = ?', [statusId]));
    return row !== undefined && row.visibility === "direct" && row.inReplyToAccountId !== recipientId;
  }
}
