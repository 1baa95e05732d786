import { expect, test } from "bun:test";
import { SQL } from "bun";
import { getTableColumns, is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PG_SCHEMA_DIR, renderPgSchema } from "../../scripts/db/pg-schema.ts";
import { openDatabase } from "../../src/db/connection.ts";
import * as sqliteSchema from "../../src/db/schema.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";

/**
 * The SQLite schema (src/db/schema/) is the one description of the tables; the PostgreSQL one
 * is generated from it (scripts/db/pg-schema.ts) and migrations-pg/ from that. These tests fail
 * when a change to the first did not reach the others (`bun run db:generate` brings them along),
 * and when the two live databases, migrated from their own migrations, differ.
 */
const ROOT = join(import.meta.dir, "..", "..");

test("src/db/schema-pg is what the generator makes of the SQLite schema", async () => {
  const expected = await renderPgSchema();
  expect(readdirSync(PG_SCHEMA_DIR).sort()).toEqual([...expected.keys()].sort());
  for (const [name, text] of expected) expect({ name, text: readFileSync(join(PG_SCHEMA_DIR, name), "utf8") }).toEqual({ name, text });
});

test("migrations-pg holds every change of src/db/schema-pg: drizzle-kit finds nothing to generate", () => {
  // drizzle-kit run on a copy, so a stale tree is reported here rather than changed.
  const dir = mkdtempSync(join(tmpdir(), "rookery-pg-kit-"));
  try {
    cpSync(join(ROOT, "migrations-pg"), join(dir, "out"), { recursive: true });
    const config = join(dir, "drizzle.config.ts");
    writeFileSync(config, `export default ${JSON.stringify({ dialect: "postgresql", schema: join(PG_SCHEMA_DIR, "index.ts"), out: "./out" })};\n`);
    // drizzle-kit takes `out` relative to where it runs (and exits 0 on errors: its words are checked).
    const run = Bun.spawnSync([join(ROOT, "node_modules/.bin/drizzle-kit"), "generate", "--config", config], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    const said = run.stdout.toString() + run.stderr.toString();
    expect({ exitCode: run.exitCode, said }).toEqual({ exitCode: 0, said: expect.stringContaining("No schema changes") });
    expect(readdirSync(join(dir, "out")).sort()).toEqual(readdirSync(join(ROOT, "migrations-pg")).sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

interface Catalog {
  columns: Record<string, string[]>;
  primaryKey: Record<string, string>;
  indexes: Record<string, string[]>;
  foreignKeys: Record<string, string[]>;
}

/** Columns drizzle keeps as booleans: INTEGER in SQLite, boolean in PostgreSQL. */
function booleanColumns(): Set<string> {
  const set = new Set<string>();
  for (const table of Object.values(sqliteSchema)) {
    if (!is(table, SQLiteTable)) continue;
    const name = getTableConfig(table).name;
    for (const column of Object.values(getTableColumns(table))) if (column.columnType === "SQLiteBoolean") set.add(`${name}.${column.name}`);
  }
  return set;
}

/** A default as both catalogs can agree on it: PostgreSQL's casts dropped, SQLite's 0/1 of a boolean as false/true. */
function normalDefault(value: string | null, boolean: boolean): string {
  if (value === null) return "none";
  const v = value.replace(/::[a-z ]+$/, "");
  return boolean ? ({ "0": "false", "1": "true" } as Record<string, string>)[v] ?? v : v;
}

function sqliteCatalog(): Catalog {
  const dir = mkdtempSync(join(tmpdir(), "rookery-pg-compare-"));
  const handle = openDatabase(dir);
  try {
    const db = handle.sqlite;
    const booleans = booleanColumns();
    const catalog: Catalog = { columns: {}, primaryKey: {}, indexes: {}, foreignKeys: {} };
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '__drizzle_migrations' ORDER BY name").all();
    for (const { name: table } of tables) {
      const columns = db.query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, [string]>("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)").all(table);
      catalog.columns[table] = columns
        .map((c) => {
          const boolean = booleans.has(`${table}.${c.name}`);
          const type = c.type.toLowerCase() === "integer" ? (boolean ? "boolean" : "bigint") : c.type.toLowerCase();
          return `${c.name} ${type} ${c.notnull || c.pk ? "not null" : "null"} default ${normalDefault(c.dflt_value, boolean)}`;
        })
        .sort();
      catalog.primaryKey[table] = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name).join(",");
      const indexes = db.query<{ name: string; unique: number; origin: string; partial: number }, [string]>("SELECT name, \"unique\", origin, partial FROM pragma_index_list(?)").all(table);
      catalog.indexes[table] = indexes
        .filter((i) => i.origin !== "pk")
        .map((i) => {
          const cols = db.query<{ name: string | null }, [string]>("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(i.name).map((c) => c.name ?? "(expression)");
          return `${i.name} ${i.unique ? "unique" : "plain"} (${cols.join(",")})${i.partial ? " partial" : ""}`;
        })
        .sort();
      const keys = db.query<{ id: number; seq: number; table: string; from: string; to: string; on_delete: string }, [string]>("SELECT id, seq, \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq").all(table);
      const byId = Map.groupBy(keys, (k) => k.id);
      catalog.foreignKeys[table] = [...byId.values()].map((k) => `(${k.map((c) => c.from).join(",")}) -> ${k[0]!.table}(${k.map((c) => c.to).join(",")}) on delete ${k[0]!.on_delete.toLowerCase()}`).sort();
    }
    return catalog;
  } finally {
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const ON_DELETE: Record<string, string> = { a: "no action", r: "restrict", c: "cascade", n: "set null", d: "set default" };

async function postgresCatalog(sql: SQL): Promise<Catalog> {
  const catalog: Catalog = { columns: {}, primaryKey: {}, indexes: {}, foreignKeys: {} };
  const tables = await sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`;
  for (const { name } of tables) {
    catalog.columns[name] = [];
    catalog.indexes[name] = [];
    catalog.foreignKeys[name] = [];
  }
  const columns = await sql`SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public'`;
  for (const c of columns) catalog.columns[c.table_name]!.push(`${c.column_name} ${c.data_type} ${c.is_nullable === "YES" ? "null" : "not null"} default ${normalDefault(c.column_default, c.data_type === "boolean")}`);
  for (const list of Object.values(catalog.columns)) list.sort();
  const keyColumns = (of: string, attnums: string) =>
    `(SELECT string_agg(coalesce(a.attname, '(expression)'), ',' ORDER BY k.ord) FROM unnest(${attnums}) WITH ORDINALITY k(n, ord) LEFT JOIN pg_attribute a ON a.attrelid = ${of} AND a.attnum = k.n)`;
  const primaryKeys = await sql.unsafe(`SELECT c.conrelid::regclass::text AS t, ${keyColumns("c.conrelid", "c.conkey")} AS cols FROM pg_constraint c WHERE c.contype = 'p' AND c.connamespace = 'public'::regnamespace`);
  for (const pk of primaryKeys) catalog.primaryKey[pk.t] = pk.cols;
  const indexes = await sql.unsafe(
    `SELECT ix.indrelid::regclass::text AS t, i.relname AS name, ix.indisunique AS "unique", ix.indpred IS NOT NULL AS partial, ${keyColumns("ix.indrelid", "ix.indkey::int2[]")} AS cols
     FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid WHERE i.relnamespace = 'public'::regnamespace AND NOT ix.indisprimary`,
  );
  for (const i of indexes) catalog.indexes[i.t]!.push(`${i.name} ${i.unique ? "unique" : "plain"} (${i.cols})${i.partial ? " partial" : ""}`);
  for (const list of Object.values(catalog.indexes)) list.sort();
  const foreignKeys = await sql.unsafe(
    `SELECT c.conrelid::regclass::text AS t, c.confrelid::regclass::text AS ref, c.confdeltype AS on_delete, ${keyColumns("c.conrelid", "c.conkey")} AS cols, ${keyColumns("c.confrelid", "c.confkey")} AS refcols
     FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`,
  );
  for (const k of foreignKeys) catalog.foreignKeys[k.t]!.push(`(${k.cols}) -> ${k.ref}(${k.refcols}) on delete ${ON_DELETE[k.on_delete]}`);
  for (const list of Object.values(catalog.foreignKeys)) list.sort();
  return catalog;
}

test.skipIf(!postgresAvailable)("migrations-pg makes in PostgreSQL the tables SQLite's migrations make: columns, nullability, defaults, keys, indexes", async () => {
  const expected = sqliteCatalog();
  const database = await freshPgDatabase();
  const sql = new SQL(database.url, { max: 1 });
  try {
    const actual = await postgresCatalog(sql);
    expect(Object.keys(actual.columns).sort()).toEqual(Object.keys(expected.columns).sort());
    expect(Object.keys(expected.columns).length).toBe(74);
    // Table by table, so a difference names its table.
    for (const table of Object.keys(expected.columns)) {
      for (const part of ["columns", "primaryKey", "indexes", "foreignKeys"] as const) {
        expect({ table, part, value: actual[part][table] ?? "" }).toEqual({ table, part, value: expected[part][table] ?? "" });
      }
    }
    // PostgreSQL numbers the rows given no id, as SQLite's rowid does (the Fedify queue's are).
    const [queued] = await sql`INSERT INTO fedify_messages (message, run_at, created_at) VALUES ('{}', 0, 0) RETURNING id`;
    expect(Number(queued.id)).toBe(1);
  } finally {
    await sql.close();
    await database.drop();
  }
});
