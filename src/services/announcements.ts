import { and, asc, count, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import { announcementDismissals, announcementReactions, announcements, type AnnouncementRow } from "../db/schema.ts";
import { notFound, unprocessable, validationFailed } from "../errors.ts";
import type { IdGenerator } from "../ids.ts";
import type { AnnouncementView } from "../models/views.ts";
import { formatText } from "../text/format.ts";
import type { AccountService } from "./accounts/accounts.ts";
import type { CustomEmojiService } from "./custom-emojis.ts";
import type { EventBus } from "../infra/events.ts";
import type { StatusReader } from "./statuses/reader.ts";

/** ReactionValidator::LIMIT: different reactions one announcement takes. */
const REACTION_LIMIT = 8;
/** A unicode emoji (one RGI sequence, or one pictograph written without its variation selector). */
const UNICODE_EMOJI = /^(?:\p{RGI_Emoji}|\p{Extended_Pictographic})$/v;

export interface AnnouncementInput {
  text: string;
  startsAt?: number | null;
  endsAt?: number | null;
  allDay?: boolean;
}

/**
 * Announcements (Mastodon's Announcement): made by the operator with the CLI, shown to every
 * user until their end, dismissed (read) and reacted to per user. What the text mentions,
 * links and tags is read from it when it is shown, so it follows later changes (a renamed
 * or removed account, a removed emoji). Every change is told to all user streams.
 */
export class AnnouncementService {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    private accounts: AccountService,
    private reader: StatusReader,
    private emojis: CustomEmojiService,
    private events: EventBus,
  ) {}

  /** The announcements this process knows of, once watching for other writers (the CLI). */
  private known: Set<number> | null = null;

  /**
   * Announcements are made and deleted by the CLI, another process writing the same database:
   * the server calls this when another connection committed (server.ts), and tells the streams
   * of those that appeared or went since the last call, as it tells of its own.
   */
  syncOtherWriters() {
    const ids = new Set(this.db.select({ id: announcements.id }).from(announcements).all().map((r) => r.id));
    const known = this.known;
    this.known = ids;
    if (!known) return;
    for (const id of ids) if (!known.has(id)) this.events.emit({ type: "announcement.published", announcementId: id });
    for (const id of known) if (!ids.has(id)) this.events.emit({ type: "announcement.deleted", announcementId: id });
  }

  create(input: AnnouncementInput): AnnouncementRow {
    const text = input.text.trim();
    const errors: string[] = [];
    if (text === "") errors.push("Text can't be blank");
    const startsAt = input.startsAt ?? null;
    const endsAt = input.endsAt ?? null;
    if ((startsAt === null) !== (endsAt === null)) errors.push(startsAt === null ? "Starts at can't be blank" : "Ends at can't be blank");
    if (startsAt !== null && endsAt !== null && endsAt < startsAt) errors.push("Ends at must be after the start");
    if (errors.length) throw validationFailed(...errors);
    const now = this.clock.now();
    const row: AnnouncementRow = { id: this.ids.next(), text, startsAt, endsAt, allDay: input.allDay ?? false, publishedAt: now, createdAt: now, updatedAt: now };
    this.db.transaction(() => {
      this.db.insert(announcements).values(row).run();
      this.known?.add(row.id);
      this.events.emit({ type: "announcement.published", announcementId: row.id });
    });
    return row;
  }

  /** Every announcement, ended ones too (the operator's list), oldest first. */
  all(): AnnouncementRow[] {
    return this.db.select().from(announcements).orderBy(asc(announcements.id)).all();
  }

  remove(id: number | null) {
    if (id === null) throw notFound();
    this.db.transaction(() => {
      const gone = this.db.delete(announcements).where(eq(announcements.id, id)).returning({ id: announcements.id }).all();
      if (gone.length === 0) throw notFound();
      this.known?.delete(id);
      this.events.emit({ type: "announcement.deleted", announcementId: id });
    });
  }

  /** Those shown now: not past their end; in the order of what they announce (Mastodon's chronological). */
  current(): AnnouncementRow[] {
    return this.db
      .select()
      .from(announcements)
      .where(or(isNull(announcements.endsAt), gt(announcements.endsAt, this.clock.now())))
      .orderBy(sql`coalesce(${announcements.startsAt}, ${announcements.publishedAt})`, asc(announcements.id))
      .all();
  }

  /** One shown now, or 404 (Announcement.published.find). */
  find(id: number | null): AnnouncementRow {
    const row = id === null ? undefined : this.current().find((a) => a.id === id);
    if (!row) throw notFound();
    return row;
  }

  dismiss(accountId: number, id: number | null) {
    const row = this.find(id);
    this.db.insert(announcementDismissals).values({ accountId, announcementId: row.id, createdAt: this.clock.now() }).onConflictDoNothing().run();
  }

  /** Mastodon's ReactionValidator (a unicode emoji, or one of this server's custom emojis) and its unique index. */
  react(accountId: number, id: number | null, name: string) {
    const row = this.find(id);
    const errors: string[] = [];
    if (name === "") errors.push("Name can't be blank");
    else if (!UNICODE_EMOJI.test(name) && !this.emojis.find(name)) errors.push("Name is not a recognized emoji");
    const names = this.db
      .selectDistinct({ name: announcementReactions.name })
      .from(announcementReactions)
      .where(eq(announcementReactions.announcementId, row.id))
      .all()
      .map((r) => r.name);
    if (!names.includes(name) && names.length >= REACTION_LIMIT) errors.push("Limit of different reactions reached");
    if (errors.length) throw validationFailed(...errors);
    this.db.transaction(() => {
      const inserted = this.db
        .insert(announcementReactions)
        .values({ id: this.ids.next(), accountId, announcementId: row.id, name, createdAt: this.clock.now() })
        .onConflictDoNothing()
        .returning({ id: announcementReactions.id })
        .all();
      // ActiveRecord::RecordNotUnique, as Api::BaseController renders it.
      if (inserted.length === 0) throw unprocessable("Duplicate record");
      this.events.emit({ type: "announcement.reaction", announcementId: row.id, name });
    });
  }

  unreact(accountId: number, id: number | null, name: string) {
    const row = this.find(id);
    this.db.transaction(() => {
      const gone = this.db
        .delete(announcementReactions)
        .where(and(eq(announcementReactions.announcementId, row.id), eq(announcementReactions.accountId, accountId), eq(announcementReactions.name, name)))
        .returning({ id: announcementReactions.id })
        .all();
      if (gone.length === 0) throw notFound();
      this.events.emit({ type: "announcement.reaction", announcementId: row.id, name });
    });
  }

  /** How many reacted `name` to an announcement now (the streams' announcement.reaction payload). */
  reactionCount(announcementId: number, name: string): number {
    return (
      this.db
        .select({ n: count() })
        .from(announcementReactions)
        .where(and(eq(announcementReactions.announcementId, announcementId), eq(announcementReactions.name, name)))
        .get()?.n ?? 0
    );
  }

  /** What the entity shows, for a viewer (or none: the streams' rendering). */
  views(rows: AnnouncementRow[], viewerId: number | null): AnnouncementView[] {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const dismissed =
      viewerId === null
        ? new Set<number>()
        : new Set(
            this.db
              .select({ id: announcementDismissals.announcementId })
              .from(announcementDismissals)
              .where(and(eq(announcementDismissals.accountId, viewerId), inArray(announcementDismissals.announcementId, ids)))
              .all()
              .map((r) => r.id),
          );
    // Announcement#reactions: by name, in the order each was first given.
    const reactions = this.db
      .select({
        announcementId: announcementReactions.announcementId,
        name: announcementReactions.name,
        count: count(),
        me: sql<number>`max(${announcementReactions.accountId} = ${viewerId ?? -1})`,
      })
      .from(announcementReactions)
      .where(inArray(announcementReactions.announcementId, ids))
      .groupBy(announcementReactions.announcementId, announcementReactions.name)
      .orderBy(sql`min(${announcementReactions.id})`)
      .all();
    const resolveMention = this.accounts.mentionResolver(new URL(this.publicUrl).host);
    return rows.map((row) => {
      const formatted = formatText(row.text, { multiline: true, tagBaseUrl: `${this.publicUrl}/tags/`, resolveMention });
      return {
        row,
        html: formatted.html,
        mentions: formatted.mentions,
        statuses: this.linkedStatuses(row.text),
        tags: [...new Set(formatted.tags.map((t) => t.toLowerCase()))],
        emojis: this.emojis.inTexts([row.text]),
        reactions: reactions
          .filter((r) => r.announcementId === row.id)
          .map((r) => {
            const emoji = UNICODE_EMOJI.test(r.name) ? undefined : this.emojis.find(r.name);
            return { name: r.name, count: r.count, me: viewerId === null ? null : r.me === 1, emoji: emoji ? this.emojis.entity(emoji) : null };
          }),
        read: viewerId === null ? null : dismissed.has(row.id),
      };
    });
  }

  /** Public and unlisted statuses of this server that the text links to. */
  private linkedStatuses(text: string): { id: number; url: string }[] {
    const base = this.publicUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const link = new RegExp(`${base}/(?:@[A-Za-z0-9_]+|users/[A-Za-z0-9_]+/statuses)/(\\d{1,19})(?![\\d/])`, "g");
    const found = new Map<number, string>();
    for (const m of text.matchAll(link)) {
      const row = this.reader.findRow(Number(m[1]));
      if (!row || row.uri !== null || row.reblogOfId !== null || this.reader.visible([row], null).length === 0) continue;
      const author = this.accounts.findById(row.accountId);
      if (author) found.set(row.id, `${this.publicUrl}/@${author.username}/${row.id}`);
    }
    return [...found].map(([id, url]) => ({ id, url }));
  }
}
