import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { statuses, type StatusRow } from "../../db/schema.ts";
import { forbidden } from "../../errors.ts";
import type { Page } from "../../infra/pagination.ts";
import type { StatusReader } from "../statuses/reader.ts";
import { Conditions } from "../statuses/timeline-sql.ts";

const STATUS = rowReader(statuses);
/** Where the quote's own id (the cursor) is, after the status's columns. */
const CURSOR = STATUS.columns.split(", ").length;

/**
 * The quotes of a status (GET /api/v1/statuses/:id/quotes), on the database port (issue 31);
 * the status itself is checked by the reader, synchronous for its many unconverted callers.
 */
export class QuoteListing {
  constructor(
    private port: DatabasePort,
    private reader: Pick<StatusReader, "visibleRow">,
  ) {}

  /**
   * The statuses quoting the status (accepted quotes), newest first, with the cursors: each
   * quote's id. Its author's to read (as Mastodon's guide says), who sees them all; anyone else
   * who may see the status is refused (403), anyone who may not gets 404.
   */
  async quotesOf(accountId: number, statusId: number | null, page: Page): Promise<{ rows: StatusRow[]; cursors: number[] }> {
    const status = await this.reader.visibleRow(statusId, accountId);
    if (status.accountId !== accountId) throw forbidden();
    const where = new Conditions(this.port.dialect).add("quotes.quoted_status_id = ?", status.id).add("quotes.state = 'accepted'").page("quotes.id", page);
    const forward = page.minId !== undefined;
    // LEFT JOIN: a quote whose status is gone still moves the cursors, as it always did.
    const found = await this.port.values(
      `SELECT ${STATUS.columns}, quotes.id FROM quotes LEFT JOIN statuses ON statuses.id = quotes.status_id
       WHERE ${where.where} ORDER BY quotes.id ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`,
      where.params,
    );
    if (forward) found.reverse();
    return { rows: found.filter((r) => r[0] !== null).map(STATUS.map), cursors: found.map((r) => r[CURSOR] as number) };
  }
}
