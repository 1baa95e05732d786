/**
 * The longest URL taken from another server. Mastodon's columns are unbounded; 2048 is what
 * every browser and client handles, and far above any real link, image or profile address.
 */
export const REMOTE_URL_MAX = 2048;

/**
 * A URL given by another server (a status's or an account's address, an image, an
 * attachment, an emoji, a link preview), as it may be stored and shown: the normalized href
 * of an absolute http: or https: URL, or null. Anything else is dropped, since clients and
 * our own pages put these in links and image sources: `javascript:` and `data:` run or
 * render in the reader's browser, `file:` and the like reach into the reader's machine.
 * Credentials (`https://trusted.example@evil.example/`) are refused too: such an address
 * reads as one host and leads to another. Mastodon refuses the same schemes
 * (JsonLdHelper#unsupported_uri_scheme?).
 */
export function httpUrlOrNull(value: string | URL | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : value.href;
  // Not parsed at all past the limit: a document may say megabytes.
  if (text.length > REMOTE_URL_MAX) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (url.username !== "" || url.password !== "" || url.hostname === "") return null;
  return url.href.length > REMOTE_URL_MAX ? null : url.href;
}
