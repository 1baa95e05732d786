import { and, asc, count, desc, eq, gt, gte, inArray, lt, ne, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { MediaRow, ScheduledStatusRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { ApiError, notFound, unprocessable, validationFailed } from "../../errors.ts";
import { log } from "../../log.ts";
import { finishPage, type Page } from "../../infra/pagination.ts";
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
  /** The statements the routes and the wheel run, prepared once (docs/architecture.md, the database port). */
  private q;

  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private posting: PostingService,
    private wheel: TimerWheel,
  ) {
    wheel.handle("scheduled", (id) => this.publishDue(Number(id)));
    const { scheduledStatuses: s, mediaAttachments: m } = db.tables;
    const orm = db.orm;
    const p = (name: string) => sql.placeholder(name) as unknown as number;
    // Those of the account, less the one being moved (-1 when none is).
    const others = and(eq(s.accountId, p("accountId")), ne(s.id, p("excluding")));
    this.q = {
      own: orm.select().from(s).where(and(eq(s.id, p("id")), eq(s.accountId, p("accountId")))).prepare(),
      byId: orm.select().from(s).where(eq(s.id, p("id"))).prepare(),
      insert: orm
        .insert(s)
        .values({ id: p("id"), accountId: p("accountId"), scheduledAt: p("scheduledAt"), params: sql.placeholder("params") as unknown as string, input: sql.placeholder("input") as unknown as string, applicationId: p("applicationId"), createdAt: p("createdAt") })
        .prepare(),
      attach: orm.update(m).set({ scheduledStatusId: p("scheduledId"), position: p("position") }).where(eq(m.id, p("id"))).prepare(),
      total: orm.select({ n: count().mapWith(Number) }).from(s).where(others).prepare(),
      sameDay: orm.select({ n: count().mapWith(Number) }).from(s).where(and(others, gte(s.scheduledAt, p("from")), lt(s.scheduledAt, p("to")))).prepare(),
      move: orm.update(s).set({ scheduledAt: p("scheduledAt") }).where(eq(s.id, p("id"))).prepare(),
      remove: orm.delete(s).where(eq(s.id, p("id"))).prepare(),
      // A page of any cursors, in two shapes: newest first, or forward from min_id.
      page: orm.select().from(s).where(and(eq(s.accountId, p("accountId")), lt(s.id, p("below")), gt(s.id, p("above")))).orderBy(desc(s.id)).limit(p("limit")).prepare(),
      pageForward: orm.select().from(s).where(and(eq(s.accountId, p("accountId")), lt(s.id, p("below")), gt(s.id, p("above")))).orderBy(asc(s.id)).limit(p("limit")).prepare(),
    };
  }

  /** Puts every pending schedule on the wheel; those due while the server was down fire at once. */
  async restore() {
    const s = this.db.tables.scheduledStatuses;
    for (const row of await this.db.orm.select({ id: s.id, at: s.scheduledAt }).from(s)) {
      this.wheel.hold("scheduled", row.id, row.at);
    }
  }

  /**
   * POST /api/v1/statuses with scheduled_at. Checks in Mastodon's order: the date must
   * parse, the status must be valid (reported, as Mastodon does, as "Record invalid"), then
   * the time and the account's limits.
   */
  async schedule(accountId: number, applicationId: number | null, input: StatusInput, scheduledAtRaw: string, params: Record<string, unknown>): Promise<ScheduledStatusRow> {
    const scheduledAt = parseScheduledAt(scheduledAtRaw);
    if (scheduledAt === null) throw unprocessable("Record invalid");
    let mediaIds: number[];
    try {
      mediaIds = (await this.posting.prepare(accountId, applicationId, input)).mediaIds;
    } catch (e) {
      if (e instanceof ApiError && e.status === 422 && e.message.startsWith("Validation failed:")) throw unprocessable("Record invalid");
      throw e;
    }
    const row: ScheduledStatusRow = {
      id: this.ids.next(),
      accountId,
      scheduledAt,
      params: JSON.stringify(params),
      input: JSON.stringify(input),
      applicationId,
      createdAt: this.clock.now(),
    };
    // The limits are checked in the transaction that writes: two requests at once count each other.
    await this.db.transaction(async () => {
      await this.checkTime(accountId, scheduledAt, null);
      await this.q.insert.execute(row);
      for (const [position, id] of mediaIds.entries()) await this.q.attach.execute({ scheduledId: row.id, position, id });
    });
    this.wheel.schedule("scheduled", row.id, scheduledAt);
    return row;
  }

  /** The 5-minute rule and the 300-pending and 25-a-day limits (the day is the target's UTC day). */
  private async checkTime(accountId: number, scheduledAt: number, excluding: number | null) {
    if (scheduledAt < this.clock.now() + MINIMUM_OFFSET_MS) throw validationFailed(TOO_SOON);
    const day = dayOf(scheduledAt);
    const others = { accountId, excluding: excluding ?? -1 };
    const total = (await this.q.total.execute(others))[0]?.n ?? 0;
    const sameDay = (await this.q.sameDay.execute({ ...others, from: day * 86_400_000, to: (day + 1) * 86_400_000 }))[0]?.n ?? 0;
    const errors: string[] = [];
    if (total >= TOTAL_LIMIT) errors.push(`You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts`);
    if (sameDay >= DAILY_LIMIT) errors.push(`You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today`);
    if (errors.length > 0) throw validationFailed(...errors);
  }

  async find(accountId: number, id: number | null): Promise<ScheduledStatusRow> {
    const [row] = id === null ? [] : await this.q.own.execute({ id, accountId });
    if (!row) throw notFound();
    return row;
  }

  async list(accountId: number, page: Page): Promise<ScheduledStatusRow[]> {
    const forward = page.minId !== undefined;
    const bounds = { accountId, below: page.maxId ?? Number.MAX_SAFE_INTEGER, above: Math.max(page.sinceId ?? 0, page.minId ?? 0), limit: page.limit };
    const rows = await (forward ? this.q.pageForward : this.q.page).execute(bounds);
    return finishPage(rows, forward);
  }

  /** PUT: moves scheduled_at under the same rules. Without one, nothing changes. */
  async reschedule(accountId: number, id: number | null, scheduledAtRaw: string | undefined): Promise<ScheduledStatusRow> {
    const row = await this.find(accountId, id);
    if (scheduledAtRaw === undefined || scheduledAtRaw.trim() === "") return row;
    const scheduledAt = parseScheduledAt(scheduledAtRaw);
    if (scheduledAt === null) throw validationFailed(TOO_SOON);
    await this.db.transaction(async () => {
      await this.checkTime(accountId, scheduledAt, row.id);
      await this.q.move.execute({ scheduledAt, id: row.id });
    });
    this.wheel.schedule("scheduled", row.id, scheduledAt);
    return { ...row, scheduledAt };
  }

  /** DELETE: the status will not be published; its media go back to being unattached. */
  async cancel(accountId: number, id: number | null) {
    const row = await this.find(accountId, id);
    await this.q.remove.execute({ id: row.id });
    this.wheel.cancel("scheduled", row.id);
  }

  async media(scheduledIds: number[]): Promise<Map<number, MediaRow[]>> {
    const out = new Map<number, MediaRow[]>();
    if (scheduledIds.length === 0) return out;
    const m = this.db.tables.mediaAttachments;
    const rows = await this.db.orm.select().from(m).where(inArray(m.scheduledStatusId, scheduledIds)).orderBy(m.position);
    for (const row of rows) (out.get(row.scheduledStatusId!) ?? out.set(row.scheduledStatusId!, []).get(row.scheduledStatusId!)!).push(row);
    return out;
  }

  /** The wheel's handler: publishes the status if it is (still) due. */
  async publishDue(id: number) {
    const [row] = await this.q.byId.execute({ id });
    if (!row) return;
    if (row.scheduledAt > this.clock.now()) {
      this.wheel.schedule("scheduled", row.id, row.scheduledAt);
      return;
    }
    try {
      await this.db.transaction(async () => {
        // Claiming the row and publishing commit together: exactly once.
        if (this.db.changes(await this.q.remove.execute({ id: row.id })) !== 1) return;
        const input = JSON.parse(row.input) as StatusInput;
        await this.posting.publish(await this.posting.prepare(row.accountId, row.applicationId, input));
      });
    } catch (e) {
      // What can no longer be posted (a reply whose parent is gone, media deleted meanwhile)
      // is dropped, as Mastodon drops it.
      log("warn", "scheduled status dropped", { scheduled_status_id: row.id, error: e instanceof Error ? e.message : String(e) });
      await this.q.remove.execute({ id: row.id });
    }
  }
}
