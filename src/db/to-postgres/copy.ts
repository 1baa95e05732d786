import type { SQL } from "bun";
import type { Source, SourceTable } from "./source.ts";
import { checkTargetEmpty, describePgError, migrateTarget, MoveRefused, quoteIdent as q } from "./target.ts";

// The copy itself: one PostgreSQL transaction that migrates the empty target, copies every
// table of the SQLite snapshot, sets the identities past the largest id and reads everything
// back to compare. Any failure rolls all of it back, so the target is either a whole copy or as
// empty as it was.
//
// Foreign keys: PostgreSQL's are not DEFERRABLE (drizzle makes them so), so they cannot be
// deferred to the commit. They are dropped at the start of the transaction and added again,
// exactly as the catalog had them (pg_get_constraintdef), after the rows are in, as pg_restore
// does: the order of the tables then does not matter (no topological sort to keep true as the
// schema grows, cycles and self-references included), and each constraint checks every row
// once, in one pass, instead of a lookup per inserted row.

export interface Progress {
  phase: "copy" | "check";
  table: string;
  tableDone: number;
  tableRows: number;
  done: number;
  total: number;
  /** Said once per table and phase, when it is through (empty tables included). */
  finished: boolean;
}

export interface TableResult {
  table: string;
  sqliteRows: number;
  pgRows: number;
  /** An order-independent sum of a hash of each row's values, on each side. */
  sqliteDigest: bigint;
  pgDigest: bigint;
}

export interface CopyResult {
  tables: TableResult[];
  migrationsApplied: string[];
  identities: number;
}

/** The counts or rows differ: the summary shows where; the transaction was rolled back. */
export class CopyMismatch extends Error {
  constructor(readonly tables: TableResult[]) {
    super(`the copy differs from the SQLite database in ${tables.filter(differs).map((t) => t.table).join(", ")}`);
  }
}

export const differs = (t: TableResult) => t.sqliteRows !== t.pgRows || t.sqliteDigest !== t.pgDigest;

type PgType = "bigint" | "boolean" | "text";
interface TargetColumn {
  name: string;
  type: PgType;
  identity: boolean;
}

/** PostgreSQL takes at most 65,535 parameters in one statement; a batch also stays under a size. */
const MAX_PARAMS = 65_535;
const BATCH_ROWS = 1_000;
const BATCH_BYTES = 8 * 1024 * 1024;
const FETCH_ROWS = 2_000;
const MASK = (1n << 64n) - 1n;

export async function copyToPostgres(source: Source, sql: SQL, url: string, onProgress: (p: Progress) => void): Promise<CopyResult> {
  const total = source.tables.reduce((n, t) => n + t.rows, 0);
  return await sql.begin(async (tx) => {
    await checkTargetEmpty(tx, url);
    const migrationsApplied = await migrateTarget(tx);
    const columns = await targetColumns(tx, source.tables);
    const foreignKeys = await tx`SELECT conrelid::regclass::text AS tbl, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE contype = 'f' AND connamespace = current_schema()::regnamespace ORDER BY conname`;
    for (const fk of foreignKeys) await tx.unsafe(`ALTER TABLE ${fk.tbl} DROP CONSTRAINT ${q(fk.name)}`);

    const results: TableResult[] = [];
    let done = 0;
    for (const table of source.tables) {
      const cols = columns.get(table.name)!;
      const report = (n: number, finished = false) => onProgress({ phase: "copy", table: table.name, tableDone: n, tableRows: table.rows, done: done + n, total, finished });
      const sqliteDigest = await copyTable(source, tx, table, cols, report);
      report(table.rows, true);
      done += table.rows;
      results.push({ table: table.name, sqliteRows: table.rows, pgRows: 0, sqliteDigest, pgDigest: 0n });
    }

    for (const fk of foreignKeys) {
      try {
        await tx.unsafe(`ALTER TABLE ${fk.tbl} ADD CONSTRAINT ${q(fk.name)} ${fk.def}`);
      } catch (e) {
        throw new MoveRefused(`the SQLite database has rows whose references are missing (${describePgError(e)}); nothing was written to PostgreSQL`);
      }
    }
    const identities = await setIdentities(tx, columns);

    done = 0;
    for (const result of results) {
      const cols = columns.get(result.table)!;
      const report = (n: number, finished = false) => onProgress({ phase: "check", table: result.table, tableDone: n, tableRows: result.sqliteRows, done: done + n, total, finished });
      const read = await digestTarget(tx, result.table, cols, report);
      report(read.rows, true);
      done += result.sqliteRows;
      result.pgRows = read.rows;
      result.pgDigest = read.digest;
    }
    if (results.some(differs)) throw new CopyMismatch(results);
    return { tables: results, migrationsApplied, identities };
  });
}

/** The target's columns for each table, which must be the SQLite table's columns, no more, no fewer. */
async function targetColumns(tx: SQL, tables: SourceTable[]): Promise<Map<string, TargetColumn[]>> {
  const rows = await tx`SELECT table_name AS tbl, column_name AS name, data_type AS type, is_identity AS identity FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`;
  const byTable = new Map<string, TargetColumn[]>();
  for (const r of rows) {
    if (r.type !== "bigint" && r.type !== "boolean" && r.type !== "text") throw new Error(`${r.tbl}.${r.name} is ${r.type} in PostgreSQL: the copy knows bigint, boolean and text`);
    const list = byTable.get(r.tbl) ?? [];
    list.push({ name: r.name, type: r.type, identity: r.identity === "YES" });
    byTable.set(r.tbl, list);
  }
  const problems: string[] = [];
  for (const table of tables) {
    const pg = byTable.get(table.name);
    if (!pg) {
      problems.push(`${table.name} is missing`);
      continue;
    }
    const names = new Set(pg.map((c) => c.name));
    const missing = table.columns.filter((c) => !names.has(c));
    const extra = pg.filter((c) => !table.columns.includes(c.name)).map((c) => c.name);
    if (missing.length) problems.push(`${table.name} lacks ${missing.join(", ")}`);
    if (extra.length) problems.push(`${table.name} has ${extra.join(", ")} that SQLite has not`);
  }
  const sqliteNames = new Set(tables.map((t) => t.name));
  for (const name of byTable.keys()) if (!sqliteNames.has(name)) problems.push(`${name} is not in the SQLite database`);
  if (problems.length) throw new Error(`the PostgreSQL schema does not match the SQLite database's: ${problems.join("; ")}`);
  return byTable;
}

/** A SQLite value as PostgreSQL takes it: 0/1 become booleans, integers stay exact (bigint). */
function toPg(value: unknown, column: TargetColumn, table: string): unknown {
  if (value === null) return null;
  if (column.type === "boolean") {
    if (value === 0n || value === 0) return false;
    if (value === 1n || value === 1) return true;
    throw new MoveRefused(`${table}.${column.name} holds ${String(value)}, which is not a boolean (0 or 1); nothing was written to PostgreSQL`);
  }
  if (value instanceof Uint8Array) throw new MoveRefused(`${table}.${column.name} holds a blob, which PostgreSQL's ${column.type} column cannot take; nothing was written to PostgreSQL`);
  return value;
}

/** One row's values in one form on both sides (int8 as decimal text, booleans, strings, null), hashed. */
function rowHash(values: unknown[]): bigint {
  return Bun.hash.xxHash64(JSON.stringify(values, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
}

function canonical(value: unknown, column: TargetColumn): unknown {
  if (value === null) return null;
  if (column.type === "bigint") return String(value);
  return value;
}

async function copyTable(source: Source, tx: SQL, table: SourceTable, cols: TargetColumn[], progress: (n: number) => void): Promise<bigint> {
  const perBatch = Math.max(1, Math.min(BATCH_ROWS, Math.floor(MAX_PARAMS / cols.length)));
  const head = `INSERT INTO ${q(table.name)} (${cols.map((c) => q(c.name)).join(", ")}) VALUES `;
  const statement = (rows: number) => head + Array.from({ length: rows }, (_, r) => `(${cols.map((_, c) => `$${r * cols.length + c + 1}`).join(", ")})`).join(", ");
  const full = statement(perBatch);
  let params: unknown[] = [];
  let rows = 0;
  let bytes = 0;
  let copied = 0;
  let digest = 0n;
  const flush = async () => {
    if (rows === 0) return;
    try {
      await tx.unsafe(rows === perBatch ? full : statement(rows), params);
    } catch (e) {
      throw new MoveRefused(`copying ${table.name} failed: ${describePgError(e)}; nothing was written to PostgreSQL`);
    }
    copied += rows;
    params = [];
    rows = 0;
    bytes = 0;
    progress(copied);
  };
  const select = source.db.query(`SELECT ${cols.map((c) => q(c.name)).join(", ")} FROM ${q(table.name)}`);
  // iterate() steps through the snapshot a row at a time: a table of any size is never held whole.
  for (const row of select.iterate() as IterableIterator<Record<string, unknown>>) {
    const values = cols.map((c) => toPg(row[c.name], c, table.name));
    digest = (digest + rowHash(values.map((v, i) => canonical(v, cols[i]!)))) & MASK;
    for (const v of values) {
      params.push(v);
      if (typeof v === "string") bytes += v.length;
    }
    rows++;
    if (rows === perBatch || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return digest;
}

/** Reads a table back through a cursor (any size, any key) and sums the same row hash. */
async function digestTarget(tx: SQL, table: string, cols: TargetColumn[], progress: (n: number) => void): Promise<{ rows: number; digest: bigint }> {
  await tx.unsafe(`DECLARE rookery_check NO SCROLL CURSOR FOR SELECT ${cols.map((c) => q(c.name)).join(", ")} FROM ${q(table)}`);
  let rows = 0;
  let digest = 0n;
  for (;;) {
    const batch = (await tx.unsafe(`FETCH FORWARD ${FETCH_ROWS} FROM rookery_check`).values()) as unknown[][];
    if (batch.length === 0) break;
    for (const row of batch) digest = (digest + rowHash(row.map((v, i) => canonical(v, cols[i]!)))) & MASK;
    rows += batch.length;
    progress(rows);
  }
  await tx.unsafe("CLOSE rookery_check");
  return { rows, digest };
}

/**
 * Each identity (`id ... GENERATED BY DEFAULT AS IDENTITY`) continues after the largest id
 * copied: a row inserted without an id (the Fedify queue's) must not take one already used.
 */
async function setIdentities(tx: SQL, columns: Map<string, TargetColumn[]>): Promise<number> {
  let set = 0;
  for (const [table, cols] of columns) {
    for (const col of cols.filter((c) => c.identity)) {
      await tx.unsafe(`SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(${q(col.name)}) AS m FROM ${q(table)}) s WHERE m IS NOT NULL`, [q(table), col.name]);
      set++;
    }
  }
  return set;
}
