import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { notifications, type NotificationRow, type StatusRow } from "../../db/schema.ts";
import { marks as placeholders, padded, paddedSize } from "../../db/prepared.ts";
import type { IdGenerator } from "../../ids.ts";
import { notFound } from "../../errors.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { EventBus } from "../../infra/events.ts";
import { allOf, groupKeyThrough, marks, NotificationGroups, NO_CONDITIONS, type Conditions } from "./groups.ts";
import type { NotificationPolicies, StatusFacts } from "./policy.ts";
import { finishPage, type Page } from "../../infra/pagination.ts";
import { mentionedIds } from "../../models/mentions.ts";
import { rowReader } from "../../db/rows.ts";

const NOTIFICATION = rowReader(notifications);

const NONE: readonly number[] = [];
/** Roles told of sign-ups and reports (Mastodon's Moderator, Admin and Owner roles may manage_users and manage_reports). */
const STAFF_ROLES = ["moderator", "admin", "owner"];

export const NOTIFICATION_TYPES = ["mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update", "quote", "quoted_update", "admin.sign_up", "admin.report"] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export interface NotificationQuery {
  page: Page;
  types?: string[];
  excludeTypes?: string[];
  fromAccountId?: number;
  /** Include what the notification policy held back (always, when `fromAccountId` is given: Mastodon's browserable). */
  includeFiltered?: boolean;
}

/** Notifications about one activity: a recipient, who did it, what, to which status (and report). One text per shape: a null is matched with IS NULL. */
function sameActivitySql(statusId: number | null, reportId: number | null): string {
  return `account_id = ? AND from_account_id = ? AND type = ? AND ${statusId === null ? "status_id IS NULL" : "status_id = ?"}${reportId === null ? "" : " AND report_id = ?"}`;
}

function sameActivityParams(recipientId: number, fromAccountId: number, type: string, statusId: number | null, reportId: number | null): unknown[] {
  const params: unknown[] = [recipientId, fromAccountId, type];
  if (statusId !== null) params.push(statusId);
  if (reportId !== null) params.push(reportId);
  return params;
}

/** Is there already a notification of this activity (a repeated favourite, a follow again)? */
function duplicateSql(statusId: number | null, reportId: number | null): string {
  return `SELECT id FROM notifications WHERE ${sameActivitySql(statusId, reportId)} LIMIT 1`;
}

/** What every notification, or every post, runs: raw, so that the driver keeps them prepared. */
const SQL = {
  /** Followers who asked to be told of every post (follow with notify=true). */
  notifyFollowers: "SELECT account_id FROM follows WHERE target_account_id = ? AND notify = TRUE",
  threadMuted: "SELECT 1 AS one FROM statuses s JOIN conversation_mutes m ON m.conversation_id = s.conversation_id AND m.account_id = ? WHERE s.id = ?",
  insert: "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, report_id, group_key, filtered, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  staff: `SELECT account_id FROM users WHERE role IN (${STAFF_ROLES.map(() => "?").join(", ")}) AND approved = TRUE AND account_id <> ?`,
};

/**
 * Creates notifications under Mastodon's drop rules (not for your own actions, not from
 * accounts you block or mute with notifications, not about threads you muted), lists and
 * dismisses them, and announces each new one.
 */
export class NotificationService {
  /** The routes' reads and writes, prepared once (docs/architecture.md, the database port). */
  private reads;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private moderation: ModerationService,
    private events: EventBus,
    private policies: NotificationPolicies,
  ) {
    this.groups = new NotificationGroups(port);
    const { notifications: rows } = port.tables;
    const id = sql.placeholder("id");
    const accountId = sql.placeholder("accountId");
    this.reads = {
      own: port.orm.select().from(rows).where(and(eq(rows.id, id), eq(rows.accountId, accountId))).prepare(),
      byId: port.orm.select().from(rows).where(eq(rows.id, id)).prepare(),
      remove: port.orm.delete(rows).where(eq(rows.id, id)).prepare(),
      clear: port.orm.delete(rows).where(eq(rows.accountId, accountId)).prepare(),
    };
  }

  readonly groups: NotificationGroups;

  /**
   * A new status or boost: a boost tells the original's author (`reblog`); a status its mentioned
   * accounts (`mention`) and the followers who asked to hear of every post (`status`, never for
   * a direct one).
   */
  async statusCreated(row: StatusRow, original: StatusRow | null): Promise<void> {
    if (original) {
      await this.notify(original.accountId, row.accountId, "reblog", original.id);
      return;
    }
    // A status just written has no notification yet, so none of these can be a repeat: the
    // duplicate check is skipped (it reads every notification of that type from the author to
    // the recipient, and a follower with the bell on has one per post).
    const mentioned = row.mentions === "[]" ? NONE : [...new Set(mentionedIds(row))];
    for (const id of mentioned) await this.add(id, row.accountId, "mention", row.id, row, null, false);
    if (row.visibility === "direct") return;
    for (const [id] of await this.port.values(SQL.notifyFollowers, [row.accountId])) {
      if (!mentioned.includes(id as number)) await this.add(id as number, row.accountId, "status", row.id, undefined, null, false);
    }
  }

  /**
   * A local status edited (UpdateStatusService): the accounts it newly mentions get `mention`,
   * those that boosted it `update`. A remote edit keeps the mentions it arrived with, and its
   * boosters here are not told (not yet).
   */
  async statusEdited(status: StatusRow, previous: StatusRow): Promise<void> {
    if (status.uri !== null) return;
    const before = new Set(mentionedIds(previous));
    for (const id of mentionedIds(status)) if (!before.has(id)) await this.notify(id, status.accountId, "mention", status.id, status);
    for (const [id] of await this.port.values("SELECT DISTINCT account_id FROM statuses WHERE reblog_of_id = ? AND account_id <> ?", [status.id, status.accountId])) {
      await this.notify(id as number, status.accountId, "update", status.id);
    }
  }

  /** A boost deleted: its original's author no longer sees it in the notifications (the original may be gone with it). */
  async statusDeleted(status: StatusRow): Promise<void> {
    if (status.reblogOfId === null) return;
    const original = await this.port.get<{ accountId: number }>('SELECT account_id AS "accountId" FROM statuses WHERE id = ?', [status.reblogOfId]);
    if (original) await this.withdraw(original.accountId, status.accountId, "reblog", status.reblogOfId);
  }

  /** A poll ended: its author and every voter are told. */
  async pollEnded(authorId: number, statusId: number, voters: number[]): Promise<void> {
    for (const recipient of [authorId, ...voters]) await this.notify(recipient, authorId, "poll", statusId);
  }

  /**
   * Someone signed up: every staff member (moderator, admin, owner) is told with `admin.sign_up`.
   * Mastodon tells them once the account is usable and e-mails them about one waiting for
   * approval; Rookery sends no e-mail, so a waiting one is told this way too, once, at sign-up.
   */
  async signedUp(accountId: number): Promise<void> {
    for (const id of await this.staff(accountId)) await this.notify(id, accountId, "admin.sign_up");
  }

  /**
   * A user reported an account: staff are told with `admin.report` from the reporter (Mastodon's
   * ReportService#notify_staff!), unless a report of the same account already waits for them.
   */
  async reported(report: { id: number; accountId: number; targetAccountId: number }): Promise<void> {
    const waiting = await this.port.get("SELECT 1 AS one FROM reports WHERE target_account_id = ? AND action_taken_at IS NULL AND id <> ? LIMIT 1", [report.targetAccountId, report.id]);
    if (waiting) return;
    for (const id of await this.staff(report.accountId)) await this.notify(id, report.accountId, "admin.report", null, undefined, report.id);
  }

  /** Those who hear of sign-ups and reports (Mastodon: who can manage_users, manage_reports), but the one it is about. */
  private async staff(except: number): Promise<number[]> {
    return (await this.port.values(SQL.staff, [...STAFF_ROLES, except])).map((r) => r[0] as number);
  }

  /**
   * `status`: the status's visibility and parent author when the caller has its row (spares the
   * policy a read). `reportId`: the report an admin.report is about.
   */
  notify(recipientId: number, fromAccountId: number, type: NotificationType, statusId: number | null = null, status?: StatusFacts, reportId: number | null = null): Promise<NotificationRow | null> {
    return this.add(recipientId, fromAccountId, type, statusId, status, reportId, true);
  }

  /** `mayRepeat` false: the caller knows no such notification can exist yet (a new status's). */
  private async add(recipientId: number, fromAccountId: number, type: NotificationType, statusId: number | null, status: StatusFacts | undefined, reportId: number | null, mayRepeat: boolean): Promise<NotificationRow | null> {
    if (recipientId === fromAccountId && type !== "poll") return null;
    // Remote accounts are told by their own server, from the activities delivered to it.
    if (!(await this.isLocal(recipientId))) return null;
    if (recipientId !== fromAccountId && (await this.moderation.silences(recipientId, fromAccountId))) return null;
    if (statusId !== null && (await this.threadMuted(recipientId, statusId))) return null;
    if (mayRepeat && (await this.port.get(duplicateSql(statusId, reportId), sameActivityParams(recipientId, fromAccountId, type, statusId, reportId)))) return null;
    const decision = await this.policies.decide(recipientId, fromAccountId, type, statusId, status);
    if (decision === "drop") return null;
    const createdAt = this.clock.now();
    const filtered = decision === "filter";
    const row: NotificationRow = {
      id: this.ids.next(),
      accountId: recipientId,
      fromAccountId,
      type,
      statusId,
      reportId,
      groupKey: filtered ? null : await groupKeyThrough(this.port, recipientId, type, statusId, createdAt),
      filtered,
      createdAt,
    };
    await this.port.run(SQL.insert, [row.id, row.accountId, row.fromAccountId, row.type, row.statusId, row.reportId, row.groupKey, row.filtered, row.createdAt]);
    // A held-back notification is neither streamed nor pushed: it waits in its sender's request.
    if (filtered) await this.policies.held(recipientId, fromAccountId, type, statusId);
    else await this.events.emit({ type: "notification.created", notification: row });
    return row;
  }

  /**
   * Accepts a request of the policy: the sender passes from now on, and what it held comes into
   * the list with its group keys, in one transaction. `ignoreMissing` for the batch form, which
   * skips ids that are not the viewer's requests rather than failing.
   */
  async acceptRequest(accountId: number, requestId: number, options: { ignoreMissing?: boolean } = {}): Promise<void> {
    await this.port.transaction(async () => {
      const request = await this.requestOrNull(accountId, requestId, options);
      if (!request) return;
      await this.policies.accept(request, (ids) => this.regroup(ids));
      await this.events.emit({ type: "notifications.merged", accountId });
    });
  }

  /** Dismisses a request: it and the notifications it held are deleted. */
  async dismissRequest(accountId: number, requestId: number, options: { ignoreMissing?: boolean } = {}): Promise<void> {
    await this.port.transaction(async () => {
      const request = await this.requestOrNull(accountId, requestId, options);
      if (request) await this.policies.dismiss(request);
    });
  }

  private async requestOrNull(accountId: number, requestId: number, options: { ignoreMissing?: boolean }) {
    try {
      return await this.policies.request(accountId, requestId);
    } catch (e) {
      if (options.ignoreMissing) return null;
      throw e;
    }
  }

  /** A request accepted: its notifications, oldest first, get the group keys they would have had. */
  private async regroup(ids: number[]): Promise<void> {
    for (const id of ids) {
      const [n] = await this.reads.byId.execute({ id });
      if (!n) continue;
      const groupKey = await groupKeyThrough(this.port, n.accountId, n.type, n.statusId, n.createdAt);
      if (groupKey) await this.port.run("UPDATE notifications SET group_key = ? WHERE id = ?", [groupKey, id]);
    }
  }

  /**
   * The list's filters (types, sender, hidden accounts, held-back ones) as portable SQL, for flat
   * and grouped lists alike; "none" when only unknown types were asked for.
   */
  async filters(accountId: number, query: Omit<NotificationQuery, "page">): Promise<Conditions | "none"> {
    const known = new Set<string>(NOTIFICATION_TYPES);
    const types = query.types?.filter((t) => known.has(t));
    if (types && types.length === 0 && query.types && query.types.length > 0) return "none";
    const hidden = [...(await this.moderation.hiddenAccounts(accountId))];
    const parts: Conditions[] = [];
    if (types && types.length) parts.push({ text: `type IN (${marks(types)})`, params: types });
    if (query.excludeTypes?.length) parts.push({ text: `type NOT IN (${marks(query.excludeTypes)})`, params: query.excludeTypes });
    if (query.fromAccountId !== undefined) parts.push({ text: "from_account_id = ?", params: [query.fromAccountId] });
    // `= FALSE` reads SQLite's 0 and PostgreSQL's boolean alike.
    if (!query.includeFiltered && query.fromAccountId === undefined) parts.push({ text: "filtered = FALSE", params: [] });
    if (hidden.length) parts.push({ text: `from_account_id NOT IN (${marks(hidden)})`, params: hidden });
    return parts.length ? allOf(...parts) : NO_CONDITIONS;
  }

  private async isLocal(accountId: number): Promise<boolean> {
    const row = await this.port.get<{ domain: string | null }>("SELECT domain FROM accounts WHERE id = ?", [accountId]);
    return row !== undefined && row.domain === null;
  }

  /** Which of these notifications still exist (not withdrawn, not rolled back). */
  async existing(ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const size = paddedSize(ids.length);
    return new Set((await this.port.values(`SELECT id FROM notifications WHERE id IN (${placeholders(size)})`, padded(ids, size))).map((r) => Number(r[0])));
  }

  /**
   * Would a mention from `fromAccountId` about `statusId` be dropped for `recipientId`
   * (blocked or muted sender, muted thread)? Direct messages follow the same rule into
   * the recipient's conversations.
   */
  async dropsMention(recipientId: number, fromAccountId: number, statusId: number): Promise<boolean> {
    return (await this.moderation.silences(recipientId, fromAccountId)) || (await this.threadMuted(recipientId, statusId));
  }

  /** Takes back what an undone action raised (an unfavourite, an unfollow...). */
  async withdraw(recipientId: number, fromAccountId: number, type: NotificationType, statusId: number | null = null): Promise<void> {
    await this.port.run(`DELETE FROM notifications WHERE ${sameActivitySql(statusId, null)}`, sameActivityParams(recipientId, fromAccountId, type, statusId, null));
  }

  private async threadMuted(recipientId: number, statusId: number): Promise<boolean> {
    return (await this.port.get(SQL.threadMuted, [recipientId, statusId])) !== undefined;
  }

  /**
   * A page of the flat list: raw SQL read by rowReader, one statement text per shape of the
   * query (kept prepared by the port's connection); drizzle built the same SQL again on every
   * read of the list, most of its cost. The conditions are filters()'s, which the grouped list uses.
   */
  async list(accountId: number, query: NotificationQuery): Promise<NotificationRow[]> {
    const filters = await this.filters(accountId, query);
    if (filters === "none") return [];
    const { page } = query;
    const bounds: Conditions[] = [];
    if (page.maxId !== undefined) bounds.push({ text: "id < ?", params: [page.maxId] });
    if (page.sinceId !== undefined) bounds.push({ text: "id > ?", params: [page.sinceId] });
    if (page.minId !== undefined) bounds.push({ text: "id > ?", params: [page.minId] });
    const where = allOf({ text: "account_id = ?", params: [accountId] }, ...bounds, filters);
    const forward = page.minId !== undefined;
    const rows = (
      await this.port.values(`SELECT ${NOTIFICATION.columns} ${NOTIFICATION.from} WHERE ${where.text} ORDER BY id ${forward ? "ASC" : "DESC"} LIMIT ?`, [...where.params, page.limit])
    ).map(NOTIFICATION.map);
    return finishPage(rows, forward);
  }

  async get(accountId: number, id: number): Promise<NotificationRow> {
    const [row] = await this.reads.own.execute({ id, accountId });
    if (!row) throw notFound();
    return row;
  }

  async dismiss(accountId: number, id: number): Promise<void> {
    await this.get(accountId, id);
    await this.reads.remove.execute({ id });
  }

  async clear(accountId: number): Promise<void> {
    await this.reads.clear.execute({ accountId });
  }
}
