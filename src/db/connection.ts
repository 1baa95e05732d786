import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { embeddedMigrations } from "./migrations.macro.ts" with { type: "macro" };
import { withoutReprepareOnBind } from "./rebind.ts";
import { SqlitePort } from "./sqlite-port.ts";

export interface DbHandle {
  /** The connection itself: for what is SQLite's alone (the backup's VACUUM INTO, serving threads' after-commit queue, tests). */
  sqlite: Database;
  /** The database port over it (src/db/port.ts), through which everything reads and writes. */
  port: SqlitePort;
  path: string;
  /** How many migrations opening it applied (0 when none were due, or with `migrate: false`). */
  migrationsApplied: number;
  close(): void;
}

export const DATABASE_FILE = "rookery.sqlite3";

export interface OpenOptions {
  migrate?: boolean;
  /** Sees every SQL statement drizzle runs (benchmarks count queries per request with it). */
  onQuery?: (sql: string) => void;
  /**
   * A reading connection of a serving thread (src/threads): SQLite refuses any write on it, so
   * a write from there is impossible rather than unlikely. The database must exist, migrated.
   */
  readonly?: boolean;
}

export function openDatabase(dataDir: string, options: OpenOptions = {}): DbHandle {
  const path = join(dataDir, DATABASE_FILE);
  if (options.readonly) return openReader(path, options);
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run("PRAGMA foreign_keys = ON");
  sqlite.run("PRAGMA temp_store = MEMORY");
  forgetPlannerStatistics(sqlite);
  withoutReprepareOnBind(sqlite);
  cacheStatements(sqlite);
  if (options.onQuery) countStatements(sqlite, options.onQuery);
  const port = new SqlitePort(sqlite);
  let migrationsApplied = 0;
  try {
    if (options.migrate !== false) migrationsApplied = migrate(sqlite, path);
  } catch (e) {
    sqlite.close();
    throw e;
  }
  return {
    sqlite,
    port,
    path,
    migrationsApplied,
    close() {
      port.endReads();
      sqlite.close();
    },
  };
}

/** The read-only connection: the writer set WAL (which stays with the file) and migrated it. */
function openReader(path: string, options: OpenOptions): DbHandle {
  const sqlite = new Database(path, { readonly: true, strict: true });
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA temp_store = MEMORY");
  withoutReprepareOnBind(sqlite);
  cacheStatements(sqlite);
  if (options.onQuery) countStatements(sqlite, options.onQuery);
  const port = new SqlitePort(sqlite, false);
  return { sqlite, port, path, migrationsApplied: 0, close: () => sqlite.close() };
}

/**
 * Every hot query is written for a particular index, and is prepared once for the life of
 * the process. Statistics from ANALYZE (or PRAGMA optimize) taken while tables were small
 * make SQLite plan table scans that those prepared statements would keep as tables grow
 * (seen: `id IN (SELECT value FROM json_each(?))` became a full scan). Without statistics
 * SQLite assumes large tables and uses the indexes, so Rookery runs without them.
 */
function forgetPlannerStatistics(sqlite: Database) {
  const stat = sqlite.query("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").get();
  if (stat) {
    sqlite.run("DELETE FROM sqlite_stat1");
    sqlite.run("ANALYZE sqlite_schema");
  }
}

const STATEMENT_CACHE = 500;

/**
 * drizzle compiles a new SQLite statement for every query it runs; keeping compiled
 * statements by their SQL text saves that on every repeat. Statements are never finalized
 * on eviction: a long-lived prepared query may still hold one, and the GC frees them.
 */
function cacheStatements(sqlite: Database) {
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, ReturnType<Database["prepare"]>>();
  sqlite.prepare = ((query: string) => {
    let stmt = cache.get(query);
    if (stmt) {
      cache.delete(query);
    } else {
      stmt = prepare(query);
      if (cache.size >= STATEMENT_CACHE) cache.delete(cache.keys().next().value as string);
    }
    cache.set(query, stmt);
    return stmt;
  }) as Database["prepare"];
}

/** Reports every statement execution, whether it came through drizzle or bun:sqlite directly. */
function countStatements(sqlite: Database, onQuery: (sql: string) => void) {
  const wrap = <S extends object>(stmt: S, text: string): S =>
    new Proxy(stmt, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        if (key === "run" || key === "all" || key === "get" || key === "values") {
          return (...args: unknown[]) => {
            onQuery(text);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  const prepare = sqlite.prepare.bind(sqlite);
  const query = sqlite.query.bind(sqlite);
  sqlite.prepare = ((text: string) => wrap(prepare(text), text)) as Database["prepare"];
  sqlite.query = ((text: string) => wrap(query(text), text)) as Database["query"];
}

const MIGRATIONS_TABLE = "__drizzle_migrations";

/**
 * A database a newer Rookery has migrated. drizzle applies what is newer than the database's
 * newest migration and says nothing of a database newer than itself: this executable would run
 * on tables it does not know, and write rows the newer one cannot read.
 */
export class SchemaTooNewError extends Error {}

/** Applies pending migrations; returns how many were applied. Refuses a database newer than this executable. */
export function migrate(sqlite: Database, path = "the database"): number {
  const migrations = embeddedMigrations();
  const table = MIGRATIONS_TABLE;
  refuseNewerSchema(sqlite, migrations, path);
  const before = countApplied(sqlite, table);
  // Same call drizzle's own bun-sqlite migrator makes, with migrations read at build time: its
  // synchronous driver, made for this and nothing else (everything else goes through the port).
  const db = drizzle({ client: sqlite });
  (db as any).dialect.migrate(migrations, (db as any).session, { migrationsTable: table });
  return countApplied(sqlite, table) - before;
}

function refuseNewerSchema(sqlite: Database, migrations: ReturnType<typeof embeddedMigrations>, path: string) {
  if (countApplied(sqlite, MIGRATIONS_TABLE) === 0) return;
  // drizzle's own order: a migration is known by its created_at, the time it was generated.
  const newest = sqlite.query<{ hash: string; created_at: number | string }, []>(`SELECT hash, created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`).get()!;
  const known = migrations[migrations.length - 1]!;
  const at = Number(newest.created_at);
  if (!(at > known.folderMillis)) return;
  const date = (ms: number) => (Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms));
  throw new SchemaTooNewError(
    [
      `${path} was migrated by a newer Rookery than this one, which refuses to use it.`,
      `  The database's newest migration: ${newest.hash.slice(0, 12)}, made ${date(at)} (${countApplied(sqlite, MIGRATIONS_TABLE)} applied).`,
      `  This executable's newest migration: ${known.tag}, made ${date(known.folderMillis)} (${migrations.length} known).`,
      "Start the newer executable again, or go back to this one with the backup taken before the upgrade:",
      "stop the server, remove rookery.sqlite3, rookery.sqlite3-wal and rookery.sqlite3-shm from DATA_DIR,",
      "copy the backup to DATA_DIR/rookery.sqlite3 and start this executable (README: Backups and restores).",
    ].join("\n"),
  );
}

function countApplied(sqlite: Database, table: string): number {
  const exists = sqlite.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?").get(table);
  if (!exists) return 0;
  return (sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}
