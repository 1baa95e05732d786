/**
 * The path the edge classifies a request by (CORS, body caps, rate limits). The router also
 * serves a path with a trailing or a leading doubled slash, and decodes percent-encoded
 * characters in parameters, so the edge sees the path with those undone (and dot segments
 * resolved, and in lower case): no spelling the router serves escapes a limit. Paths with
 * none of these (almost all) are returned as they are, at the cost of one test.
 */
export function routePath(path: string): string {
  if (!/[%A-Z]|\/\/|\/\.|.\/$/.test(path)) return path;
  let p = path;
  if (p.includes("%")) {
    try {
      p = decodeURIComponent(p);
    } catch {
      // Malformed escapes: matched as sent (the router serves no such path either).
    }
  }
  const segments: string[] = [];
  for (const segment of p.toLowerCase().split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join("/")}`;
}

/** The inboxes' paths (shared, and per account), as routePath() spells them. */
export const INBOX_PATH = /^\/(?:inbox|users\/[^/]+\/inbox)$/;
