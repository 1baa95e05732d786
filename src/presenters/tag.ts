import type { TagHit } from "../models/views.ts";
import type { Urls } from "./account.ts";

/** REST::TagSerializer: history values are strings, `day` a UNIX timestamp; `following` for signed-in viewers. */
export function serializeTag(urls: Urls, tag: TagHit, viewerId: number | null, following = false) {
  const out: Record<string, unknown> = {
    id: tag.id === null ? "" : String(tag.id),
    name: tag.name,
    url: `${urls.publicUrl}/tags/${encodeURIComponent(tag.name)}`,
    history: tag.history.map((h) => ({ day: String(h.day / 1000), accounts: String(h.accounts), uses: String(h.uses) })),
  };
  if (viewerId !== null) out.following = following;
  return out;
}
