import { getTableColumns, getTableName, is, Table } from "drizzle-orm";
import type { DatabasePort } from "./port.ts";

/** The tables keyed by a generated integer `id`, from the schema (the same on both databases). */
function keyedTables(port: DatabasePort): string[] {
  return (Object.values(port.tables) as unknown[])
    .filter((t): t is Table => is(t, Table))
    .filter((t) => Object.values(getTableColumns(t)).some((c) => c.name === "id" && c.primary && c.dataType === "number"))
    .map((t) => getTableName(t));
}

/**
 * The largest id in any table keyed by generated ids (the id generator continues after it):
 * read at start-up by every process that makes ids, on either database.
 */
export async function largestId(port: DatabasePort): Promise<number> {
  const tables = keyedTables(port);
  if (tables.length === 0) return 0;
  // PostgreSQL wants the derived table named.
  const row = await port.get<{ id: number | null }>(`SELECT max(id) AS id FROM (${tables.map((t) => `SELECT max(id) AS id FROM "${t}"`).join(" UNION ALL ")}) AS ids`);
  return row?.id === null || row?.id === undefined ? 0 : Number(row.id);
}

/** For the test that holds the list to SQLite's own (every INTEGER PRIMARY KEY named id). */
export const keyedTablesOf = keyedTables;
