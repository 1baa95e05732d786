import { and, count, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import { changes, type Db } from "../../db/connection.ts";
import { mediaAttachments, scheduledStatuses, type MediaRow, type ScheduledStatusRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { ApiError, notFound, unprocessable, validationFailed } from "../../errors.ts";
import { log } from "../../log.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { TimerWheel } from "../../infra/timer-wheel.ts";
import type { PostingService, StatusInput } from "./posting.ts";

export const MINIMUM_OFFSET_MS = 5 * 60 * 1000;
export const TOTAL_LIMIT = 300;
export const DAILY_LIMIT = 25;

const TOO_SOON = "Scheduled at The scheduled date must be in the future";
const ISO_8601 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO 8601 datetime (UTC when no zone is given, as Ruby's DateTime.parse reads it), or null. */
export function parseScheduledAt(value: string): number | null {
  const text = value.trim();
  if (!ISO_8601.test(text)) return null;
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned.replace(" ", "T"));
  return Number.isFinite(ms) ? ms : null;
}

const dayOf = (ms: number) => Math.floor(ms / 86_400_000);

/**
 * Statuses to publish later. They live in SQLite and on the timer wheel; at their time the
 * row is deleted and the status published through the same path as an immediate post, in
 * one transaction, so a status is never published twice (nor lost to a crash between the two).
 */
export class ScheduledStatusService {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private posting: PostingService,
    private wheel: TimerWheel,
  ) {
    wheel.handle("scheduled", (id) => this.publishDue(Number(id)));
  }

  /** Puts every pending schedule on the wheel; those due while the server was down fire at once. */
  restore() {
    for (const row of this.db.select({ id: scheduledStatuses.id, at: scheduledStatuses.scheduledAt }).from(scheduledStatuses).all()) {
      this.wheel.schedule("scheduled", row.id, row.at);
    }
  }

  /**
   * POST /api/v1/statuses with scheduled_at. Checks in Mastodon's order: the date must
   * parse, the status must be valid (reported, as Mastodon does, as "Record invalid"), then
   * the time and the account's limits.
   */
  schedule(accountId: number, applicationId: number | null, input: StatusInput, scheduledAtRaw: string, params: Record<string, unknown>): ScheduledStatusRow {
    const scheduledAt = parseScheduledAt(scheduledAtRaw);
    if (scheduledAt === null) throw unprocessable("Record invalid");
    let mediaIds: number[];
    try {
      mediaIds = this.posting.prepare(accountId, applicationId, input).mediaIds;
    } catch (e) {
      if (e instanceof ApiError && e.status === 422 && e.message.startsWith("Validation failed:")) throw unprocessable("Record invalid");
      throw e;
    }
    this.checkTime(accountId, scheduledAt, null);
    const row: ScheduledStatusRow = {
      id: this.ids.next(),
      accountId,
      scheduledAt,
      params: JSON.stringify(params),
      input: JSON.stringify(input),
      applicationId,
      createdAt: this.clock.now(),
    };
    this.db.transaction((tx) => {
      tx.insert(scheduledStatuses).values(row).run();
      mediaIds.forEach((id, position) => {
        tx.update(mediaAttachments).set({ scheduledStatusId: row.id, position }).where(eq(mediaAttachments.id, id)).run();
      });
    });
    this.wheel.schedule("scheduled", row.id, scheduledAt);
    return row;
  }

  /** The 5-minute rule and the 300-pending and 25-a-day limits (the day is the target's UTC day). */
  private checkTime(accountId: number, scheduledAt: number, excluding: number | null) {
    if (scheduledAt < this.clock.now() + MINIMUM_OFFSET_MS) throw validationFailed(TOO_SOON);
    const others = and(eq(scheduledStatuses.accountId, accountId), excluding === null ? undefined : sql`${scheduledStatuses.id} <> ${excluding}`);
    const total = this.db.select({ n: count() }).from(scheduledStatuses).where(others).get()?.n ?? 0;
    const day = dayOf(scheduledAt);
    const sameDay =
      this.db
        .select({ n: count() })
        .from(scheduledStatuses)
        .where(and(others, sql`${scheduledStatuses.scheduledAt} >= ${day * 86_400_000} AND ${scheduledStatuses.scheduledAt} < ${(day + 1) * 86_400_000}`))
        .get()?.n ?? 0;
    const errors: string[] = [];
    if (total >= TOTAL_LIMIT) errors.push(`You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts`);
    if (sameDay >= DAILY_LIMIT) errors.push(`You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today`);
    if (errors.length > 0) throw validationFailed(...errors);
  }

  find(accountId: number, id: number | null): ScheduledStatusRow {
    const row =
      id === null ? undefined : this.db.select().from(scheduledStatuses).where(and(eq(scheduledStatuses.id, id), eq(scheduledStatuses.accountId, accountId))).get();
    if (!row) throw notFound();
    return row;
  }

  list(accountId: number, page: Page): ScheduledStatusRow[] {
    const q = pageQuery(scheduledStatuses.id, page);
    const rows = this.db
      .select()
      .from(scheduledStatuses)
      .where(and(eq(scheduledStatuses.accountId, accountId), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse);
  }

  /** PUT: moves scheduled_at under the same rules. Without one, nothing changes. */
  reschedule(accountId: number, id: number | null, scheduledAtRaw: string | undefined): ScheduledStatusRow {
    const row = this.find(accountId, id);
    if (scheduledAtRaw === undefined || scheduledAtRaw.trim() === "") return row;
    const scheduledAt = parseScheduledAt(scheduledAtRaw);
    if (scheduledAt === null) throw validationFailed(TOO_SOON);
    this.checkTime(accountId, scheduledAt, row.id);
    this.db.update(scheduledStatuses).set({ scheduledAt }).where(eq(scheduledStatuses.id, row.id)).run();
    this.wheel.schedule("scheduled", row.id, scheduledAt);
    return { ...row, scheduledAt };
  }

  /** DELETE: the status will not be published; its media go back to being unattached. */
  cancel(accountId: number, id: number | null) {
    const row = this.find(accountId, id);
    this.db.delete(scheduledStatuses).where(eq(scheduledStatuses.id, row.id)).run();
    this.wheel.cancel("scheduled", row.id);
  }

  media(scheduledIds: number[]): Map<number, MediaRow[]> {
    const out = new Map<number, MediaRow[]>();
    if (scheduledIds.length === 0) return out;
    const rows = this.db
      .select()
      .from(mediaAttachments)
      .where(sql`${mediaAttachments.scheduledStatusId} IN (${sql.join(scheduledIds.map((id) => sql`${id}`), sql`, `)})`)
      .orderBy(mediaAttachments.position)
      .all();
    for (const row of rows) (out.get(row.scheduledStatusId!) ?? out.set(row.scheduledStatusId!, []).get(row.scheduledStatusId!)!).push(row);
    return out;
  }

  /** The wheel's handler: publishes the status if it is (still) due. */
  publishDue(id: number) {
    const row = this.db.select().from(scheduledStatuses).where(eq(scheduledStatuses.id, id)).get();
    if (!row) return;
    if (row.scheduledAt > this.clock.now()) {
      this.wheel.schedule("scheduled", row.id, row.scheduledAt);
      return;
    }
    try {
      this.db.transaction(() => {
        // Claiming the row and publishing commit together: exactly once.
        if (changes(this.db.delete(scheduledStatuses).where(eq(scheduledStatuses.id, row.id)).run()) !== 1) return;
        const input = JSON.parse(row.input) as StatusInput;
        this.posting.publish(this.posting.prepare(row.accountId, row.applicationId, input));
      });
    } catch (e) {
      // What can no longer be posted (a reply whose parent is gone, media deleted meanwhile)
      // is dropped, as Mastodon drops it.
      log("warn", "scheduled status dropped", { scheduled_status_id: row.id, error: e instanceof Error ? e.message : String(e) });
      this.db.delete(scheduledStatuses).where(eq(scheduledStatuses.id, row.id)).run();
    }
  }
}
