/**
 * Mastodon's OAuth scopes (config/initializers/doorkeeper.rb) and how they cover each other:
 * `read` covers every `read:*`, `write` every `write:*`, `admin:read` every `admin:read:*`,
 * `admin:write` every `admin:write:*`, and the deprecated `follow` covers the block, follow and
 * mute scopes. The scope an endpoint demands is the most specific one; a token passes when one
 * of its scopes covers it.
 */
const TOP_LEVEL = ["read", "write", "follow", "push", "profile"] as const;

const READ = ["accounts", "blocks", "bookmarks", "favourites", "filters", "follows", "lists", "mutes", "notifications", "search", "statuses"];
const WRITE = [
  "accounts",
  "blocks",
  "bookmarks",
  "conversations",
  "favourites",
  "filters",
  "follows",
  "lists",
  "media",
  "mutes",
  "notifications",
  "reports",
  "statuses",
];
const ADMIN = ["accounts", "reports", "domain_allows", "domain_blocks", "ip_blocks", "email_domain_blocks", "canonical_email_blocks"];

export const ALL_SCOPES: readonly string[] = [
  ...TOP_LEVEL,
  ...READ.map((s) => `read:${s}`),
  ...WRITE.map((s) => `write:${s}`),
  "admin:read",
  "admin:write",
  ...ADMIN.map((s) => `admin:read:${s}`),
  ...ADMIN.map((s) => `admin:write:${s}`),
];

const KNOWN = new Set(ALL_SCOPES);

/** What `follow` stands for since Mastodon 3.5 split it up. */
const FOLLOW_COVERS = new Set(["read:blocks", "write:blocks", "read:follows", "write:follows", "read:mutes", "write:mutes"]);

export const DEFAULT_SCOPES = "read";

export function parseScopes(value: string | undefined | null): string[] {
  if (!value) return [];
  return [...new Set(value.split(/[\s+]+/).filter((s) => s !== ""))];
}

export function unknownScopes(scopes: string[]): string[] {
  return scopes.filter((s) => !KNOWN.has(s));
}

/** Does `held` (one scope) grant `wanted`? */
function covers(held: string, wanted: string): boolean {
  if (held === wanted) return true;
  if (held === "follow") return FOLLOW_COVERS.has(wanted);
  // "read" covers "read:statuses"; "admin:read" covers "admin:read:accounts".
  return wanted.startsWith(held + ":") && (held === "read" || held === "write" || held === "admin:read" || held === "admin:write");
}

export function grants(held: Iterable<string>, wanted: string): boolean {
  for (const h of held) if (covers(h, wanted)) return true;
  return false;
}

/**
 * Is every requested scope allowed by the registered ones? A request for `read:statuses` fits
 * an app registered for `read`; a request for `read` does not fit an app registered only for
 * `read:statuses` (Doorkeeper compares the sets, and Mastodon widens with the hierarchy).
 */
export function isSubset(requested: string[], registered: string[]): boolean {
  return requested.every((r) => registered.some((g) => covers(g, r)));
}
