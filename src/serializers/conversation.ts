import type { AccountConversationRow, AccountRow } from "../db/schema.ts";
import { serializeAccount, type Urls } from "./account.ts";

/** REST::ConversationSerializer: the other participants (or only me, in a note to self). */
export function serializeConversation(urls: Urls, row: AccountConversationRow, participants: AccountRow[], lastStatus: unknown) {
  return {
    id: String(row.id),
    unread: row.unread,
    accounts: participants.map((a) => serializeAccount(urls, a)),
    last_status: lastStatus ?? null,
  };
}
