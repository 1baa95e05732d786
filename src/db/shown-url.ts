/**
 * A database URL as it may be printed: the password left out. A file of its own so that the
 * commands' notices can use it without loading PostgreSQL's migrations (to-postgres/target.ts).
 */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(not a URL)";
  }
}
