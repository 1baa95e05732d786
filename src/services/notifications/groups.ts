import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { notifications, type NotificationRow } from "../../db/schema.ts";
import { notFound } from "../../errors.ts";
import type { NotificationGroup } from "../../models/views.ts";
import type { Page } from "../../infra/pagination.ts";

/** Mastodon's Notification::Groups: what is grouped, for how long, and how many senders a group shows. */
export const GROUPABLE_TYPES = ["favourite", "reblog", "follow"] as const;
const MAX_GROUP_SPAN_HOURS = 12;
const SAMPLE_ACCOUNTS = 8;
const HOUR_MS = 3600 * 1000;
const NOTIFICATION = rowReader(notifications);

/**
 * Conditions on the notifications table as portable SQL text (columns unqualified, `?` for
 * each of `params`, in order), joined with AND; "" for none. Raw text rather than drizzle's
 * SQL: the lists read it on every request, and building a builder cost more than running it.
 */
export interface Conditions {
  text: string;
  params: unknown[];
}

export const NO_CONDITIONS: Conditions = { text: "", params: [] };

/** `(a) AND (b)` of the parts that are not empty. */
export function allOf(...parts: Conditions[]): Conditions {
  const some = parts.filter((p) => p.text !== "");
  return { text: some.map((p) => p.text).join(" AND "), params: some.flatMap((p) => p.params) };
}

/** `?, ?, ?` for a list of values (portable, where SQLite's json_each is not). */
export function marks(values: readonly unknown[]): string {
  return values.map(() => "?").join(", ");
}

function groupPrefix(type: string, statusId: number | null): string | null {
  if (!(GROUPABLE_TYPES as readonly string[]).includes(type)) return null;
  return type === "follow" ? type : `${type}-${statusId}`;
}

/** The key from the latest key with its prefix: the group goes on within 12 hours of its first. */
function keyAfter(prefix: string, createdAt: number, latest: string | null | undefined): string {
  let hour = Math.floor(createdAt / HOUR_MS);
  const previous = Number(latest?.slice(prefix.length + 1) ?? NaN);
  if (Number.isFinite(previous) && hour < previous + MAX_GROUP_SPAN_HOURS && hour >= previous) hour = previous;
  return `${prefix}-${hour}`;
}

/**
 * The group key a new notification gets (Notification::Groups#set_group_key!): favourites and
 * boosts of one status, or follows, share `<type>[-<status>]-<hour>` where the hour is when the
 * group began; a notification more than 12 hours after that begins a new group. Mastodon keeps
 * the group's first hour in Redis; here it is read back from the latest key with the same prefix
 * (one index range on (account_id, group_key)), in the creating write's transaction.
 */
export async function groupKeyThrough(port: DatabasePort, recipientId: number, type: string, statusId: number | null, createdAt: number): Promise<string | null> {
  const prefix = groupPrefix(type, statusId);
  if (prefix === null) return null;
  const latest = await port.get<{ k: string | null }>(
    "SELECT group_key AS k FROM notifications WHERE account_id = ? AND group_key >= ? AND group_key < ? ORDER BY group_key DESC LIMIT 1",
    [recipientId, `${prefix}-`, `${prefix}.`],
  );
  return keyAfter(prefix, createdAt, latest?.k);
}

export interface GroupQuery {
  page: Page;
  /** The list's filters (types, sender, hidden accounts, filtered), as NotificationService builds them. */
  where: Conditions | undefined;
  /** Types grouped in this answer (Mastodon's `grouped_types`; all groupable ones by default). */
  groupedTypes?: string[];
}

/**
 * Grouped pages (Mastodon 4.3's GET /api/v2/notifications): notifications are walked newest
 * first, the first one met of each group standing for it, until `limit` groups; then each
 * group's count, newest sender ids and bounds within the page are read (NotificationGroup).
 * Raw SQL through the port, one statement text per shape (the port's connection keeps them
 * prepared).
 */
export class NotificationGroups {
  constructor(private port: DatabasePort) {}

  private keyOf(n: NotificationRow, grouped: Set<string>): string {
    return n.groupKey && grouped.has(n.type) ? n.groupKey : `ungrouped-${n.id}`;
  }

  private groupedSet(types: string[] | undefined): Set<string> {
    const known = (types ?? []).filter((t) => (GROUPABLE_TYPES as readonly string[]).includes(t));
    return new Set(types && types.length > 0 ? known : GROUPABLE_TYPES);
  }

  /** One page of groups, newest first, each with its count, newest senders and bounds in the page. */
  async page(accountId: number, query: GroupQuery): Promise<NotificationGroup[]> {
    const grouped = this.groupedSet(query.groupedTypes);
    const picked = await this.walk(accountId, query, grouped);
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
    const groups: NotificationGroup[] = [];
    // One after another: on SQLite the port runs them in turn anyway, and inside a transaction it must.
    for (const n of picked) groups.push(await this.describe(accountId, n, this.keyOf(n, grouped), range, query.where));
    return groups;
  }

  /** How many groups begin after `afterId`, up to `limit` (the unread count of grouped clients): the walk alone. */
  async countAfter(accountId: number, afterId: number | undefined, limit: number, where: Conditions | undefined, groupedTypes?: string[]): Promise<number> {
    return (await this.walk(accountId, { page: { limit, ...(afterId !== undefined ? { minId: afterId } : {}) }, where, groupedTypes }, this.groupedSet(groupedTypes))).length;
  }

  /**
   * Mastodon's paginate_groups: notifications walked from the page's bound (newest first, or
   * oldest first from min_id), the first met of each group standing for it, until `limit`
   * groups; returned newest first.
   */
  private async walk(accountId: number, query: GroupQuery, grouped: Set<string>): Promise<NotificationRow[]> {
    const { page } = query;
    const forward = page.minId !== undefined;
    const batch = Math.max(40, page.limit * 2);
    const seen = new Set<string>();
    const picked: NotificationRow[] = [];
    let cursor: number | undefined = forward ? page.minId : page.maxId;
    for (;;) {
      const bounds: Conditions[] = [];
      if (cursor !== undefined) bounds.push({ text: forward ? "id > ?" : "id < ?", params: [cursor] });
      if (!forward && page.sinceId !== undefined) bounds.push({ text: "id > ?", params: [page.sinceId] });
      if (forward && page.maxId !== undefined) bounds.push({ text: "id < ?", params: [page.maxId] });
      const where = allOf({ text: "account_id = ?", params: [accountId] }, query.where ?? NO_CONDITIONS, ...bounds);
      const rows = (
        await this.port.values(`SELECT ${NOTIFICATION.columns} ${NOTIFICATION.from} WHERE ${where.text} ORDER BY id ${forward ? "ASC" : "DESC"} LIMIT ?`, [...where.params, batch])
      ).map(NOTIFICATION.map);
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
  async one(accountId: number, key: string, where: Conditions | undefined): Promise<NotificationGroup> {
    const c = allOf({ text: "account_id = ?", params: [accountId] }, this.byKey(key), where ?? NO_CONDITIONS);
    const [newest] = (await this.port.values(`SELECT ${NOTIFICATION.columns} ${NOTIFICATION.from} WHERE ${c.text} ORDER BY id DESC LIMIT 1`, c.params)).map(NOTIFICATION.map);
    if (!newest) throw notFound();
    return this.describe(accountId, newest, key, null, where);
  }

  /** The senders of a group, newest first. */
  async accountIds(accountId: number, key: string, where: Conditions | undefined): Promise<number[]> {
    const c = allOf({ text: "account_id = ?", params: [accountId] }, this.byKey(key), where ?? NO_CONDITIONS);
    const rows = await this.port.values(`SELECT from_account_id FROM notifications WHERE ${c.text} ORDER BY id DESC`, c.params);
    if (rows.length === 0) throw notFound();
    return [...new Set(rows.map((r) => r[0] as number))];
  }

  /** POST /api/v2/notifications/:group_key/dismiss: every notification of the group goes. */
  async dismiss(accountId: number, key: string): Promise<void> {
    const c = allOf({ text: "account_id = ?", params: [accountId] }, this.byKey(key));
    await this.port.run(`DELETE FROM notifications WHERE ${c.text}`, c.params);
  }

  /** Mastodon's by_group_key: `ungrouped-<id>` is that notification, anything else a group key. */
  private byKey(key: string): Conditions {
    if (key.startsWith("ungrouped-")) {
      const id = Number(key.slice("ungrouped-".length));
      return Number.isSafeInteger(id) ? { text: "id = ?", params: [id] } : { text: "FALSE", params: [] };
    }
    return { text: "group_key = ?", params: [key] };
  }

  private async describe(accountId: number, n: NotificationRow, key: string, range: { low: number; high: number } | null, where: Conditions | undefined): Promise<NotificationGroup> {
    if (key.startsWith("ungrouped-")) {
      return { key, notification: n, count: 1, mostRecentId: n.id, sampleAccountIds: [n.fromAccountId], ...(range ? { page: { minId: n.id, latestAt: n.createdAt } } : {}) };
    }
    const group = allOf({ text: "account_id = ? AND group_key = ?", params: [accountId, key] }, where ?? NO_CONDITIONS);
    const inGroup = range ? allOf(group, { text: "id <= ?", params: [range.high] }) : group;
    const newest = await this.port.values(`SELECT id, from_account_id, created_at FROM notifications WHERE ${inGroup.text} ORDER BY id DESC LIMIT ?`, [...inGroup.params, SAMPLE_ACCOUNTS]);
    const counted = await this.port.values(`SELECT count(*) FROM notifications WHERE ${inGroup.text}`, inGroup.params);
    const count = Number(counted[0]?.[0] ?? 0);
    const result: NotificationGroup = {
      key,
      notification: n,
      count,
      mostRecentId: (newest[0]?.[0] as number | undefined) ?? n.id,
      sampleAccountIds: newest.map((r) => r[1] as number),
    };
    if (range) {
      const low = allOf(group, { text: "id >= ?", params: [range.low] });
      const oldest = await this.port.values(`SELECT id FROM notifications WHERE ${low.text} ORDER BY id ASC LIMIT 1`, low.params);
      result.page = { minId: (oldest[0]?.[0] as number | undefined) ?? n.id, latestAt: (newest[0]?.[2] as number | undefined) ?? n.createdAt };
    }
    return result;
  }
}
