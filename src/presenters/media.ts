import type { MediaRow } from "../db/schema.ts";
import type { Urls } from "./account.ts";

/**
 * REST::MediaAttachmentSerializer, in its key order. `url` stays null until the original is
 * processed; `meta` of an attachment that was not understood holds only its focus.
 */
export function serializeAttachment(urls: Urls, m: MediaRow) {
  if (m.remoteUrl !== null) return remoteAttachment(urls, m);
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

/**
 * An attachment of a remote status: shown at its own server's URL (`url` and `remote_url`
 * alike, so that clients load it from there), its preview the image itself; or, once copied here
 * (CACHE_REMOTE_MEDIA), from here with `remote_url` naming its origin, as Mastodon shows the
 * media it cached.
 */
function remoteAttachment(urls: Urls, m: MediaRow) {
  const still = m.type === "image";
  return {
    id: String(m.id),
    type: m.type,
    url: m.file ? urls.media(m.file) : m.remoteUrl,
    preview_url: m.preview ? urls.media(m.preview) : still ? m.remoteUrl : null,
    remote_url: m.remoteUrl,
    preview_remote_url: null,
    text_url: null,
    meta: JSON.parse(m.meta) as Record<string, unknown>,
    description: m.description,
    blurhash: m.blurhash,
  };
}
