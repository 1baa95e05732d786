/** Every body but an upload's: forms and JSON. */
export const MAX_FORM_BYTES = 1024 * 1024;
/** Media uploads: a 16 MB image and a thumbnail, with room for the multipart framing. */
export const MAX_UPLOAD_BYTES = 40 * 1024 * 1024;

/** The path of a request URL, without parsing the whole URL (this runs on every request). */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/** Only these take large (multipart) bodies; every other route is capped like a form. */
function acceptsUploads(method: string, path: string): boolean {
  if (method === "POST") return path === "/api/v1/media" || path === "/api/v2/media";
  if (method === "PUT") return path.startsWith("/api/v1/media/");
  if (method === "PATCH") return path === "/api/v1/accounts/update_credentials";
  return false;
}

/** How many bytes a body to this route may have, declared or counted. */
export function bodyLimit(method: string, path: string): number {
  return acceptsUploads(method, path) ? MAX_UPLOAD_BYTES : MAX_FORM_BYTES;
}
