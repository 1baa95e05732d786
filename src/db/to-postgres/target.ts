import { SQL } from "bun";
import { embeddedPgMigrations } from "../pg-migrations.macro.ts" with { type: "macro" };
import { shownUrl } from "../shown-url.ts";

export { shownUrl };

// The PostgreSQL side of `rookery migrate-to-postgres`: which database it is, whether it may be
// written, and its schema brought to this executable's migrations-pg/.

/** A refusal the operator acts on (one line, no stack): the target was left as it was. */
export class MoveRefused extends Error {}

export type PgMigration = ReturnType<typeof embeddedPgMigrations>[number];

/** drizzle's PostgreSQL migrator keeps its record here (pg-core dialect's `migrate`). */
export const PG_MIGRATIONS_SCHEMA = "drizzle";
export const PG_MIGRATIONS_TABLE = "__drizzle_migrations";

export function pgMigrations(): PgMigration[] {
  return embeddedPgMigrations();
}


/** A connection to the target, or a refusal saying why there is none. */
export async function connectTarget(url: string): Promise<SQL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MoveRefused(`the argument is not a URL: give a PostgreSQL URL, postgres://user:password@host:5432/database`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new MoveRefused(`${shownUrl(url)} is not a PostgreSQL URL: it starts postgres:// (postgres://user:password@host:5432/database)`);
  }
  if (parsed.pathname.length <= 1) throw new MoveRefused(`${shownUrl(url)} names no database: add it after the host (postgres://user:password@host:5432/database)`);
  const sql = new SQL(url, { max: 1, connectionTimeout: 10 });
  try {
    await sql`SELECT 1`;
  } catch (e) {
    await sql.close().catch(() => {});
    throw new MoveRefused(`cannot connect to ${shownUrl(url)}: ${describePgError(e)}`);
  }
  return sql;
}

/** A PostgreSQL error in one line: its message, the server's code when it gave one. */
export function describePgError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const { code, errno, detail } = e as Error & { code?: string; errno?: string; detail?: string };
  const why = [e.message, detail].filter(Boolean).join(": ");
  const codes = [errno, code].filter((c) => typeof c === "string" && c !== "");
  return codes.length ? `${why} (${codes.join(", ")})` : why;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const quoteIdent = quote;

/** The tables of the target's schema (the one its search_path writes to). */
export async function targetTables(sql: SQL): Promise<string[]> {
  const rows = await sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`;
  return rows.map((r: { name: string }) => r.name);
}

/** The newest migration drizzle recorded in the target, or null when it records none. */
export async function newestApplied(sql: SQL): Promise<{ count: number; createdAt: number } | null> {
  const [exists] = await sql`SELECT to_regclass(${`${PG_MIGRATIONS_SCHEMA}.${PG_MIGRATIONS_TABLE}`}) IS NOT NULL AS here`;
  if (!exists.here) return null;
  const [row] = await sql.unsafe(`SELECT count(*)::int AS n, max(created_at)::text AS at FROM ${PG_MIGRATIONS_SCHEMA}.${PG_MIGRATIONS_TABLE}`);
  return row.n === 0 ? null : { count: row.n, createdAt: Number(row.at) };
}

/**
 * Refuses a target that is not an empty Rookery database: rows in any table (named), tables
 * that Rookery's migrations did not make, or migrations newer than this executable's. Reads
 * only, so a refused target is exactly as it was.
 */
export async function checkTargetEmpty(sql: SQL, url: string): Promise<void> {
  const tables = await targetTables(sql);
  const withRows: string[] = [];
  for (const table of tables) {
    const [row] = await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM ${quote(table)}) AS rows`);
    if (row.rows) withRows.push(table);
  }
  if (withRows.length > 0) {
    const named = withRows.length > 5 ? `${withRows.slice(0, 5).join(", ")} and ${withRows.length - 5} more` : withRows.join(", ");
    throw new MoveRefused(`${shownUrl(url)} is not empty: ${withRows.length === 1 ? "table" : "tables"} ${named} ${withRows.length === 1 ? "has" : "have"} rows. The copy goes into an empty database only (CREATE DATABASE a new one); nothing was written`);
  }
  const applied = await newestApplied(sql);
  const known = pgMigrations();
  const newest = known[known.length - 1]!;
  if (applied === null && tables.length > 0) {
    throw new MoveRefused(`${shownUrl(url)} has tables that Rookery's migrations did not make (${tables.slice(0, 5).join(", ")}${tables.length > 5 ? ", ..." : ""}): give an empty database; nothing was written`);
  }
  if (applied !== null && applied.createdAt > newest.folderMillis) {
    throw new MoveRefused(`${shownUrl(url)} was migrated by a newer Rookery (${applied.count} migrations applied, this executable knows ${known.length}, the newest ${newest.tag}): run the newer executable's migrate-to-postgres; nothing was written`);
  }
}

/**
 * Brings the schema to this executable's migrations-pg/, inside the caller's transaction, and
 * records each one as drizzle's migrator does (its schema and table, the file's hash, the
 * journal's time): a later `migrate` of this database sees them applied and runs only newer ones.
 * Returns the tags applied.
 */
export async function migrateTarget(tx: SQL): Promise<string[]> {
  const table = `${quote(PG_MIGRATIONS_SCHEMA)}.${quote(PG_MIGRATIONS_TABLE)}`;
  await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${quote(PG_MIGRATIONS_SCHEMA)}`);
  await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
  const applied = await newestApplied(tx);
  const done: string[] = [];
  for (const migration of pgMigrations()) {
    if (applied !== null && applied.createdAt >= migration.folderMillis) continue;
    for (const statement of migration.sql) await tx.unsafe(statement);
    await tx.unsafe(`INSERT INTO ${table} (hash, created_at) VALUES ($1, $2)`, [migration.hash, migration.folderMillis]);
    done.push(migration.tag);
  }
  return done;
}
