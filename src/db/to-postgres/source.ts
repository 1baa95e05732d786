import { Database } from "bun:sqlite";
import { embeddedMigrations } from "../migrations.macro.ts" with { type: "macro" };
import { MoveRefused } from "./target.ts";

// The SQLite side of `rookery migrate-to-postgres`: the embedded database opened read-only,
// at this executable's migration level, read in one snapshot.

const SQLITE_MIGRATIONS = "__drizzle_migrations";

export interface SourceTable {
  name: string;
  columns: string[];
  rows: number;
}

export interface Source {
  db: Database;
  /** The newest migration applied, which is this executable's newest (the PostgreSQL baseline matches it). */
  level: string;
  tables: SourceTable[];
  /** Ends the read transaction and closes the file. */
  close(): void;
}

/**
 * Opens the database read-only (SQLite refuses any write on the connection, so the command
 * cannot change it) and begins one read transaction: every table is then read from the same
 * snapshot, consistent as of that moment even if something still wrote to the file.
 * Integers are read as bigints, so a value past 2^53 is copied exactly.
 */
export function openSource(path: string): Source {
  const db = new Database(path, { readonly: true, safeIntegers: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    db.run("BEGIN");
    // A deferred transaction takes its snapshot at its first read: this one.
    const level = checkLevel(db, path);
    const names = db
      .query<{ name: string }, []>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '${SQLITE_MIGRATIONS}' ORDER BY name`)
      .all()
      .map((r) => r.name);
    const tables = names.map((name) => {
      const columns = db
        .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name.replace(/'/g, "''")}') ORDER BY cid`)
        .all()
        .map((c) => c.name);
      const counted = db.query<{ n: bigint }, []>(`SELECT count(*) AS n FROM "${name}"`).get();
      return { name, columns, rows: Number(counted?.n ?? 0) };
    });
    return {
      db,
      level,
      tables,
      close() {
        if (db.inTransaction) db.run("COMMIT");
        db.close();
      },
    };
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * The PostgreSQL schema is that of this executable's newest SQLite migration: a database
 * behind it would be copied into columns it has not got yet, one ahead into a schema that lacks
 * its newer ones. Both are refused, with what to do.
 */
function checkLevel(db: Database, path: string): string {
  const known = embeddedMigrations();
  const newest = known[known.length - 1]!;
  const recorded = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '${SQLITE_MIGRATIONS}'`).get();
  const last = Number(recorded?.n ?? 0) === 0 ? null : db.query<{ created_at: bigint | string | null }, []>(`SELECT created_at FROM ${SQLITE_MIGRATIONS} ORDER BY created_at DESC LIMIT 1`).get();
  const at = last ? Number(last.created_at) : -1;
  if (at > newest.folderMillis) {
    throw new MoveRefused(`${path} was migrated by a newer Rookery than this one: run that version's migrate-to-postgres`);
  }
  if (at < newest.folderMillis) {
    throw new MoveRefused(`${path} is behind this Rookery's schema (its newest migration is older than ${newest.tag}): back it up (rookery backup <file>), run "rookery migrate", then run migrate-to-postgres again`);
  }
  return newest.tag;
}
