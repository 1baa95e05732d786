import { and, asc, desc, gt, lt, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/** A page request in Mastodon's terms; all bounds are exclusive ids. */
export interface Page {
  maxId?: number;
  sinceId?: number;
  /** Pages forward from this id (oldest first in SQL), returned newest first all the same. */
  minId?: number;
  limit: number;
}

/** WHERE conditions and ORDER BY for paging on `column`: always an index range scan. */
export function pageQuery(column: SQLiteColumn, page: Page): { where: SQL | undefined; orderBy: SQL; reverse: boolean } {
  const conditions: SQL[] = [];
  if (page.maxId !== undefined) conditions.push(lt(column, page.maxId));
  if (page.sinceId !== undefined) conditions.push(gt(column, page.sinceId));
  if (page.minId !== undefined) conditions.push(gt(column, page.minId));
  const forward = page.minId !== undefined;
  return { where: conditions.length ? and(...conditions) : undefined, orderBy: forward ? asc(column) : desc(column), reverse: forward };
}

/** Applies the result of a pageQuery: rows come back newest first. */
export function finishPage<T>(rows: T[], reverse: boolean): T[] {
  return reverse ? rows.reverse() : rows;
}
