import { getTableColumns, getTableName, type InferSelectModel } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * Reading whole rows of a table fast: the SELECT list and a mapper from bun:sqlite's value
 * arrays to the drizzle row type, both generated once from the schema. drizzle's own mapping
 * walks column objects per value and costs several microseconds a row; this is a single
 * object literal. Booleans are the only values that need converting (SQLite's 0 and 1;
 * PostgreSQL's through the database port are booleans already).
 */
export function rowReader<T extends SQLiteTable>(table: T) {
  const columns = Object.entries(getTableColumns(table));
  const names = columns.map(([, c]) => `"${getTableName(table)}"."${c.name}"`).join(", ");
  const fields = columns.map(([key, c], i) => `${JSON.stringify(key)}: ${c.columnType === "SQLiteBoolean" ? `r[${i}] === 1 || r[${i}] === true` : `r[${i}]`}`);
  // The code is built from the schema's own column names, never from input.
  const map = new Function("r", `return { ${fields.join(", ")} };`) as (r: unknown[]) => InferSelectModel<T>;
  return { columns: names, from: `FROM "${getTableName(table)}"`, map };
}
