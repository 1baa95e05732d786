import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/connection.ts";
import type { DatabasePort } from "../db/port.ts";
import { accountConversations, type AccountConversationRow, type StatusRow } from "../db/schema.ts";
import type { IdGenerator } from "../ids.ts";
import { notFound } from "../errors.ts";
import type { NotificationService } from "./notifications/notifications.ts";
import type { EventBus } from "../infra/events.ts";
import { finishPage, pageQuery, type Page } from "../infra/pagination.ts";
import { mentionedIds } from "../models/mentions.ts";

/**
 * Direct-message threads, one row per participant and set of participants (Mastodon's
 * AccountConversation): each direct status joins the thread of its author and of everyone
 * it mentions, unread for all but its author; each change is announced to that participant.
 */
export class ConversationService {
  private q;

  constructor(
    private port: DatabasePort,
    /** For the synchronous half: `added` and `removed` are status events' `within` listeners, `findRow` streaming's. */
    private db: Db,
    private ids: IdGenerator,
    private notifications: NotificationService,
    private events: EventBus,
  ) {
    const { accountConversations: rows } = port.tables;
    const id = sql.placeholder("id");
    const accountId = sql.placeholder("accountId");
    this.q = {
      find: port.orm.select().from(rows).where(and(eq(rows.id, id), eq(rows.accountId, accountId))).prepare(),
      mark: port.orm.update(rows).set({ unread: sql.placeholder("unread") as never }).where(eq(rows.id, id)).prepare(),
      remove: port.orm.delete(rows).where(eq(rows.id, id)).prepare(),
    };
  }

  /** Called for every new status; only direct ones matter. */
  added(status: StatusRow) {
    if (status.visibility !== "direct" || status.reblogOfId !== null) return;
    const participants = [status.accountId, ...mentionedIds(status).filter((id) => id !== status.accountId)];
    // A recipient whose mention would be dropped (blocked or muted sender, muted thread) gets no thread either, as in Mastodon.
    const owners = participants.filter((id) => id === status.accountId || !this.notifications.dropsMention(id, status.accountId, status.id));
    for (const accountId of owners) {
      const others = JSON.stringify(participants.filter((p) => p !== accountId).sort((a, b) => a - b));
      const existing = this.db
        .select()
        .from(accountConversations)
        .where(and(eq(accountConversations.accountId, accountId), eq(accountConversations.conversationId, status.conversationId), eq(accountConversations.participantIds, others)))
        .get();
      const unread = status.accountId !== accountId;
      if (existing) {
        const statusIds = [...(JSON.parse(existing.statusIds) as number[]), status.id];
        this.db
          .update(accountConversations)
          .set({ statusIds: JSON.stringify(statusIds), lastStatusId: Math.max(existing.lastStatusId, status.id), unread: existing.unread || unread })
          .where(eq(accountConversations.id, existing.id))
          .run();
        this.events.emitSync({ type: "conversation.updated", accountId, conversationId: existing.id });
      } else {
        const id = this.ids.next();
        this.db
          .insert(accountConversations)
          .values({ id, accountId, conversationId: status.conversationId, participantIds: others, statusIds: JSON.stringify([status.id]), lastStatusId: status.id, unread })
          .run();
        this.events.emitSync({ type: "conversation.updated", accountId, conversationId: id });
      }
    }
  }

  /** Called for every deleted status: threads lose it, and go when it was their last. */
  removed(status: StatusRow) {
    if (status.visibility !== "direct") return;
    const rows = this.db
      .select()
      .from(accountConversations)
      .where(and(eq(accountConversations.conversationId, status.conversationId), sql`${status.id} IN (SELECT value FROM json_each(${accountConversations.statusIds}))`))
      .all();
    for (const row of rows) {
      const statusIds = (JSON.parse(row.statusIds) as number[]).filter((id) => id !== status.id);
      if (statusIds.length === 0) {
        this.db.delete(accountConversations).where(eq(accountConversations.id, row.id)).run();
      } else {
        this.db
          .update(accountConversations)
          .set({ statusIds: JSON.stringify(statusIds), lastStatusId: Math.max(...statusIds) })
          .where(eq(accountConversations.id, row.id))
          .run();
        this.events.emitSync({ type: "conversation.updated", accountId: row.accountId, conversationId: row.id });
      }
    }
  }

  findRow(accountId: number, id: number): AccountConversationRow | undefined {
    return this.db.select().from(accountConversations).where(and(eq(accountConversations.id, id), eq(accountConversations.accountId, accountId))).get();
  }

  async find(accountId: number, id: number | null): Promise<AccountConversationRow> {
    const [row] = id === null ? [] : await this.q.find.execute({ id, accountId });
    if (!row) throw notFound();
    return row;
  }

  /** Newest first, paged by the last status's id (Mastodon's cursor for this list). */
  async list(accountId: number, page: Page): Promise<AccountConversationRow[]> {
    const { accountConversations: table } = this.port.tables;
    const q = pageQuery(table.lastStatusId, page);
    const rows = await this.port.orm
      .select()
      .from(table)
      .where(and(eq(table.accountId, accountId), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit);
    return finishPage(rows, q.reverse);
  }

  async markRead(accountId: number, id: number | null, unread = false): Promise<AccountConversationRow> {
    const row = await this.find(accountId, id);
    await this.q.mark.execute({ id: row.id, unread });
    await this.events.emit({ type: "conversation.updated", accountId, conversationId: row.id });
    return { ...row, unread };
  }

  async remove(accountId: number, id: number | null) {
    const row = await this.find(accountId, id);
    await this.q.remove.execute({ id: row.id });
  }
}
