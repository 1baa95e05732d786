import type { AccountConversationRow } from "../db/schema.ts";
import type { AccountView, Embeds } from "../models/views.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { renderStatuses, type StatusSource } from "./status-json.ts";

/** REST::ConversationSerializer: the other participants (or only me, in a note to self). */
export function serializeConversation(urls: Urls, row: AccountConversationRow, participants: AccountView[], lastStatus: unknown) {
  return {
    id: String(row.id),
    unread: row.unread,
    accounts: participants.map((a) => serializeAccount(urls, a)),
    last_status: lastStatus ?? null,
  };
}

/** Conversations of one owner, with the participants and last statuses the service loaded for them (`embeds`). */
export async function renderConversations(source: StatusSource, urls: Urls, rows: AccountConversationRow[], embeds: Embeds, ownerId: number) {
  const statuses = new Map((await renderStatuses(source, urls, embeds.statuses, ownerId)).map((s) => [Number(s.id), s]));
  return rows.map((row) => {
    const others = JSON.parse(row.participantIds) as number[];
    const participants = (others.length ? others : [ownerId]).map((id) => embeds.accounts.get(id)).filter((a) => a !== undefined);
    return serializeConversation(urls, row, participants, statuses.get(row.lastStatusId));
  });
}
