import { and, asc, count, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import type { AnnouncementRow } from "../db/schema.ts";
import { notFound, unprocessable, validationFailed } from "../errors.ts";
import type { IdGenerator } from "../ids.ts";
import type { CustomEmoji } from "../models/emojis.ts";
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
  // Built once: drizzle spends more building a query than SQLite running it (src/db/port.ts).
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    private accounts: AccountService,
    private reader: StatusReader,
    private emojis: CustomEmojiService,
    private events: EventBus,
  ) {
    const { announcements, announcementDismissals: dismissals, announcementReactions: reactions } = port.tables;
    const orm = port.orm;
    const p = sql.placeholder;
    const reaction = and(eq(reactions.announcementId, p("announcementId")), eq(reactions.name, p("name")));
    this.q = {
      ids: orm.select({ id: announcements.id }).from(announcements).prepare(),
      all: orm.select().from(announcements).orderBy(asc(announcements.id)).prepare(),
      insert: orm.insert(announcements).values({
        id: p("id"),
        text: p("text"),
        startsAt: p("startsAt"),
        endsAt: p("endsAt"),
        allDay: p("allDay"),
        publishedAt: p("publishedAt"),
        createdAt: p("createdAt"),
        updatedAt: p("updatedAt"),
      } as never).prepare(),
      remove: orm.delete(announcements).where(eq(announcements.id, p("id"))).returning({ id: announcements.id }).prepare(),
      current: orm
        .select()
        .from(announcements)
        .where(or(isNull(announcements.endsAt), gt(announcements.endsAt, p("now"))))
        .orderBy(sql`coalesce(${announcements.startsAt}, ${announcements.publishedAt})`, asc(announcements.id))
        .prepare(),
      dismiss: orm.insert(dismissals).values({ accountId: p("accountId"), announcementId: p("announcementId"), createdAt: p("now") }).onConflictDoNothing().prepare(),
      // All of a viewer's: one per announcement at most, and announcements are few (their rows go with them).
      dismissed: orm.select({ id: dismissals.announcementId }).from(dismissals).where(eq(dismissals.accountId, p("viewerId"))).prepare(),
      names: orm.selectDistinct({ name: reactions.name }).from(reactions).where(eq(reactions.announcementId, p("announcementId"))).prepare(),
      react: orm
        .insert(reactions)
        .values({ id: p("id"), accountId: p("accountId"), announcementId: p("announcementId"), name: p("name"), createdAt: p("now") })
        .onConflictDoNothing()
        .returning({ id: reactions.id })
        .prepare(),
      unreact: orm
        .delete(reactions)
        .where(and(reaction, eq(reactions.accountId, p("accountId"))))
        .returning({ id: reactions.id })
        .prepare(),
      count: orm.select({ n: count() }).from(reactions).where(reaction).prepare(),
      // Announcement#reactions: by name, in the order each was first given. `me` as CASE, not
      // max(boolean): PostgreSQL has no max of booleans.
      reactions: orm
        .select({ name: reactions.name, count: count(), me: sql<number>`max(CASE WHEN ${reactions.accountId} = ${p("viewerId")} THEN 1 ELSE 0 END)`.mapWith(Number) })
        .from(reactions)
        .where(eq(reactions.announcementId, p("announcementId")))
        .groupBy(reactions.name)
        .orderBy(sql`min(${reactions.id})`)
        .prepare(),
    };
  }

  /** The announcements this process knows of, once watching for other writers (the CLI). */
  private known: Set<number> | null = null;
  /** Bumped by this process's own creations and removals, which change `known` while a sync reads. */
  private ownChanges = 0;
  private syncing: Promise<void> = Promise.resolve();

  /**
   * Announcements are made and deleted by the CLI, another process writing the same database:
   * the server calls this when another connection committed (server.ts), and tells the streams
   * of those that appeared or went since the last call, as it tells of its own. Calls run one
   * after another.
   */
  syncOtherWriters(): Promise<void> {
    const next = this.syncing.then(() => this.sync());
    // A failed sync does not stop the later ones: `known` is only set by one that succeeded.
    this.syncing = next.catch(() => {});
    return next;
  }

  private async sync() {
    let ids: Set<number>;
    // One of this process's own creations or removals between the read and now would be taken
    // for another writer's (told twice, or told deleted): read again.
    for (;;) {
      const seen = this.ownChanges;
      ids = new Set(((await this.q.ids.execute()) as { id: number }[]).map((r) => r.id));
      if (seen === this.ownChanges) break;
    }
    const known = this.known;
    this.known = ids;
    if (!known) return;
    for (const id of ids) if (!known.has(id)) await this.events.emit({ type: "announcement.published", announcementId: id });
    for (const id of known) if (!ids.has(id)) await this.events.emit({ type: "announcement.deleted", announcementId: id });
  }

  async create(input: AnnouncementInput): Promise<AnnouncementRow> {
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
    await this.port.transaction(async () => {
      await this.q.insert.execute(row);
      this.ownChanges++;
      this.known?.add(row.id);
      await this.events.emit({ type: "announcement.published", announcementId: row.id });
    });
    return row;
  }

  /** Every announcement, ended ones too (the operator's list), oldest first. */
  async all(): Promise<AnnouncementRow[]> {
    return (await this.q.all.execute()) as AnnouncementRow[];
  }

  async remove(id: number | null): Promise<void> {
    if (id === null) throw notFound();
    await this.port.transaction(async () => {
      const gone = (await this.q.remove.execute({ id })) as unknown[];
      if (gone.length === 0) throw notFound();
      this.ownChanges++;
      this.known?.delete(id);
      await this.events.emit({ type: "announcement.deleted", announcementId: id });
    });
  }

  /** Those shown now: not past their end; in the order of what they announce (Mastodon's chronological). */
  async current(): Promise<AnnouncementRow[]> {
    return (await this.q.current.execute({ now: this.clock.now() })) as AnnouncementRow[];
  }

  /** One shown now, or 404 (Announcement.published.find). */
  async find(id: number | null): Promise<AnnouncementRow> {
    const row = id === null ? undefined : (await this.current()).find((a) => a.id === id);
    if (!row) throw notFound();
    return row;
  }

  async dismiss(accountId: number, id: number | null) {
    const row = await this.find(id);
    await this.q.dismiss.execute({ accountId, announcementId: row.id, now: this.clock.now() });
  }

  /** Mastodon's ReactionValidator (a unicode emoji, or one of this server's custom emojis) and its unique index. */
  async react(accountId: number, id: number | null, name: string) {
    const row = await this.find(id);
    const errors: string[] = [];
    if (name === "") errors.push("Name can't be blank");
    else if (!UNICODE_EMOJI.test(name) && !(await this.emojis.find(name))) errors.push("Name is not a recognized emoji");
    const names = ((await this.q.names.execute({ announcementId: row.id })) as { name: string }[]).map((r) => r.name);
    if (!names.includes(name) && names.length >= REACTION_LIMIT) errors.push("Limit of different reactions reached");
    if (errors.length) throw validationFailed(...errors);
    await this.port.transaction(async () => {
      const inserted = (await this.q.react.execute({ id: this.ids.next(), accountId, announcementId: row.id, name, now: this.clock.now() })) as unknown[];
      // ActiveRecord::RecordNotUnique, as Api::BaseController renders it.
      if (inserted.length === 0) throw unprocessable("Duplicate record");
      await this.events.emit({ type: "announcement.reaction", announcementId: row.id, name });
    });
  }

  async unreact(accountId: number, id: number | null, name: string) {
    const row = await this.find(id);
    await this.port.transaction(async () => {
      const gone = (await this.q.unreact.execute({ announcementId: row.id, accountId, name })) as unknown[];
      if (gone.length === 0) throw notFound();
      await this.events.emit({ type: "announcement.reaction", announcementId: row.id, name });
    });
  }

  /** How many reacted `name` to an announcement now (the streams' announcement.reaction payload). */
  async reactionCount(announcementId: number, name: string): Promise<number> {
    const [row] = (await this.q.count.execute({ announcementId, name })) as { n: number }[];
    return row?.n ?? 0;
  }

  /** What the entity shows, for a viewer (or none: the streams' rendering). */
  async views(rows: AnnouncementRow[], viewerId: number | null): Promise<AnnouncementView[]> {
    if (rows.length === 0) return [];
    const dismissed = viewerId === null ? new Set<number>() : new Set(((await this.q.dismissed.execute({ viewerId })) as { id: number }[]).map((r) => r.id));
    // One prepared statement per announcement: they are few, and a list parameter is not yet portable.
    const reactions: { name: string; count: number; me: number }[][] = [];
    for (const row of rows) reactions.push((await this.q.reactions.execute({ announcementId: row.id, viewerId: viewerId ?? -1 })) as { name: string; count: number; me: number }[]);
    const resolveMention = await this.accounts.mentionsIn(rows.map((r) => r.text), new URL(this.publicUrl).host);
    const used = await Promise.all(rows.map((row) => this.emojis.inTexts([row.text])));
    // The custom emojis reacted with, each read once.
    const custom = new Map<string, CustomEmoji | null>();
    for (const r of reactions.flat()) {
      if (UNICODE_EMOJI.test(r.name) || custom.has(r.name)) continue;
      const emoji = await this.emojis.find(r.name);
      custom.set(r.name, emoji ? this.emojis.entity(emoji) : null);
    }
    const linked = await Promise.all(rows.map((row) => this.linkedStatuses(row.text)));
    return rows.map((row, i) => {
      const formatted = formatText(row.text, { multiline: true, tagBaseUrl: `${this.publicUrl}/tags/`, resolveMention });
      return {
        row,
        html: formatted.html,
        mentions: formatted.mentions,
        statuses: linked[i]!,
        tags: [...new Set(formatted.tags.map((t) => t.toLowerCase()))],
        emojis: used[i]!,
        reactions: reactions[i]!.map((r) => ({ name: r.name, count: r.count, me: viewerId === null ? null : r.me === 1, emoji: custom.get(r.name) ?? null })),
        read: viewerId === null ? null : dismissed.has(row.id),
      };
    });
  }

  /** Public and unlisted statuses of this server that the text links to. */
  private async linkedStatuses(text: string): Promise<{ id: number; url: string }[]> {
    const base = this.publicUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const link = new RegExp(`${base}/(?:@[A-Za-z0-9_]+|users/[A-Za-z0-9_]+/statuses)/(\\d{1,19})(?![\\d/])`, "g");
    const found = new Map<number, string>();
    for (const m of text.matchAll(link)) {
      const row = await this.reader.findRow(Number(m[1]));
      if (!row || row.uri !== null || row.reblogOfId !== null || (await this.reader.visible([row], null)).length === 0) continue;
      const author = await this.accounts.get(row.accountId);
      if (author) found.set(row.id, `${this.publicUrl}/@${author.username}/${row.id}`);
    }
    return [...found].map(([id, url]) => ({ id, url }));
  }
}
