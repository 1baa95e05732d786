import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { accounts, type StatusRow } from "../../db/schema.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { ListedAccount } from "../../models/views.ts";
import { finishPage, type Page } from "../../infra/pagination.ts";
import type { StatusReader } from "./reader.ts";
import { Conditions } from "./timeline-sql.ts";

const ACCOUNT = rowReader(accounts);
/** Where the cursor is, after the account's columns. */
const CURSOR = ACCOUNT.columns.split(", ").length;

/** Mastodon's context limits: tighter for anonymous readers. */
const ANONYMOUS = { ancestors: 40, descendants: 60, depth: 20 };
const SIGNED_IN = { ancestors: 4096, descendants: 4096, depth: 4096 };

/**
 * Threads around a status: its ancestors (root first), its descendants (depth-first, with
 * the authors' self-replies promoted as Mastodon does), and who boosted or favourited it.
 */
/** How far up a thread is followed (a cycle in remote data ends here too). */
const MAX_THREAD_DEPTH = 256;

/** On the database port (issue 31): a thread's walks and who boosted or favourited a status. */
export class ThreadService {
  /** The thread's walks: the same text on every read, so the driver keeps them prepared (built again each time, they cost more than they read). */
  private q;

  constructor(
    private port: DatabasePort,
    private reader: StatusReader,
    private moderation: ModerationService,
  ) {
    // A path sorts by zero-padded ids: printf on SQLite, lpad on PostgreSQL.
    const padded = (id: string) => (port.dialect === "postgres" ? `lpad(${id}::text, 16, '0')` : `printf('%016d', ${id})`);
    this.q = {
      ancestors: `
        WITH RECURSIVE up(id, depth) AS (
          SELECT in_reply_to_id, 1 FROM statuses WHERE id = ? AND in_reply_to_id IS NOT NULL
          UNION ALL
          SELECT s.in_reply_to_id, up.depth + 1 FROM up JOIN statuses s ON s.id = up.id
          WHERE s.in_reply_to_id IS NOT NULL AND up.depth < ?
        )
        SELECT id FROM up ORDER BY depth DESC`,
      descendants: `
        WITH RECURSIVE down(id, path, depth) AS (
          SELECT id, ${padded("id")}, 1 FROM statuses WHERE in_reply_to_id = ?
          UNION ALL
          SELECT s.id, down.path || '/' || ${padded("s.id")}, down.depth + 1
          FROM down JOIN statuses s ON s.in_reply_to_id = down.id WHERE down.depth < ?
        )
        SELECT id FROM down ORDER BY path LIMIT ?`,
      // The id cast, so that PostgreSQL knows the parameter's type in the recursive union.
      top: `
        WITH RECURSIVE up(id, depth) AS (
          SELECT CAST(? AS BIGINT), 0
          UNION ALL
          SELECT s.in_reply_to_id, up.depth + 1 FROM up JOIN statuses s ON s.id = up.id
          WHERE s.in_reply_to_id IS NOT NULL AND up.depth < ?
        )
        SELECT id FROM up ORDER BY depth DESC LIMIT 1`,
    };
  }

  private async ids(text: string, params: number[]): Promise<number[]> {
    return (await this.port.values(text, params)).map((r) => r[0] as number);
  }

  async context(row: StatusRow, viewerId: number | null): Promise<{ ancestors: StatusRow[]; descendants: StatusRow[] }> {
    const limits = viewerId === null ? ANONYMOUS : SIGNED_IN;
    const ancestorIds = await this.ids(this.q.ancestors, [row.id, limits.ancestors]);
    const descendantIds = await this.ids(this.q.descendants, [row.id, limits.depth, limits.descendants]);
    // Both sides read and checked in one batch: whether a status is shown is decided row by row.
    const shown = new Map((await this.filter(await this.reader.rowsByIds([...new Set([...ancestorIds, ...descendantIds])]), viewerId)).map((r) => [r.id, r]));
    const inOrder = (ids: number[]) => ids.flatMap((id) => shown.get(id) ?? []);
    return { ancestors: inOrder(ancestorIds), descendants: promoteSelfReplies(inOrder(descendantIds)) };
  }

  /** The highest ancestor of a status stored here (itself when it replies to nothing stored). */
  async topAncestor(row: StatusRow): Promise<StatusRow> {
    const [top] = await this.ids(this.q.top, [row.id, MAX_THREAD_DEPTH]);
    if (top === undefined || top === row.id) return row;
    return (await this.reader.findRow(top)) ?? row;
  }

  /** What the viewer may see, without authors they block or mute (their own kept). */
  private async filter(rows: StatusRow[], viewerId: number | null): Promise<StatusRow[]> {
    const visible = await this.reader.visible(rows, viewerId);
    if (viewerId === null) return visible;
    const hidden = await this.moderation.hiddenAccounts(viewerId);
    return visible.filter((r) => r.accountId === viewerId || !hidden.has(r.accountId));
  }

  /** Accounts that boosted the status (boosts of a public or unlisted one), by the boost's id. */
  rebloggedBy(statusId: number, viewerId: number | null, page: Page): Promise<ListedAccount[]> {
    const where = new Conditions(this.port.dialect).add("statuses.reblog_of_id = ?", statusId).visibleTo("statuses", null);
    return this.accountsBy("statuses", "statuses.id", where, viewerId, page);
  }

  /** Accounts that favourited the status, by the favourite's id. */
  favouritedBy(statusId: number, viewerId: number | null, page: Page): Promise<ListedAccount[]> {
    const where = new Conditions(this.port.dialect).add("favourites.status_id = ?", statusId);
    return this.accountsBy("favourites", "favourites.id", where, viewerId, page);
  }

  /** The accounts of `table`'s rows (raw, read by rowReader: drizzle's mapping of whole account rows cost more than the query). */
  private async accountsBy(table: "statuses" | "favourites", cursor: string, where: Conditions, viewerId: number | null, page: Page): Promise<ListedAccount[]> {
    if (viewerId !== null) where.notIn("accounts.id", [...(await this.moderation.hiddenAccounts(viewerId))]);
    where.page(cursor, page);
    const forward = page.minId !== undefined;
    const rows = await this.port.values(
      `SELECT ${ACCOUNT.columns}, ${cursor} FROM ${table} INNER JOIN accounts ON accounts.id = ${table}.account_id
       WHERE ${where.where} ORDER BY ${cursor} ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`,
      where.params,
    );
    return finishPage(
      rows.map((r) => ({ account: ACCOUNT.map(r), cursor: r[CURSOR] as number })),
      forward,
    );
  }
}

/** Mastodon's promote_by!: replies of authors to themselves move ahead of other replies, order kept. */
function promoteSelfReplies(rows: StatusRow[]): StatusRow[] {
  const isSelf = (r: StatusRow) => r.inReplyToAccountId === r.accountId;
  const insertAt = rows.findIndex((r) => !isSelf(r));
  if (insertAt < 0) return rows;
  const head = rows.slice(0, insertAt);
  const rest = rows.slice(insertAt);
  return [...head, ...rest.filter(isSelf), ...rest.filter((r) => !isSelf(r))];
}

