import type { Urls } from "./account.ts";
import type { AnnouncementView } from "../models/views.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * REST::AnnouncementSerializer: `read` and each reaction's `me` only for a viewer (the
 * streams render without one), a custom emoji reaction with its images.
 */
export function serializeAnnouncement(urls: Urls, a: AnnouncementView) {
  const out: Record<string, unknown> = {
    id: String(a.row.id),
    content: a.html,
    starts_at: iso(a.row.startsAt),
    ends_at: iso(a.row.endsAt),
    all_day: a.row.allDay,
    published_at: iso(a.row.publishedAt),
    updated_at: iso(a.row.updatedAt),
  };
  if (a.read !== null) out.read = a.read;
  out.mentions = a.mentions.map((m) => ({ id: String(m.id), username: m.username, url: m.url, acct: m.acct ?? m.username }));
  out.statuses = a.statuses.map((s) => ({ id: String(s.id), url: s.url }));
  out.tags = a.tags.map((name) => ({ name, url: `${urls.publicUrl}/tags/${encodeURIComponent(name)}` }));
  out.emojis = a.emojis;
  out.reactions = a.reactions.map((r) => {
    const reaction: Record<string, unknown> = { name: r.name, count: r.count };
    if (r.me !== null) reaction.me = r.me;
    if (r.emoji) {
      reaction.url = r.emoji.url;
      reaction.static_url = r.emoji.static_url;
    }
    return reaction;
  });
  return out;
}
