import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { embeddedMigrations } from "./migrations.macro.ts" with { type: "macro" };
import * as schema from "./schema.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export interface DbHandle {
  db: Db;
  sqlite: Database;
  path: string;
  close(): void;
}

export const DATABASE_FILE = "rookery.sqlite3";

export function openDatabase(dataDir: string, options: { migrate?: boolean } = {}): DbHandle {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, DATABASE_FILE);
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run("PRAGMA foreign_keys = ON");
  sqlite.run("PRAGMA temp_store = MEMORY");
  const db = drizzle({ client: sqlite, schema }) as Db;
  if (options.migrate !== false) migrate(db);
  return {
    db,
    sqlite,
    path,
    close() {
      sqlite.run("PRAGMA optimize");
      sqlite.close();
    },
  };
}

/** Applies pending migrations; returns how many were applied. */
export function migrate(db: Db): number {
  const migrations = embeddedMigrations();
  const table = "__drizzle_migrations";
  const before = countApplied(db.$client, table);
  // Same call drizzle's own bun-sqlite migrator makes, with migrations read at build time.
  (db as any).dialect.migrate(migrations, (db as any).session, { migrationsTable: table });
  return countApplied(db.$client, table) - before;
}

function countApplied(sqlite: Database, table: string): number {
  const exists = sqlite.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?").get(table);
  if (!exists) return 0;
  return (sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

/** Rows touched by a write; drizzle's bun-sqlite `run()` returns bun's result but types it void. */
export function changes(result: unknown): number {
  return (result as { changes?: number } | undefined)?.changes ?? 0;
}
