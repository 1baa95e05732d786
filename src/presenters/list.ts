import type { ListRow } from "../db/schema.ts";

/** REST::ListSerializer. */
export function serializeList(list: ListRow) {
  return { id: String(list.id), title: list.title, replies_policy: list.repliesPolicy, exclusive: list.exclusive };
}
