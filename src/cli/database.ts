import type { Config } from "../config.ts";
import { shownUrl } from "../db/shown-url.ts";
import { openPortDatabase, type PortDatabase } from "../server-database.ts";

// The commands open the database as the server does (server-database.ts): SQLite in DATA_DIR,
// or PostgreSQL at DATABASE_URL, through the port. A command never makes a database there (a
// wrong URL must not look like an empty server): the server or `rookery migrate` does.

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
 * Runs `work` (a command that builds the services) on the database; on PostgreSQL, once it is
 * done, the running servers are told to forget what they keep, as a server on SQLite does when
 * another connection commits (server.ts watchOtherWriters).
 */
export async function withServerDatabase<T>(config: Config, work: (database: PortDatabase) => Promise<T>): Promise<T> {
  const database = await openPortDatabase(config);
  try {
    const result = await work(database);
    if (database.postgres) await (await import("../cross-process.ts")).tellOtherWriter(database.postgres.sql);
    return result;
  } finally {
    await database.close();
  }
}
