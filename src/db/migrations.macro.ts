import { readFileSync } from "node:fs";
import { readMigrationFiles } from "drizzle-orm/migrator";

/**
 * Runs at bundle time (imported `with { type: "macro" }`): the SQL in migrations/ is inlined
 * into the program, so `bun run` and the compiled executable apply the very same migrations
 * without reading the working directory. Each keeps its name (the journal's tag) for messages.
 */
export function embeddedMigrations() {
  const folder = new URL("../../migrations", import.meta.url).pathname;
  const journal = JSON.parse(readFileSync(`${folder}/meta/_journal.json`, "utf8")) as { entries: { tag: string }[] };
  return readMigrationFiles({ migrationsFolder: folder }).map((m, i) => ({ ...m, tag: journal.entries[i]!.tag }));
}
