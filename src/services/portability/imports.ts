import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { ImportRow } from "../../db/schema.ts";
import { notFound, validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { ImportView } from "../../models/imports.ts";
import { IMPORT_TYPES, readImportFile, type ImportEntry, type ImportType } from "./formats.ts";

export interface ImportInput {
  type?: string;
  /** merge (the default) or overwrite */
  mode?: string;
  /** The file's bytes; null when none was sent. */
  data: Uint8Array | null;
}

/** Failed entries a report lists (the counts cover them all). */
const LISTED_FAILURES = 100;
/** Rows written per statement. */
const INSERT_CHUNK = 500;

/**
 * Imports of Mastodon's CSV files (GoToSocial's POST /api/v1/import, `rookery accounts
 * import`): the file is read and checked whole, then kept as one row per entry, all in one
 * transaction; the worker (import-worker.ts) works them off in the background. A file that is
 * refused changes nothing.
 */
export class ImportService {
  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    /** This server's acct domain (host[:port]). */
    private domain: string,
    /** Told when an import is queued (the worker, when it runs in this process). */
    private queued: () => void,
  ) {}

  /** Reads and queues a file; 422 for a missing or unknown type or mode, and for a file that is refused. */
  async submit(accountId: number, input: ImportInput): Promise<ImportView> {
    const type = input.type?.trim().toLowerCase();
    if (!type) throw validationFailed("Type can't be blank");
    if (!(IMPORT_TYPES as readonly string[]).includes(type)) throw validationFailed(`Type must be one of ${IMPORT_TYPES.join(", ")}`);
    const mode = input.mode?.trim().toLowerCase() || "merge";
    if (mode !== "merge" && mode !== "overwrite") throw validationFailed("Mode must be merge or overwrite");
    if (!input.data || input.data.byteLength === 0) throw validationFailed("Data can't be blank");
    const entries = readImportFile(type as ImportType, input.data, this.domain);
    const overwrite = mode === "overwrite";
    const id = this.ids.next();
    // Raw statements: drizzle would spend more building them than the database running them.
    // A boolean binds as 1/0 on SQLite and as itself on PostgreSQL.
    await this.db.transaction(async () => {
      await this.db.run(INSERT_IMPORT, [id, accountId, type, overwrite, overwrite ? "queued" : "running", entries.length, this.clock.now()]);
      for (let i = 0; i < entries.length; i += INSERT_CHUNK) {
        const chunk = entries.slice(i, i + INSERT_CHUNK);
        const values = chunk.flatMap((e) => [this.ids.next(), id, e.line, JSON.stringify(e.entry), e.host]);
        await this.db.run(`INSERT INTO import_rows (id, import_id, line, data, host) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")}`, values);
      }
    });
    this.queued();
    return this.show(accountId, id);
  }

  async list(accountId: number): Promise<ImportView[]> {
    const rows = await this.db.all<Raw>(`${SELECT_IMPORT} WHERE account_id = ? ORDER BY id DESC LIMIT ${LISTED_IMPORTS}`, [accountId]);
    if (rows.length === 0) return [];
    // The counts of every import listed in one statement, rather than one each.
    const counts = await this.db.all<Count & { importId: number }>(
      `SELECT import_id AS "importId", state, failure, count(*) AS n FROM import_rows WHERE import_id IN (${rows.map(() => "?").join(", ")}) GROUP BY import_id, state, failure`,
      rows.map((r) => r.id),
    );
    const views: ImportView[] = [];
    for (const r of rows) views.push(await this.view(r, counts.filter((c) => c.importId === r.id)));
    return views;
  }

  async show(accountId: number, id: number | null): Promise<ImportView> {
    const row = id === null ? undefined : await this.db.get<Raw>(`${SELECT_IMPORT} WHERE id = ? AND account_id = ?`, [id, accountId]);
    if (!row) throw notFound();
    return this.view(row, await this.db.all<Count>(COUNTS, [row.id]));
  }

  private async view(raw: Raw, counts: Count[]): Promise<ImportView> {
    // 0/1 on SQLite, a boolean on PostgreSQL.
    const imp: ImportRow = { ...raw, overwrite: Boolean(raw.overwrite) };
    const failures: Record<string, number> = { unknown_account: 0, server_down: 0, refused: 0, not_found: 0, invalid: 0 };
    let done = 0;
    let failed = 0;
    for (const c of counts) {
      if (c.state === "done") done += c.n;
      if (c.state === "failed") {
        failed += c.n;
        failures[c.failure ?? "invalid"] = (failures[c.failure ?? "invalid"] ?? 0) + c.n;
      }
    }
    const processed = done + failed;
    let imported = done;
    let awaiting = 0;
    // No failed row, none to list (most imports): the statement is spared.
    const failedEntries = (failed === 0 ? [] : await this.db.all<{ line: number; data: string; failure: string; detail: string | null }>(FAILED_ROWS, [imp.id])).map((r) => ({ line: r.line, entry: describe(r.data), reason: r.failure, detail: r.detail ?? "" }));
    if (imp.type === "following" || imp.type === "lists") {
      // A follow that is neither standing nor asked for any more was refused (Reject), or undone since.
      const answered = (await this.db.get<{ followed: number; awaiting: number }>(ANSWERED, [imp.accountId, imp.accountId, imp.id]))!;
      awaiting = answered.awaiting;
      imported = answered.followed;
      const refused = done - answered.followed - answered.awaiting;
      if (refused > 0) {
        failed += refused;
        failures.refused! += refused;
        const room = LISTED_FAILURES - failedEntries.length;
        if (room > 0) {
          for (const r of (await this.db.all<{ line: number; data: string }>(UNANSWERED, [imp.id, imp.accountId, imp.accountId])).slice(0, room)) {
            failedEntries.push({ line: r.line, entry: describe(r.data), reason: "refused", detail: "not followed: its server refused the follow, or it was undone since" });
          }
        }
      }
    }
    return {
      id: imp.id,
      type: imp.type,
      overwrite: imp.overwrite,
      state: imp.state,
      createdAt: imp.createdAt,
      finishedAt: imp.finishedAt,
      total: imp.totalItems,
      processed,
      imported,
      awaiting,
      failed,
      failures,
      failedEntries: failedEntries.sort((a, b) => a.line - b.line),
    };
  }
}

type Raw = Omit<ImportRow, "overwrite"> & { overwrite: number | boolean };
type Count = { state: string; failure: string | null; n: number };

/** Imports listed, newest first. */
const LISTED_IMPORTS = 40;

// Portable SQL: positional `?`, aliases quoted (PostgreSQL folds unquoted ones to lower case).
const SELECT_IMPORT = `SELECT id, account_id AS "accountId", type, overwrite, state, total_items AS "totalItems", created_at AS "createdAt", finished_at AS "finishedAt" FROM imports`;
const INSERT_IMPORT = "INSERT INTO imports (id, account_id, type, overwrite, state, total_items, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
const COUNTS = "SELECT state, failure, count(*) AS n FROM import_rows WHERE import_id = ? GROUP BY state, failure";
// A follow's answer comes later: whether an entry took is read from the follows as they are now.
const ANSWERED = `SELECT coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ? AND f.target_account_id = r.target_account_id) THEN 1 ELSE 0 END), 0) AS followed,
    coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM follow_requests q WHERE q.account_id = ? AND q.target_account_id = r.target_account_id) THEN 1 ELSE 0 END), 0) AS awaiting
  FROM import_rows r WHERE r.import_id = ? AND r.state = 'done'`;
const FAILED_ROWS = `SELECT line, data, failure, detail FROM import_rows WHERE import_id = ? AND state = 'failed' ORDER BY id LIMIT ${LISTED_FAILURES}`;
const UNANSWERED = `SELECT r.line, r.data FROM import_rows r WHERE r.import_id = ? AND r.state = 'done'
    AND NOT EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ? AND f.target_account_id = r.target_account_id)
    AND NOT EXISTS (SELECT 1 FROM follow_requests q WHERE q.account_id = ? AND q.target_account_id = r.target_account_id)
  ORDER BY r.id LIMIT ${LISTED_FAILURES}`;

/** An entry as the file had it: the address, domain or URL (with its list's name). */
function describe(data: string): string {
  const entry = JSON.parse(data) as ImportEntry;
  const what = entry.acct ?? entry.domain ?? entry.uri ?? "";
  return entry.list !== undefined ? `${entry.list}: ${what}` : what;
}
