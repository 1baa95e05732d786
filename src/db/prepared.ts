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

// Lists bound as `IN (?, ...)` are padded to a few fixed sizes (repeating the last value), so that
// each size is one statement the driver prepares once, on SQLite and PostgreSQL alike (json_each
// is SQLite's alone). The pages' own sizes are among them (20 statuses a page, 40 notifications):
// padding 20 ids to 32 cost a third more of the viewer's flags query.
const PADDED_SIZES = [1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 128];

/** The padded size for a list of `n` values. */
export function paddedSize(n: number): number {
  return PADDED_SIZES.find((b) => b >= n) ?? Math.ceil(n / 128) * 128;
}

/** `values` padded to `size` by repeating its last value (`values` not empty). */
export function padded<T>(values: readonly T[], size: number = paddedSize(values.length)): T[] {
  const out = values.slice(0, size);
  while (out.length < size) out.push(values[values.length - 1] as T);
  return out;
}

/** `?, ?, ...`: `n` positional parameters. */
export function marks(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}
