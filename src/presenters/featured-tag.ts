import type { Urls } from "./account.ts";
import type { FeaturedTagView } from "../models/views.ts";

/** REST::FeaturedTagSerializer: the count as a string, the last use as a date (no time). */
export function serializeFeaturedTag(urls: Urls, username: string, f: FeaturedTagView) {
  return {
    id: String(f.id),
    name: f.name,
    url: `${urls.publicUrl}/@${username}/tagged/${encodeURIComponent(f.name)}`,
    statuses_count: String(f.statusesCount),
    last_status_at: f.lastStatusAt === null ? null : new Date(f.lastStatusAt).toISOString().slice(0, 10),
  };
}
