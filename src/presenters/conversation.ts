import type { AppContext } from "../context.ts";
import type { AccountConversationRow, AccountRow } from "../db/schema.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { renderStatuses } from "./status-json.ts";

/** REST::ConversationSerializer: the other participants (or only me, in a note to self). */
export function serializeConversation(urls: Urls, row: AccountConversationRow, participants: AccountRow[], lastStatus: unknown) {
  return {
    id: String(row.id),
    unread: row.unread,
    accounts: participants.map((a) => serializeAccount(urls, a)),
    last_status: lastStatus ?? null,
  };
}

/** Conversations of one owner, with participants and last statuses loaded in one batch. */
export function renderConversations(ctx: AppContext, rows: AccountConversationRow[], ownerId: number) {
  const { services } = ctx;
  const others = rows.map((r) => JSON.parse(r.participantIds) as number[]);
  const accounts = new Map(services.accounts.findByIds([...new Set([ownerId, ...others.flat()])]).map((a) => [a.id, a]));
  const statusRows = services.reader.rowsByIds([...new Set(rows.map((r) => r.lastStatusId))]);
  const statuses = new Map(renderStatuses(ctx, statusRows, ownerId).map((s) => [Number(s.id), s]));
  return rows.map((row, i) => {
    const ids = others[i]!.length ? others[i]! : [ownerId];
    const participants = ids.map((id) => accounts.get(id)).filter((a) => a !== undefined);
    return serializeConversation(ctx.urls, row, participants, statuses.get(row.lastStatusId));
  });
}
