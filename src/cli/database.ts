import type { Config } from "../config.ts";
import { shownUrl } from "../db/shown-url.ts";
import { openPortDatabase, openServerDatabase, type PortDatabase, type ServerDatabase } from "../server-database.ts";

// The commands open the database as the server does (server-database.ts): SQLite in DATA_DIR,
// or PostgreSQL at DATABASE_URL. Those whose work is all on the database port need nothing
// more; those that build every service need bun:sqlite's synchronous API for the services not
// yet converted, which on PostgreSQL is a throwaway SQLite, made only under
// ROOKERY_UNFINISHED_POSTGRES as for the server.

export const UNFINISHED_COMMANDS =
  "this command goes through services not yet converted to PostgreSQL (issue 31): what they write would be lost; unset DATABASE_URL to work on SQLite in DATA_DIR (ROOKERY_UNFINISHED_POSTGRES=1 runs it anyway, for the test mode: data goes wrong)";

/** The one line a SQLite-only command says when DATABASE_URL is PostgreSQL, or null on SQLite. */
export function sqliteOnly(config: Config, what: string): string | null {
  return config.database.kind === "postgres" ? `${what} (DATABASE_URL is PostgreSQL, ${shownUrl(config.database.url)})` : null;
}

/** Runs `work` on the database through the port, then closes it. */
export async function withPortDatabase<T>(config: Config, work: (database: PortDatabase) => Promise<T>): Promise<T> {
  const database = await openPortDatabase(config);
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/**
 * Runs `work` with the database as the server has it (the port and the synchronous API); on
 * PostgreSQL, once it is done, the running servers are told to forget what they keep, as a
 * server on SQLite does when another connection commits (server.ts watchOtherWriters).
 */
export async function withServerDatabase<T>(config: Config, work: (database: ServerDatabase) => Promise<T>): Promise<T> {
  const database = await openServerDatabase(config, { makes: false }, UNFINISHED_COMMANDS);
  try {
    const result = await work(database);
    if (database.postgres) await (await import("../cross-process.ts")).tellOtherWriter(database.postgres.sql);
    return result;
  } finally {
    await database.close();
  }
}
