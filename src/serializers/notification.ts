import type { AccountRow, NotificationRow } from "../db/schema.ts";
import { serializeAccount, type Urls } from "./account.ts";

/** REST::NotificationSerializer (4.3), without `status`: the caller appends it, rendered for the viewer. */
export function serializeNotification(urls: Urls, n: NotificationRow, from: AccountRow) {
  const out: Record<string, unknown> = {
    id: String(n.id),
    type: n.type,
    created_at: new Date(n.createdAt).toISOString(),
    group_key: `ungrouped-${n.id}`,
    account: serializeAccount(urls, from),
  };
  return out;
}
