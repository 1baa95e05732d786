import type { MediaRow, ScheduledStatusRow } from "../db/schema.ts";
import type { Urls } from "./account.ts";
import { serializeAttachment } from "./media.ts";

/** REST::ScheduledStatusSerializer: id, scheduled_at, params as the client sent them, media. */
export function serializeScheduledStatus(urls: Urls, row: ScheduledStatusRow, media: MediaRow[]) {
  return {
    id: String(row.id),
    scheduled_at: new Date(row.scheduledAt).toISOString(),
    params: JSON.parse(row.params) as Record<string, unknown>,
    media_attachments: media.map((m) => serializeAttachment(urls, m)),
  };
}
