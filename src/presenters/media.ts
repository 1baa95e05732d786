import type { MediaRow } from "../db/schema.ts";
import type { Urls } from "./account.ts";

/**
 * REST::MediaAttachmentSerializer, in its key order. `url` stays null until the original is
 * processed; `meta` of an attachment that was not understood holds only its focus.
 */
export function serializeAttachment(urls: Urls, m: MediaRow) {
  const meta = JSON.parse(m.meta) as Record<string, unknown>;
  const unknown = m.type === "unknown";
  const preview = m.thumbnail ?? m.preview;
  return {
    id: String(m.id),
    type: m.type,
    url: m.processing === "complete" && m.file ? urls.media(m.file) : null,
    preview_url: preview ? urls.media(preview) : null,
    remote_url: null,
    preview_remote_url: null,
    text_url: m.shortcode ? `${urls.publicUrl}/media/${m.shortcode}` : null,
    meta: unknown ? (meta.focus ? { focus: meta.focus } : {}) : Object.fromEntries(Object.entries(meta).filter(([, v]) => v !== undefined && v !== null)),
    description: m.description,
    blurhash: unknown ? null : m.blurhash,
  };
}
