import { and, count, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { lockAccount } from "../../db/row-locks.ts";
import { type StatusRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { ApiError, forbidden, notFound, validationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { EventBus } from "../../infra/events.ts";
import type { StatusReader } from "./reader.ts";
import type { RemovalService } from "./removal.ts";
import { newStatusRow, type NewStatuses } from "./new-status.ts";

/**
 * What a user does to a status: favourite, boost, bookmark, mute its thread, pin, and
 * the undos, each with the idempotency of the spec's transitions table. Each returns the
 * row the answer is about; the route renders it for the caller.
 */
export class StatusActionService {
  /** The statements each action runs, prepared once (docs/architecture.md, the database port). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private reader: StatusReader,
    private moderation: ModerationService,
    private removal: RemovalService,
    private events: EventBus,
    private rows: NewStatuses,
  ) {
    const { bookmarks, conversationMutes, favourites, statusPins, statuses } = port.tables;
    const orm = port.orm;
    const p = (name: string) => sql.placeholder(name) as unknown as number;
    const accountId = p("accountId");
    const statusId = p("statusId");
    this.q = {
      favourite: orm.insert(favourites).values({ id: p("id"), accountId, statusId, createdAt: p("now") }).onConflictDoNothing().prepare(),
      favouriteOf: orm.select({ id: favourites.id }).from(favourites).where(and(eq(favourites.accountId, accountId), eq(favourites.statusId, statusId))).limit(1).prepare(),
      unfavourite: orm.delete(favourites).where(eq(favourites.id, p("id"))).prepare(),
      boostOf: orm.select().from(statuses).where(and(eq(statuses.accountId, accountId), eq(statuses.reblogOfId, statusId))).limit(1).prepare(),
      bookmark: orm.insert(bookmarks).values({ id: p("id"), accountId, statusId, createdAt: p("now") }).onConflictDoNothing().prepare(),
      unbookmark: orm.delete(bookmarks).where(and(eq(bookmarks.accountId, accountId), eq(bookmarks.statusId, statusId))).prepare(),
      mute: orm.insert(conversationMutes).values({ accountId, conversationId: p("conversationId") }).onConflictDoNothing().prepare(),
      unmute: orm.delete(conversationMutes).where(and(eq(conversationMutes.accountId, accountId), eq(conversationMutes.conversationId, p("conversationId")))).prepare(),
      pinned: orm.select({ n: count().mapWith(Number) }).from(statusPins).where(eq(statusPins.accountId, accountId)).prepare(),
      pin: orm.insert(statusPins).values({ id: p("id"), accountId, statusId, createdAt: p("now") }).onConflictDoNothing().prepare(),
      unpin: orm.delete(statusPins).where(and(eq(statusPins.accountId, accountId), eq(statusPins.statusId, statusId))).prepare(),
    };
  }

  /** The visible status and what it stands for (a boost's original). */
  private async target(statusId: number | null, actorId: number): Promise<{ row: StatusRow; subject: StatusRow }> {
    const row = await this.reader.visibleRow(statusId, actorId);
    const subject = row.reblogOfId !== null ? ((await this.reader.findRow(row.reblogOfId)) as StatusRow) : row;
    return { row, subject };
  }

  async favourite(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { row, subject } = await this.target(statusId, actorId);
    if (await this.moderation.isBlocking(actorId, subject.accountId)) throw forbidden();
    await this.port.transaction(async () => {
      const id = this.ids.next();
      const inserted = await this.q.favourite.execute({ id, accountId: actorId, statusId: subject.id, now: this.clock.now() });
      if (this.port.changes(inserted) === 0) return;
      await this.events.emit({ type: "favourite.created", favouriteId: id, accountId: actorId, statusId: subject.id, statusAccountId: subject.accountId });
    });
    return row;
  }

  async unfavourite(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { row, subject } = await this.target(statusId, actorId);
    await this.port.transaction(async () => {
      const [favourite] = await this.q.favouriteOf.execute({ accountId: actorId, statusId: subject.id });
      if (!favourite) return;
      await this.q.unfavourite.execute({ id: favourite.id });
      await this.events.emit({ type: "favourite.removed", favouriteId: favourite.id, accountId: actorId, statusId: subject.id, statusAccountId: subject.accountId });
    });
    return row;
  }

  /**
   * Boosts the status (or what a boost boosts); boosting again returns the existing boost.
   * A remote account's boost (an Announce) carries its IRI and date in `remote`.
   */
  async reblog(actorId: number, statusId: number | null, visibilityParam: string | undefined, remote?: { uri: string; createdAt: number }): Promise<StatusRow> {
    const { subject: original } = await this.target(statusId, actorId);
    if (original.visibility === "direct") throw forbidden();
    if (original.visibility === "private" && original.accountId !== actorId) throw forbidden();
    if (await this.moderation.isBlocking(actorId, original.accountId)) throw forbidden();

    const [existing] = await this.q.boostOf.execute({ accountId: actorId, statusId: original.id });
    if (existing) return existing;

    let visibility = visibilityParam ?? "public";
    if (visibility === "direct" || visibility === "limited") throw validationFailed("Visibility is reserved");
    if (!["public", "unlisted", "private"].includes(visibility)) throw validationFailed("Visibility is not included in the list");
    // A boost of a private status (only its author may make one) stays private.
    if (original.visibility === "private") visibility = "private";

    const now = remote ? Math.min(remote.createdAt, this.clock.now()) : this.clock.now();
    const row = newStatusRow({ id: this.ids.next(), accountId: actorId, visibility, reblogOf: original, createdAt: now, uri: remote?.uri ?? null });
    // Two boosts at once (a double tap) both found none above: the unique index keeps one, and
    // only the task that wrote it counts and announces it; the other answers the stored one.
    const created = await this.port.transaction(async () => {
      if (!(await this.rows.insertBoost(row))) return false;
      await this.events.emit({ type: "status.created", status: row, original, homeRecipients: [] });
      return true;
    });
    if (created) return row;
    const [stored] = await this.q.boostOf.execute({ accountId: actorId, statusId: original.id });
    // Nothing of this account's: its IRI was taken by another status (a remote Announce's, reused).
    if (!stored) throw validationFailed("Uri has already been taken");
    return stored;
  }

  /** Takes back the caller's boost; 404 when there is none. Returns the original. */
  async unreblog(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { subject: original } = await this.target(statusId, actorId);
    const [boost] = await this.q.boostOf.execute({ accountId: actorId, statusId: original.id });
    if (!boost) throw notFound();
    await this.removal.remove(boost);
    return (await this.reader.findRow(original.id)) as StatusRow;
  }

  async bookmark(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { row, subject } = await this.target(statusId, actorId);
    await this.q.bookmark.execute({ id: this.ids.next(), accountId: actorId, statusId: subject.id, now: this.clock.now() });
    return row;
  }

  /** 404 when the status was not bookmarked, as the spec's transitions table says. */
  async unbookmark(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { row, subject } = await this.target(statusId, actorId);
    if (this.port.changes(await this.q.unbookmark.execute({ accountId: actorId, statusId: subject.id })) === 0) throw notFound();
    return row;
  }

  /** Mutes the thread for its participants: its authors and the accounts mentioned in it. */
  async muteThread(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { row, subject } = await this.target(statusId, actorId);
    if (!(await this.participates(actorId, subject.conversationId))) throw forbidden();
    await this.q.mute.execute({ accountId: actorId, conversationId: subject.conversationId });
    return row;
  }

  async unmuteThread(actorId: number, statusId: number | null): Promise<StatusRow> {
    const { row, subject } = await this.target(statusId, actorId);
    await this.q.unmute.execute({ accountId: actorId, conversationId: subject.conversationId });
    return row;
  }

  /** Accounts that muted a thread (their copy of a status in it says `muted: true`). */
  async threadMuters(conversationId: number): Promise<Set<number>> {
    return new Set((await this.port.values("SELECT account_id FROM conversation_mutes WHERE conversation_id = ?", [conversationId])).map((r) => Number(r[0])));
  }

  private async participates(accountId: number, conversationId: number): Promise<boolean> {
    const row = await this.port.get(
      `SELECT 1 AS one FROM statuses WHERE conversation_id = ? AND account_id = ?
      UNION ALL
      SELECT 1 FROM mentions m JOIN statuses s ON s.id = m.status_id WHERE m.account_id = ? AND s.conversation_id = ?
      LIMIT 1`,
      [conversationId, accountId, accountId, conversationId],
    );
    return !!row;
  }

  /** Pins one's own public status (Mastodon's StatusPinValidator, in its order, and its limit of 5). */
  /** Pins the caller's own status; a remote account's pins (Add to its featured collection) know no maximum here. */
  async pin(actorId: number, statusId: number | null, options: { remote?: boolean } = {}): Promise<StatusRow> {
    const row = await this.reader.visibleRow(statusId, actorId);
    const errors: string[] = [];
    if (row.reblogOfId !== null) errors.push("A boost cannot be pinned");
    if (row.accountId !== actorId) errors.push("Someone else's toot cannot be pinned");
    if (row.visibility !== "public" && row.visibility !== "unlisted") errors.push("Non-public toot cannot be pinned");
    // Counted and written under the account's lock: pins at once (PostgreSQL; on SQLite, counted
    // before either wrote) count one after another, and the sixth is refused.
    await this.port.transaction(async () => {
      if (!options.remote) await lockAccount(this.port, actorId);
      const pinned = options.remote ? 0 : ((await this.q.pinned.execute({ accountId: actorId }))[0]?.n ?? 0);
      if (pinned >= LIMITS.maxPinnedStatuses) errors.push("Maximum number of pinned toots already reached");
      if (errors.length > 0) throw validationFailed(...errors);
      const inserted = await this.q.pin.execute({ id: this.ids.next(), accountId: actorId, statusId: row.id, now: this.clock.now() });
      if (this.port.changes(inserted) === 0) throw new ApiError(422, "Duplicate record");
      await this.events.emit({ type: "status.pinned", accountId: actorId, statusId: row.id });
    });
    return row;
  }

  async unpin(actorId: number, statusId: number | null): Promise<StatusRow> {
    const row = await this.reader.visibleRow(statusId, actorId);
    if (this.port.changes(await this.q.unpin.execute({ accountId: actorId, statusId: row.id })) > 0) await this.events.emit({ type: "status.unpinned", accountId: actorId, statusId: row.id });
    return row;
  }

  /** DELETE /api/v1/statuses/:id: only the author's own statuses (404 for anything else). */
  async ownStatus(actorId: number, statusId: number | null): Promise<StatusRow> {
    const row = statusId === null ? undefined : await this.reader.findRow(statusId);
    if (!row || row.accountId !== actorId) throw notFound();
    return row;
  }
}
