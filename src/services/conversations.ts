import { and, eq, sql } from "drizzle-orm";
import type { DatabasePort } from "../db/port.ts";
import { lockRows } from "../db/row-locks.ts";
import { type AccountConversationRow, type StatusRow } from "../db/schema.ts";
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
      thread: port.orm
        .select()
        .from(rows)
        .where(and(eq(rows.accountId, accountId), eq(rows.conversationId, sql.placeholder("conversationId")), eq(rows.participantIds, sql.placeholder("participantIds"))))
        .limit(1)
        .prepare(),
      ofConversation: port.orm.select().from(rows).where(eq(rows.conversationId, sql.placeholder("conversationId"))).prepare(),
      grow: port.orm
        .update(rows)
        .set({ statusIds: sql.placeholder("statusIds") as never, lastStatusId: sql.placeholder("lastStatusId") as never, unread: sql.placeholder("unread") as never })
        .where(eq(rows.id, id))
        .prepare(),
      shrink: port.orm
        .update(rows)
        .set({ statusIds: sql.placeholder("statusIds") as never, lastStatusId: sql.placeholder("lastStatusId") as never })
        .where(eq(rows.id, id))
        .prepare(),
      insert: port.orm
        .insert(rows)
        .values({
          id,
          accountId,
          conversationId: sql.placeholder("conversationId"),
          participantIds: sql.placeholder("participantIds"),
          statusIds: sql.placeholder("statusIds"),
          lastStatusId: sql.placeholder("lastStatusId"),
          unread: sql.placeholder("unread"),
        })
        // Two direct statuses of a new thread written at once (PostgreSQL): the second finds the first's row.
        .onConflictDoNothing({ target: [rows.accountId, rows.conversationId, rows.participantIds] })
        .prepare(),
    };
  }

  /** Called for every new status (status.created's `within` listener); only direct ones matter. */
  async added(status: StatusRow): Promise<void> {
    if (status.visibility !== "direct" || status.reblogOfId !== null) return;
    const participants = [status.accountId, ...mentionedIds(status).filter((id) => id !== status.accountId)];
    // Each participant's row is locked as it is grown (`grow`), in the order of the accounts: two
    // direct statuses of one thread written at once take them in the same order, where the
    // order of their mentions would have let each hold a row the other waits for (a deadlock).
    for (const accountId of [...participants].sort((a, b) => a - b)) {
      // A recipient whose mention would be dropped (blocked or muted sender, muted thread) gets no thread either, as in Mastodon.
      if (accountId !== status.accountId && (await this.notifications.dropsMention(accountId, status.accountId, status.id))) continue;
      const participantIds = JSON.stringify(participants.filter((p) => p !== accountId).sort((a, b) => a - b));
      const conversationId = await this.grow(status, accountId, participantIds);
      if (conversationId !== null) await this.events.emit({ type: "conversation.updated", accountId, conversationId });
    }
  }

  /**
   * The participant's thread with the status added: made if it is new, else its row locked and
   * read again, so that two statuses added at once on PostgreSQL both stay in its list and its
   * last status never moves back. Answers its id; null if it went (left) between the two tries.
   */
  private async grow(status: StatusRow, accountId: number, participantIds: string): Promise<number | null> {
    const unread = status.accountId !== accountId;
    const thread = { accountId, conversationId: status.conversationId, participantIds };
    for (let tries = 0; tries < 2; tries++) {
      const id = this.ids.next();
      const made = await this.q.insert.execute({ id, ...thread, statusIds: JSON.stringify([status.id]), lastStatusId: status.id, unread });
      if (this.port.changes(made) > 0) return id;
      await lockRows(this.port, "SELECT id FROM account_conversations WHERE account_id = ? AND conversation_id = ? AND participant_ids = ?", [accountId, status.conversationId, participantIds]);
      const [existing] = await this.q.thread.execute(thread);
      if (!existing) continue;
      const statusIds = [...(JSON.parse(existing.statusIds) as number[]), status.id];
      await this.q.grow.execute({ id: existing.id, statusIds: JSON.stringify(statusIds), lastStatusId: Math.max(existing.lastStatusId, status.id), unread: existing.unread || unread });
      return existing.id;
    }
    return null;
  }

  /**
   * Called for every deleted status (status.deleted's `within` listener): threads lose it, and go
   * when it was their last. The conversation's few rows are read and their lists of ids searched
   * here (portable: no json_each), locked first as `grow` locks them (in the order of the
   * accounts), so that a status added to a thread at once is not lost.
   */
  async removed(status: StatusRow): Promise<void> {
    if (status.visibility !== "direct") return;
    await lockRows(this.port, "SELECT id FROM account_conversations WHERE conversation_id = ? ORDER BY account_id, id", [status.conversationId]);
    for (const row of await this.q.ofConversation.execute({ conversationId: status.conversationId })) {
      const held = JSON.parse(row.statusIds) as number[];
      if (!held.includes(status.id)) continue;
      const statusIds = held.filter((id) => id !== status.id);
      if (statusIds.length === 0) {
        await this.q.remove.execute({ id: row.id });
      } else {
        await this.q.shrink.execute({ id: row.id, statusIds: JSON.stringify(statusIds), lastStatusId: Math.max(...statusIds) });
        await this.events.emit({ type: "conversation.updated", accountId: row.accountId, conversationId: row.id });
      }
    }
  }

  /** The participant's conversation, or undefined (streaming's, told of a change). */
  async findRow(accountId: number, id: number): Promise<AccountConversationRow | undefined> {
    return (await this.q.find.execute({ id, accountId }))[0];
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
