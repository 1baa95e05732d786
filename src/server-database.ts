import type { SQL } from "bun";
import type { Database } from "bun:sqlite";
import type { Config } from "./config.ts";
import { openDatabase } from "./db/connection.ts";
import { largestId } from "./db/largest-id.ts";
import type { DatabasePort } from "./db/port.ts";
import type { SharedQueue } from "./federation/stores.ts";
import type { IdWorker } from "./ids.ts";
import type { SharedState } from "./services/index.ts";

/**
 * The database the server serves from, as server.ts (and the CLI) open it: SQLite in DATA_DIR,
 * or PostgreSQL at DATABASE_URL (issue 31). Wiring beside server.ts, as cross-process.ts is.
 */
export interface ServerDatabase extends PortDatabase {
  /**
   * The SQLite connection under the port, for what is SQLite's alone (its page cache, its
   * data_version, the serving threads' after-commit queue, the backup). Null on PostgreSQL.
   */
  sqlite: Database | null;
}

/** The database through the port alone: what the commands that need no unconverted service open. */
export interface PortDatabase {
  /** What the converted services use: the SQLite connection, or the PostgreSQL pool. */
  port: DatabasePort;
  /** Where the data is, as it may be printed (a URL without its password). */
  path: string;
  /** How many migrations opening it applied. */
  migrationsApplied: number;
  /** On PostgreSQL: its URL and a small pool of its own for the pieces shared by processes (Fedify's queue, rate limits, timer claims, the id worker's lease). */
  postgres: { url: string; sql: SQL } | null;
  /** The largest id stored (the id generator continues after it). */
  largestId(): Promise<number>;
  close(): Promise<void>;
}

/**
 * How the database is opened. `makes`: a PostgreSQL database without Rookery's schema is given
 * it (the server, `rookery migrate`); without, it is refused, as the commands refuse a data
 * directory without a database (cli/data-dir.ts): a wrong URL must not look like an empty server.
 */
export interface OpenOptions {
  onQuery?: (sql: string) => void;
  makes?: boolean;
}

export async function openServerDatabase(config: Config, options: OpenOptions = {}): Promise<ServerDatabase> {
  if (config.database.kind === "sqlite") return openSqlite(config, options);
  // Loaded only here: the embedded server never loads PostgreSQL's driver, schema or migrations.
  const { openPostgresPort } = await import("./server-postgres.ts");
  return { ...(await openPostgresPort(config.database.url, { makes: true, ...options })), sqlite: null };
}

/** The database through the port alone, never made on PostgreSQL: for the commands that read or write it and build no service. */
export async function openPortDatabase(config: Config, options: OpenOptions = {}): Promise<PortDatabase> {
  if (config.database.kind === "sqlite") return openSqlite(config, options);
  const { openPostgresPort } = await import("./server-postgres.ts");
  return openPostgresPort(config.database.url, options);
}

function openSqlite(config: Config, options: OpenOptions): ServerDatabase {
  const handle = openDatabase(config.dataDir, { onQuery: options.onQuery });
  const { port, path, migrationsApplied, sqlite } = handle;
  return { port, path, migrationsApplied, sqlite, postgres: null, largestId: async () => largestId(port), close: async () => handle.close() };
}

/** What several processes on one PostgreSQL share, made at start: given to the services, the queue and the id generator. */
export interface SharedPieces {
  state: SharedState;
  queue: SharedQueue;
  /** This process's id worker: ID_WORKER when given, else leased from the database. */
  idWorker: IdWorker;
  /** Gives back what this process holds (the id worker's lease). */
  stop(): Promise<void>;
}
