import { readMigrationFiles } from "drizzle-orm/migrator";

/**
 * Runs at bundle time (imported `with { type: "macro" }`): the SQL in migrations/ is inlined
 * into the program, so `bun run` and the compiled executable apply the very same migrations
 * without reading the working directory.
 */
export function embeddedMigrations() {
  return readMigrationFiles({ migrationsFolder: new URL("../../migrations", import.meta.url).pathname });
}
