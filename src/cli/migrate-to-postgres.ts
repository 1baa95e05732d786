import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config.ts";
import { DATABASE_FILE } from "../db/connection.ts";
import { copyToPostgres, CopyMismatch, differs, type Progress, type TableResult } from "../db/to-postgres/copy.ts";
import { openSource } from "../db/to-postgres/source.ts";
import { checkTargetEmpty, connectTarget, MoveRefused, shownUrl } from "../db/to-postgres/target.ts";
import { CliFailure, parseArgs } from "./admin.ts";

// `rookery migrate-to-postgres <DATABASE_URL>`: the embedded database copied, whole, into an
// empty PostgreSQL one (src/db/to-postgres/ does the work). The server must be stopped: the
// copy is one consistent snapshot, but whatever a running server wrote after it would be left
// behind in SQLite when the server is started again on PostgreSQL.

const USAGE = "migrate-to-postgres <DATABASE_URL>, e.g. rookery migrate-to-postgres postgres://rookery:password@localhost:5432/rookery";
const out = (line: string) => process.stdout.write(`${line}\n`);

export async function migrateToPostgresCommand(args: string[]) {
  const { positional } = parseArgs(args);
  const url = positional[0];
  if (!url || positional.length > 1) throw new CliFailure(`migrate-to-postgres takes one argument, the PostgreSQL database's URL: ${USAGE}`);
  const config = loadConfig();
  const path = join(config.dataDir, DATABASE_FILE);
  refuseWhileOpen(path);

  try {
    const source = openSource(path);
    try {
      const sql = await connectTarget(url);
      try {
        // Refused before anything is said of a copy; checked again inside the copy's transaction.
        await checkTargetEmpty(sql, url);
        const rows = source.tables.reduce((n, t) => n + t.rows, 0);
        out(`Copying ${source.tables.length} tables (${rows} ${rows === 1 ? "row" : "rows"}) of ${path}, at ${source.level}, to ${shownUrl(url)}`);
        const bar = progressBar(process.stdout.isTTY === true);
        let result;
        try {
          result = await copyToPostgres(source, sql, url, bar.show);
        } catch (e) {
          bar.end();
          if (e instanceof CopyMismatch) {
            summary(e.tables);
            throw new CliFailure(`${e.message}: the copy was rolled back, nothing was written to PostgreSQL`);
          }
          throw e;
        }
        bar.end();
        // The tables' statistics, which a new database lacks until autovacuum's first pass: the
        // planner otherwise reads a whole home feed for a page of it (docs/scaling.md).
        await sql`ANALYZE`;
        if (result.migrationsApplied.length) out(`PostgreSQL migrations applied: ${result.migrationsApplied.join(", ")}`);
        summary(result.tables);
        out(`All ${result.tables.length} tables agree (${rows} ${rows === 1 ? "row" : "rows"}, the same count and the same rows on both sides); ${result.identities} identities continue after their largest id.`);
        out(`Start the server with DATABASE_URL set to this database to serve from it (docs/scaling.md); the SQLite database is left as it was, a backup of the move.`);
      } finally {
        await sql.close();
      }
    } finally {
      source.close();
    }
  } catch (e) {
    if (e instanceof MoveRefused) throw new CliFailure(e.message);
    throw e;
  }
}

/**
 * Refuses while another process has the database open (the server, a `rookery` command, a
 * sqlite3 shell), found through /proc on Linux. Elsewhere it cannot tell, and says so.
 */
function refuseWhileOpen(path: string) {
  if (!existsSync("/proc/self/fd")) {
    process.stderr.write("rookery: cannot tell here whether the server still has the database open: make sure it is stopped\n");
    return;
  }
  const files = new Set([path, `${path}-wal`].filter(existsSync).map((f) => realpathSync(f)));
  const holders: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's: the server runs as the operator, who can read its fds
    }
    const holds = fds.some((fd) => {
      try {
        return files.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (holds) holders.push(`${pid} (${command(pid)})`);
  }
  if (holders.length) {
    throw new CliFailure(`${path} is open in process ${holders.join(", ")}: stop the server first (what it wrote after the copy would be left behind); nothing was written`);
  }
}

function command(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** On a terminal, one bar redrawn in place; otherwise a plain line per table copied. */
function progressBar(tty: boolean) {
  let drawn = false;
  let checking = false;
  return {
    show(p: Progress) {
      if (tty) {
        const share = p.total === 0 ? 1 : p.done / p.total;
        const filled = Math.round(share * 30);
        const what = p.phase === "copy" ? "copying" : "checking";
        process.stdout.write(`\r\x1b[K[${"#".repeat(filled)}${".".repeat(30 - filled)}] ${Math.floor(share * 100)}% ${what} ${p.table} ${p.tableDone}/${p.tableRows}`);
        drawn = true;
        return;
      }
      if (p.phase === "copy" && p.finished) out(`copied ${p.table}: ${p.tableRows} ${p.tableRows === 1 ? "row" : "rows"}`);
      if (p.phase === "check" && !checking) out("reading every table back to compare it");
      checking ||= p.phase === "check";
    },
    end() {
      if (drawn) process.stdout.write("\r\x1b[K");
    },
  };
}

function summary(tables: TableResult[]) {
  const width = Math.max(5, ...tables.map((t) => t.table.length));
  const row = (a: string, b: string, c: string, d: string) => out(`  ${a.padEnd(width)}  ${b.padStart(10)}  ${c.padStart(10)}  ${d}`);
  row("table", "SQLite", "PostgreSQL", "rows");
  for (const t of tables) row(t.table, String(t.sqliteRows), String(t.pgRows), differs(t) ? (t.sqliteRows !== t.pgRows ? "COUNT DIFFERS" : "CONTENT DIFFERS") : "same");
}
