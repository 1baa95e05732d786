import type { TestServer } from "./server.ts";

/** Tables a request may touch without changing anything (id_workers: PostgreSQL's id worker lease, renewed on a timer). */
const VOLATILE = new Set(["oauth_access_tokens", "web_sessions", "sqlite_sequence", "__drizzle_migrations", "id_workers"]);

/**
 * The server's whole database as data (every table but the volatile ones), read through the
 * port on SQLite or PostgreSQL: any write anywhere shows. Rows are sorted, since PostgreSQL
 * gives no order without ORDER BY.
 */
export async function databaseFingerprint(server: TestServer): Promise<string> {
  const port = server.database.port;
  const tables =
    port.dialect === "sqlite"
      ? await port.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      : await port.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name");
  const kept = tables.map((t) => t.name).filter((t) => !VOLATILE.has(t) && !t.startsWith("sqlite_"));
  const out: [string, string[]][] = [];
  for (const table of kept) out.push([table, (await port.all(`SELECT * FROM "${table}"`)).map((row) => JSON.stringify(row)).sort()]);
  return JSON.stringify(out);
}
