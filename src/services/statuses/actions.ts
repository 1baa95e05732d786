import { and, count, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import { changes, type Db } from "../../db/connection.ts";
import { bookmarks, conversationMutes, favourites, statusPins, statuses, type StatusRow } from "../../db/schema.ts";
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
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private reader: StatusReader,
    private moderation: ModerationService,
    private removal: RemovalService,
    private events: EventBus,
    private rows: NewStatuses,
  ) {}

  /** The visible status and what it stands for (a boost's original). */
  private target(statusId: number | null, actorId: number): { row: StatusRow; subject: StatusRow } {
    const row = this.reader.visibleRow(statusId, actorId);
    const subject = row.reblogOfId !== null ? (this.reader.findRow(row.reblogOfId) as StatusRow) : row;
    return { row, subject };
  }

  favourite(actorId: number, statusId: number | null): StatusRow {
    const { row, subject } = this.target(statusId, actorId);
    if (this.moderation.isBlocking(actorId, subject.accountId)) throw forbidden();
    this.db.transaction((tx) => {
      const id = this.ids.next();
      const inserted = tx.insert(favourites).values({ id, accountId: actorId, statusId: subject.id, createdAt: this.clock.now() }).onConflictDoNothing().run();
      if (changes(inserted) === 0) return;
      this.events.emit({ type: "favourite.created", favouriteId: id, accountId: actorId, statusId: subject.id, statusAccountId: subject.accountId });
    });
    return row;
  }

  unfavourite(actorId: number, statusId: number | null): StatusRow {
    const { row, subject } = this.target(statusId, actorId);
    this.db.transaction((tx) => {
      const favourite = tx.select({ id: favourites.id }).from(favourites).where(and(eq(favourites.accountId, actorId), eq(favourites.statusId, subject.id))).get();
      if (!favourite) return;
      tx.delete(favourites).where(eq(favourites.id, favourite.id)).run();
      this.events.emit({ type: "favourite.removed", favouriteId: favourite.id, accountId: actorId, statusId: subject.id, statusAccountId: subject.accountId });
    });
    return row;
  }

  /**
   * Boosts the status (or what a boost boosts); boosting again returns the existing boost.
   * A remote account's boost (an Announce) carries its IRI and date in `remote`.
   */
  reblog(actorId: number, statusId: number | null, visibilityParam: string | undefined, remote?: { uri: string; createdAt: number }): StatusRow {
    const { subject: original } = this.target(statusId, actorId);
    if (original.visibility === "direct") throw forbidden();
    if (original.visibility === "private" && original.accountId !== actorId) throw forbidden();
    if (this.moderation.isBlocking(actorId, original.accountId)) throw forbidden();

    const existing = this.db
      .select()
      .from(statuses)
      .where(and(eq(statuses.accountId, actorId), eq(statuses.reblogOfId, original.id)))
      .get();
    if (existing) return existing;

    let visibility = visibilityParam ?? "public";
    if (visibility === "direct" || visibility === "limited") throw validationFailed("Visibility is reserved");
    if (!["public", "unlisted", "private"].includes(visibility)) throw validationFailed("Visibility is not included in the list");
    // A boost of a private status (only its author may make one) stays private.
    if (original.visibility === "private") visibility = "private";

    const now = remote ? Math.min(remote.createdAt, this.clock.now()) : this.clock.now();
    const row = newStatusRow({ id: this.ids.next(), accountId: actorId, visibility, reblogOf: original, createdAt: now, uri: remote?.uri ?? null });
    const created = this.db.transaction((tx) => {
      // Two boosts racing: the second finds the first inside the transaction.
      const raced = tx
        .select({ id: statuses.id })
        .from(statuses)
        .where(and(eq(statuses.accountId, actorId), eq(statuses.reblogOfId, original.id)))
        .get();
      if (raced) return false;
      this.rows.add(row);
      this.events.emit({ type: "status.created", status: row, original, homeRecipients: [] });
      return true;
    });
    if (!created) return this.reblog(actorId, original.id, visibilityParam, remote);
    return row;
  }

  /** Takes back the caller's boost; 404 when there is none. Returns the original. */
  unreblog(actorId: number, statusId: number | null): StatusRow {
    const { subject: original } = this.target(statusId, actorId);
    const boost = this.db
      .select()
      .from(statuses)
      .where(and(eq(statuses.accountId, actorId), eq(statuses.reblogOfId, original.id)))
      .get();
    if (!boost) throw notFound();
    this.removal.remove(boost);
    return this.reader.findRow(original.id) as StatusRow;
  }

  bookmark(actorId: number, statusId: number | null): StatusRow {
    const { row, subject } = this.target(statusId, actorId);
    this.db
      .insert(bookmarks)
      .values({ id: this.ids.next(), accountId: actorId, statusId: subject.id, createdAt: this.clock.now() })
      .onConflictDoNothing()
      .run();
    return row;
  }

  /** 404 when the status was not bookmarked, as the spec's transitions table says. */
  unbookmark(actorId: number, statusId: number | null): StatusRow {
    const { row, subject } = this.target(statusId, actorId);
    const deleted = this.db.delete(bookmarks).where(and(eq(bookmarks.accountId, actorId), eq(bookmarks.statusId, subject.id))).run();
    if (changes(deleted) === 0) throw notFound();
    return row;
  }

  /** Mutes the thread for its participants: its authors and the accounts mentioned in it. */
  muteThread(actorId: number, statusId: number | null): StatusRow {
    const { row, subject } = this.target(statusId, actorId);
    if (!this.participates(actorId, subject.conversationId)) throw forbidden();
    this.db.insert(conversationMutes).values({ accountId: actorId, conversationId: subject.conversationId }).onConflictDoNothing().run();
    return row;
  }

  unmuteThread(actorId: number, statusId: number | null): StatusRow {
    const { row, subject } = this.target(statusId, actorId);
    this.db
      .delete(conversationMutes)
      .where(and(eq(conversationMutes.accountId, actorId), eq(conversationMutes.conversationId, subject.conversationId)))
      .run();
    return row;
  }

  /** Accounts that muted a thread (their copy of a status in it says `muted: true`). */
  threadMuters(conversationId: number): Set<number> {
    return new Set(
      this.db.select({ id: conversationMutes.accountId }).from(conversationMutes).where(eq(conversationMutes.conversationId, conversationId)).all().map((r) => r.id),
    );
  }

  private participates(accountId: number, conversationId: number): boolean {
    const row = this.db.get<{ one: number } | undefined>(sql`
      SELECT 1 AS one FROM statuses WHERE conversation_id = ${conversationId} AND account_id = ${accountId}
      UNION ALL
      SELECT 1 FROM mentions m JOIN statuses s ON s.id = m.status_id WHERE m.account_id = ${accountId} AND s.conversation_id = ${conversationId}
      LIMIT 1`);
    return !!row;
  }

  /** Pins one's own public status (Mastodon's StatusPinValidator, in its order, and its limit of 5). */
  /** Pins the caller's own status; a remote account's pins (Add to its featured collection) know no maximum here. */
  pin(actorId: number, statusId: number | null, options: { remote?: boolean } = {}): StatusRow {
    const row = this.reader.visibleRow(statusId, actorId);
    const errors: string[] = [];
    if (row.reblogOfId !== null) errors.push("A boost cannot be pinned");
    if (row.accountId !== actorId) errors.push("Someone else's toot cannot be pinned");
    if (row.visibility !== "public" && row.visibility !== "unlisted") errors.push("Non-public toot cannot be pinned");
    const pinned = options.remote ? 0 : (this.db.select({ n: count() }).from(statusPins).where(eq(statusPins.accountId, actorId)).get()?.n ?? 0);
    if (pinned >= LIMITS.maxPinnedStatuses) errors.push("Maximum number of pinned toots already reached");
    if (errors.length > 0) throw validationFailed(...errors);
    const inserted = this.db
      .insert(statusPins)
      .values({ id: this.ids.next(), accountId: actorId, statusId: row.id, createdAt: this.clock.now() })
      .onConflictDoNothing()
      .run();
    if (changes(inserted) === 0) throw new ApiError(422, "Duplicate record");
    this.events.emit({ type: "status.pinned", accountId: actorId, statusId: row.id });
    return row;
  }

  unpin(actorId: number, statusId: number | null): StatusRow {
    const row = this.reader.visibleRow(statusId, actorId);
    const deleted = this.db.delete(statusPins).where(and(eq(statusPins.accountId, actorId), eq(statusPins.statusId, row.id))).run();
    if (changes(deleted) > 0) this.events.emit({ type: "status.unpinned", accountId: actorId, statusId: row.id });
    return row;
  }

  /** DELETE /api/v1/statuses/:id: only the author's own statuses (404 for anything else). */
  ownStatus(actorId: number, statusId: number | null): StatusRow {
    const row = statusId === null ? undefined : this.reader.findRow(statusId);
    if (!row || row.accountId !== actorId) throw notFound();
    return row;
  }
}
