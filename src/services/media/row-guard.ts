import { and, eq, isNull, type SQL } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import type { MediaRow } from "../../db/schema.ts";

type Table = DatabasePort["tables"]["mediaAttachments"];

/**
 * The attachment still as it was read: what a write computed from a row (its meta merged, the
 * files it replaces) is conditioned on this, and changes nothing when another write came in
 * between, so the caller reads again and retries (compare-and-set). One statement, not a
 * transaction held across awaits: on PostgreSQL (READ COMMITTED) a transaction would not stop
 * the other write, and on SQLite it would make unconverted synchronous transactions of other
 * flows (a scheduled status published on the same tick) fail.
 */
export function unchangedSince(m: Table, row: MediaRow): SQL {
  const same = <T>(column: Parameters<typeof isNull>[0], value: T | null) => (value === null ? isNull(column) : eq(column, value));
  return and(
    eq(m.id, row.id),
    eq(m.meta, row.meta),
    same(m.file, row.file),
    same(m.uploadFile, row.uploadFile),
    same(m.preview, row.preview),
    same(m.thumbnail, row.thumbnail),
    same(m.statusId, row.statusId),
  )!;
}
