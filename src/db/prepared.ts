import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * Building a drizzle query costs tens of microseconds; running a prepared one, about two.
 * Hot paths therefore prepare their queries once, and pass lists as one JSON parameter
 * (`column IN (SELECT value FROM json_each(?))`), so that one prepared statement serves a
 * list of any length.
 */
export function inJsonList(column: SQLiteColumn | SQL, placeholder: string): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${sql.placeholder(placeholder)}))`;
}

export function jsonList(values: readonly (number | string)[]): string {
  return JSON.stringify(values);
}

/** Prepared queries made on first use, one per shape (e.g. which page bounds are present). */
export class PreparedShapes<T> {
  private shapes = new Map<string, T>();

  get(key: string, build: () => T): T {
    let shape = this.shapes.get(key);
    if (!shape) {
      shape = build();
      this.shapes.set(key, shape);
    }
    return shape;
  }
}
