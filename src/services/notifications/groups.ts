import { and, asc, desc, eq, gt, gte, lt, lte, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { notifications, type NotificationRow } from "../../db/schema.ts";
import { notFound } from "../../errors.ts";
import type { NotificationGroup } from "../../models/views.ts";
import type { Page } from "../../infra/pagination.ts";

/** Mastodon's Notification::Groups: what is grouped, for how long, and how many senders a group shows. */
export const GROUPABLE_TYPES = ["favourite", "reblog", "follow"] as const;
const MAX_GROUP_SPAN_HOURS = 12;
const SAMPLE_ACCOUNTS = 8;
const HOUR_MS = 3600 * 1000;

/**
 * The group key a new notification gets (Notification::Groups#set_group_key!): favourites and
 * boosts of one status, or follows, share `<type>[-<status>]-<hour>` where the hour is when the
 * group began; a notification more than 12 hours after that begins a new group. Mastodon keeps
 * the group's first hour in Redis; here it is read back from the latest key with the same prefix
 * (one index range on (account_id, group_key)).
 */
export function groupKeyFor(db: Db, recipientId: number, type: string, statusId: number | null, createdAt: number): string | null {
  if (!(GROUPABLE_TYPES as readonly string[]).includes(type)) return null;
  const prefix = type === "follow" ? type : `${type}-${statusId}`;
  let hour = Math.floor(createdAt / HOUR_MS);
  // Every key with this prefix lies between `<prefix>-` and `<prefix>.` ('.' follows '-').
  const latest = db
    .select({ key: notifications.groupKey })
    .from(notifications)
    .where(and(eq(notifications.accountId, recipientId), gte(notifications.groupKey, `${prefix}-`), lt(notifications.groupKey, `${prefix}.`)))
    .orderBy(desc(notifications.groupKey))
    .limit(1)
    .get();
  const previous = Number(latest?.key?.slice(prefix.length + 1) ?? NaN);
  if (Number.isFinite(previous) && hour < previous + MAX_GROUP_SPAN_HOURS && hour >= previous) hour = previous;
  return `${prefix}-${hour}`;
}

export interface GroupQuery {
  page: Page;
  /** The list's filters (types, sender, hidden accounts, filtered), as NotificationService builds them. */
  where: SQL | undefined;
  /** Types grouped in this answer (Mastodon's `grouped_types`; all groupable ones by default). */
  groupedTypes?: string[];
}

/**
 * Grouped pages (Mastodon 4.3's GET /api/v2/notifications): notifications are walked newest
 * first, the first one met of each group standing for it, until `limit` groups; then each
 * group's count, newest sender ids and bounds within the page are read (NotificationGroup).
 */
export class NotificationGroups {
  constructor(private db: Db) {}

  private keyOf(n: NotificationRow, grouped: Set<string>): string {
    return n.groupKey && grouped.has(n.type) ? n.groupKey : `ungrouped-${n.id}`;
  }

  private groupedSet(types: string[] | undefined): Set<string> {
    const known = (types ?? []).filter((t) => (GROUPABLE_TYPES as readonly string[]).includes(t));
    return new Set(types && types.length > 0 ? known : GROUPABLE_TYPES);
  }

  /** One page of groups, newest first, each with its count, newest senders and bounds in the page. */
  page(accountId: number, query: GroupQuery): NotificationGroup[] {
    const grouped = this.groupedSet(query.groupedTypes);
    const picked = this.walk(accountId, query, grouped);
    if (picked.length === 0) return [];
    const { page } = query;
    let range = { low: picked[picked.length - 1]!.id, high: picked[0]!.id };
    // An incomplete page is the last one in its direction: its groups reach to the end of what
    // was asked (Api::V2::NotificationsController#load_grouped_notifications), so that the
    // older part of a group is not left for a next page that will not show it.
    if (picked.length < page.limit) {
      range =
        page.minId !== undefined
          ? { low: range.low, high: page.maxId !== undefined ? page.maxId - 1 : Number.MAX_SAFE_INTEGER }
          : { low: page.sinceId !== undefined ? page.sinceId + 1 : 0, high: range.high };
    }
    return picked.map((n) => this.describe(accountId, n, this.keyOf(n, grouped), range, query.where));
  }

  /** How many groups begin after `afterId`, up to `limit` (the unread count of grouped clients): the walk alone. */
  countAfter(accountId: number, afterId: number | undefined, limit: number, where: SQL | undefined, groupedTypes?: string[]): number {
    return this.walk(accountId, { page: { limit, ...(afterId !== undefined ? { minId: afterId } : {}) }, where, groupedTypes }, this.groupedSet(groupedTypes)).length;
  }

  /**
   * Mastodon's paginate_groups: notifications walked from the page's bound (newest first, or
   * oldest first from min_id), the first met of each group standing for it, until `limit`
   * groups; returned newest first.
   */
  private walk(accountId: number, query: GroupQuery, grouped: Set<string>): NotificationRow[] {
    const { page } = query;
    const forward = page.minId !== undefined;
    const batch = Math.max(40, page.limit * 2);
    const seen = new Set<string>();
    const picked: NotificationRow[] = [];
    let cursor: number | undefined = forward ? page.minId : page.maxId;
    for (;;) {
      const bound = cursor === undefined ? undefined : forward ? gt(notifications.id, cursor) : lt(notifications.id, cursor);
      const rows = this.db
        .select()
        .from(notifications)
        .where(
          and(
            eq(notifications.accountId, accountId),
            query.where,
            bound,
            !forward && page.sinceId !== undefined ? gt(notifications.id, page.sinceId) : undefined,
            forward && page.maxId !== undefined ? lt(notifications.id, page.maxId) : undefined,
          ),
        )
        .orderBy(forward ? asc(notifications.id) : desc(notifications.id))
        .limit(batch)
        .all();
      for (const row of rows) {
        const key = this.keyOf(row, grouped);
        if (seen.has(key)) continue;
        seen.add(key);
        picked.push(row);
        if (picked.length === page.limit) break;
      }
      if (picked.length === page.limit || rows.length < batch) break;
      cursor = rows[rows.length - 1]!.id;
    }
    return forward ? picked.reverse() : picked;
  }

  /** GET /api/v2/notifications/:group_key: the group as a whole, or 404. */
  one(accountId: number, key: string, where: SQL | undefined): NotificationGroup {
    const newest = this.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.accountId, accountId), this.byKey(key), where))
      .orderBy(desc(notifications.id))
      .limit(1)
      .get();
    if (!newest) throw notFound();
    return this.describe(accountId, newest, key, null, where);
  }

  /** The senders of a group, newest first. */
  accountIds(accountId: number, key: string, where: SQL | undefined): number[] {
    const rows = this.db
      .select({ from: notifications.fromAccountId })
      .from(notifications)
      .where(and(eq(notifications.accountId, accountId), this.byKey(key), where))
      .orderBy(desc(notifications.id))
      .all();
    if (rows.length === 0) throw notFound();
    return [...new Set(rows.map((r) => r.from))];
  }

  /** POST /api/v2/notifications/:group_key/dismiss: every notification of the group goes. */
  dismiss(accountId: number, key: string): void {
    this.db.delete(notifications).where(and(eq(notifications.accountId, accountId), this.byKey(key))).run();
  }

  /** Mastodon's by_group_key: `ungrouped-<id>` is that notification, anything else a group key. */
  private byKey(key: string): SQL {
    if (key.startsWith("ungrouped-")) {
      const id = Number(key.slice("ungrouped-".length));
      return Number.isSafeInteger(id) ? eq(notifications.id, id) : sql`0`;
    }
    return eq(notifications.groupKey, key);
  }

  private describe(accountId: number, n: NotificationRow, key: string, range: { low: number; high: number } | null, where: SQL | undefined): NotificationGroup {
    if (key.startsWith("ungrouped-")) {
      return { key, notification: n, count: 1, mostRecentId: n.id, sampleAccountIds: [n.fromAccountId], ...(range ? { page: { minId: n.id, latestAt: n.createdAt } } : {}) };
    }
    const inGroup = and(eq(notifications.accountId, accountId), eq(notifications.groupKey, key), where, range ? lte(notifications.id, range.high) : undefined);
    const newest = this.db.select({ id: notifications.id, from: notifications.fromAccountId, at: notifications.createdAt }).from(notifications).where(inGroup).orderBy(desc(notifications.id)).limit(SAMPLE_ACCOUNTS).all();
    const count = this.db.select({ n: sql<number>`count(*)` }).from(notifications).where(inGroup).get()?.n ?? 0;
    const group: NotificationGroup = { key, notification: n, count, mostRecentId: newest[0]?.id ?? n.id, sampleAccountIds: newest.map((r) => r.from) };
    if (range) {
      const oldestInPage = this.db
        .select({ id: notifications.id })
        .from(notifications)
        .where(and(eq(notifications.accountId, accountId), eq(notifications.groupKey, key), where, gte(notifications.id, range.low)))
        .orderBy(asc(notifications.id))
        .limit(1)
        .get();
      group.page = { minId: oldestInPage?.id ?? n.id, latestAt: newest[0]?.at ?? n.createdAt };
    }
    return group;
  }
}
