import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ImportView } from "../models/imports.ts";
import { EXPORT_FILES, EXPORT_KINDS } from "../services/portability/exports.ts";
import { MAX_IMPORT_BYTES } from "../services/portability/formats.ts";
import type { Services } from "../services/index.ts";
import { CliFailure, parseArgs, withServices } from "./admin.ts";

// `rookery accounts export|import`: an account's lists as Mastodon's CSV files, out to a
// folder or in from one file. An import is queued in the database and worked off by the running
// server (at its bounded rate); the command follows its progress until it is done.

const out = (line: string) => process.stdout.write(`${line}\n`);

/** How often the command looks at an import's progress. */
const WATCH_MS = 500;
/** Without progress for this long, the command says what it is waiting for. */
const QUIET_MS = 15_000;

async function localAccount(services: Services, name: string | undefined, usage: string): Promise<number> {
  if (!name) throw new CliFailure(usage);
  const account = await services.accounts.getLocal(name.replace(/^@/, ""));
  if (!account) throw new CliFailure(`no local account ${name}`);
  return account.id;
}

/** `accounts export NAME --csv DIR`: every list, each into its file as Mastodon names it. */
export async function exportCommand(args: string[]) {
  const usage = "accounts export needs an account and a folder: accounts export <username> --csv <dir>";
  const { options, positional } = parseArgs(args);
  const dir = options.get("csv");
  if (!dir) throw new CliFailure(usage);
  await withServices(async (services) => {
    const accountId = await localAccount(services, positional[0], usage);
    const folder = resolve(dir);
    mkdirSync(folder, { recursive: true });
    for (const kind of EXPORT_KINDS) {
      const path = join(folder, EXPORT_FILES[kind]);
      const fd = openSync(path, "w", 0o600);
      let lines = 0;
      try {
        // Line by line as the pages are read: a long list is never held whole.
        for await (const line of services.exports.lines(accountId, kind)) {
          writeSync(fd, line);
          lines++;
        }
      } finally {
        closeSync(fd);
      }
      out(`${path}\t${lines} line(s)`);
    }
  });
}

/** `accounts import NAME FILE --type TYPE [--overwrite] [--no-wait]`. */
export async function importCommand(args: string[]) {
  const usage = "accounts import needs an account, a file and its type: accounts import <username> <file> --type following|blocks|mutes|domain_blocks|bookmarks|lists [--overwrite]";
  const { options, positional } = parseArgs(args, ["overwrite", "no-wait"]);
  const file = positional[1];
  if (!file) throw new CliFailure(usage);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new CliFailure(`cannot read ${file}`);
  }
  // Not read at all when it is over the limit, refused in the service's words.
  if (size > MAX_IMPORT_BYTES) throw new CliFailure(`Data is too large (at most ${MAX_IMPORT_BYTES / 1024 / 1024} MB)`);
  const data = new Uint8Array(readFileSync(file));
  await withServices(async (services) => {
    const accountId = await localAccount(services, positional[0], usage);
    const queued = await services.imports.submit(accountId, { type: options.get("type"), mode: options.has("overwrite") ? "overwrite" : "merge", data });
    out(`Queued import ${queued.id}: ${queued.total} ${queued.type} entr${queued.total === 1 ? "y" : "ies"}${queued.overwrite ? ", replacing what is not in the file" : ""}`);
    if (options.has("no-wait")) {
      out("The running server works it off; its progress: GET /api/v1/imports");
      return;
    }
    const done = await watch(services, accountId, queued.id);
    report(done);
  });
}

/** Follows an import until it is finished, with a progress bar on stderr. */
async function watch(services: Services, accountId: number, id: number): Promise<ImportView> {
  const tty = process.stderr.isTTY === true;
  let lastProcessed = -1;
  let lastChange = Date.now();
  let told = false;
  for (;;) {
    const view = await services.imports.show(accountId, id);
    if (view.processed !== lastProcessed || view.state === "finished") {
      lastProcessed = view.processed;
      lastChange = Date.now();
      process.stderr.write(`${tty ? "\r\x1b[K" : ""}${bar(view)}${tty && view.state !== "finished" ? "" : "\n"}`);
    } else if (!told && Date.now() - lastChange > QUIET_MS) {
      told = true;
      process.stderr.write(`${tty ? "\n" : ""}Waiting for the server to work the import off (is \`rookery serve\` running?). Ctrl-C stops watching; the import stays queued.\n`);
    }
    if (view.state === "finished") return view;
    await Bun.sleep(WATCH_MS);
  }
}

function bar(view: ImportView): string {
  const width = 30;
  const filled = view.total === 0 ? width : Math.round((view.processed / view.total) * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${view.processed}/${view.total}  imported ${view.imported}  awaiting ${view.awaiting}  failed ${view.failed}`;
}

function report(view: ImportView) {
  out(`Import ${view.id} finished: ${view.imported} imported, ${view.awaiting} awaiting an answer, ${view.failed} failed`);
  const reasons = Object.entries(view.failures).filter(([, n]) => n > 0);
  if (reasons.length > 0) out(`Failed: ${reasons.map(([reason, n]) => `${n} ${reason.replace("_", " ")}`).join(", ")}`);
  for (const f of view.failedEntries) out(`  line ${f.line}\t${f.entry}\t${f.reason}\t${f.detail}`);
}
