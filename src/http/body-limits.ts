import { LIMITS } from "../limits.ts";
import { sniff } from "../media-files/sniff.ts";
import { VIDEO_SIZE_LIMIT } from "../media-files/video.ts";

/** Every body but an upload's: forms and JSON. */
export const MAX_FORM_BYTES = 1024 * 1024;
/** Media uploads: a 99 MB video and a 16 MB thumbnail, with room for the multipart framing. */
export const MAX_UPLOAD_BYTES = 120 * 1024 * 1024;
/** An imported CSV file: the 10 MB it may be (MAX_IMPORT_BYTES), and room for a larger one to be refused in words (422) rather than cut off (413). */
export const MAX_IMPORT_BODY_BYTES = 16 * 1024 * 1024;
/** Two 16 MB images: a media update's file and thumbnail, a profile's avatar and header. */
export const MAX_IMAGES_BYTES = 40 * 1024 * 1024;

/** The path of a request URL, without parsing the whole URL (this runs on every request). */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/** How many bytes a body to this route may have, declared or counted: only uploads take large (multipart) bodies. */
export function bodyLimit(method: string, path: string): number {
  if (method === "POST" && (path === "/api/v1/media" || path === "/api/v2/media")) return MAX_UPLOAD_BYTES;
  if (method === "PUT" && path.startsWith("/api/v1/media/")) return MAX_IMAGES_BYTES;
  if (method === "PATCH" && path === "/api/v1/accounts/update_credentials") return MAX_IMAGES_BYTES;
  if (method === "POST" && (path === "/api/v1/import" || path === "/settings/import")) return MAX_IMPORT_BODY_BYTES;
  return MAX_FORM_BYTES;
}

/**
 * How large one file of a multipart body may grow, told from its first bytes as it arrives
 * (sniff.ts, as the media pipeline tells them): video and audio 99 MB, anything else the image
 * limit (16 MB). A file of exactly the limit still arrives whole, to be refused by the route in
 * Mastodon's words ("must be less than"); one byte more and it is 413 without the rest being read.
 */
export function fileLimit(head: Uint8Array): number {
  return sniff(head) === "av" ? VIDEO_SIZE_LIMIT : LIMITS.imageSizeLimit;
}
