import { readFileSync } from "node:fs";
import { readMigrationFiles } from "drizzle-orm/migrator";

/**
 * Runs at bundle time (imported `with { type: "macro" }`), as migrations.macro.ts does for
 * SQLite: the SQL of migrations-pg/ is inlined into the program, with drizzle's hash of each
 * file and its journal time, which is what drizzle's PostgreSQL migrator records.
 */
export function embeddedPgMigrations() {
  const folder = new URL("../../migrations-pg", import.meta.url).pathname;
  const journal = JSON.parse(readFileSync(`${folder}/meta/_journal.json`, "utf8")) as { entries: { tag: string }[] };
  return readMigrationFiles({ migrationsFolder: folder }).map((m, i) => ({ ...m, tag: journal.entries[i]!.tag }));
}
