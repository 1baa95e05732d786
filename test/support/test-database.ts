import { resolve } from "node:path";
import { freshPgDatabase, type PgDatabase } from "./postgres.ts";

/**
 * The PostgreSQL test mode (issue 31): `ROOKERY_TEST_DATABASE=postgres bun test ...`
 * (`npm run test:postgres`) runs every test server on a fresh database of the throwaway cluster
 * (postgres.ts) instead of SQLite in its DATA_DIR: the whole suite runs on both databases
 * (.ci/run runs it twice). Tests that are SQLite's by nature (the backup command, WAL, data_version, the
 * source of migrate-to-postgres...) skip in it: `test.skipIf(onPostgres)`, with a comment why.
 */
export const onPostgres = process.env.ROOKERY_TEST_DATABASE === "postgres";

/**
 * One database per data directory, so that a server started again on the same DATA_DIR (a
 * restart, a process killed and started anew) finds its data, and the commands run beside it
 * are told the same database. Keyed by the directory's absolute path.
 */
const databases = new Map<string, Promise<PgDatabase>>();
/** The URLs of those made, for commands run synchronously. */
const urls = new Map<string, string>();

/**
 * The settings that put a server on `dataDir` on its PostgreSQL database in the test mode; none
 * otherwise, or when the test chose a DATABASE_URL itself.
 */
export async function databaseEnv(dataDir: string, env: Record<string, string | undefined> = {}): Promise<Record<string, string>> {
  if (!onPostgres || env.DATABASE_URL) return {};
  const key = resolve(dataDir);
  let database = databases.get(key);
  if (!database) databases.set(key, (database = freshPgDatabase()));
  const url = (await database).url;
  urls.set(key, url);
  return { DATABASE_URL: url };
}

/** The same for a command run beside a server (synchronously): the database its DATA_DIR has, if a server made one. */
export function knownDatabaseEnv(dataDir: string): Record<string, string> {
  const url = onPostgres ? urls.get(resolve(dataDir)) : undefined;
  return url ? { DATABASE_URL: url } : {};
}

/** Drops the data directory's database once its server stopped for good. */
export async function dropDatabase(dataDir: string): Promise<void> {
  const key = resolve(dataDir);
  const database = databases.get(key);
  if (!database) return;
  databases.delete(key);
  urls.delete(key);
  await (await database).drop();
}
