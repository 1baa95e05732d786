import { createWriteStream, existsSync, renameSync, rmSync, openSync } from "node:fs";
import { once } from "node:events";
import { dirname, resolve } from "node:path";
import type { AccountRow } from "../db/schema.ts";
import type { Services } from "../services/index.ts";
import type { ArchiveFormat } from "../services/archive/export.ts";
import type { ImportProgress, ImportSummary } from "../services/archive/import.ts";
import { ArchiveFormatError } from "../services/archive/streams.ts";
import { CliFailure, parseArgs, withServices } from "./admin.ts";

// rookery accounts export-archive NAME FILE and import-archive NAME FILE: an account's
// archive in Mastodon's layout, written out or read in (src/services/archive/).

const out = (line: string) => process.stdout.write(`${line}\n`);

async function localAccount(services: Services, name: string | undefined, usage: string): Promise<AccountRow> {
  if (!name) throw new CliFailure(usage);
  const account = await services.accounts.getLocal(name.replace(/^@/, ""));
  if (!account || account.domain !== null) throw new CliFailure(`no local account named ${name}`);
  return account;
}

function formatOf(file: string, given: string | undefined): ArchiveFormat {
  const format = given ?? (/\.(tar\.gz|tgz)$/i.test(file) ? "tar.gz" : "zip");
  if (format !== "zip" && format !== "tar.gz") throw new CliFailure(`unknown archive format "${format}"; use zip or tar.gz`);
  return format;
}

export async function exportArchiveCommand(args: string[]) {
  const { options, positional } = parseArgs(args);
  const usage = "accounts export-archive needs an account and a file: accounts export-archive <username> <file.zip|file.tar.gz>";
  const [name, target] = positional;
  if (!target) throw new CliFailure(usage);
  const file = resolve(target);
  if (existsSync(file)) throw new CliFailure(`${file} already exists; choose a new file`);
  if (!existsSync(dirname(file))) throw new CliFailure(`${dirname(file)} does not exist; make the folder first (mkdir -p ${dirname(file)})`);
  const format = formatOf(file, options.get("format"));
  await withServices(async (services) => {
    const account = await localAccount(services, name, usage);
    if (!services.archiveExport) throw new CliFailure("archives cannot be written here");
    // Written beside the target and renamed at the end: a file of that name is a whole archive.
    const partial = `${file}.part`;
    // Opened here, not by the stream: a folder that is missing or not writable fails now, with
    // its path, rather than as an error event nobody awaits.
    const stream = createWriteStream(partial, { fd: openSync(partial, "wx") });
    let bytes = 0;
    try {
      for await (const chunk of services.archiveExport.write(account, format)) {
        bytes += chunk.length;
        if (!stream.write(chunk)) await once(stream, "drain");
      }
      stream.end();
      await once(stream, "close");
      renameSync(partial, file);
    } catch (e) {
      stream.destroy();
      rmSync(partial, { force: true });
      throw e;
    }
    out(`Wrote the archive of ${account.username} to ${file} (${(bytes / (1024 * 1024)).toFixed(1)} MB)`);
  });
}

export async function importArchiveCommand(args: string[]) {
  const { options, positional } = parseArgs(args, ["with-replies"]);
  const usage = "accounts import-archive needs an account and an archive: accounts import-archive <username> <archive.zip|archive.tar.gz> [--with-replies]";
  const [name, source] = positional;
  if (!source) throw new CliFailure(usage);
  await withServices(async (services) => {
    const account = await localAccount(services, name, usage);
    const bar = progressBar();
    let summary: ImportSummary;
    try {
      summary = await services.archiveImport.importArchive(account, resolve(source), { withReplies: options.has("with-replies"), progress: bar.update });
    } catch (e) {
      bar.end();
      if (e instanceof ArchiveFormatError) throw new CliFailure(`cannot import ${source}: ${e.message}`);
      throw e;
    }
    bar.end();
    const s = summary.skipped;
    out(`Imported ${summary.imported} post(s) into ${account.username} (${summary.threads} as replies in their threads, ${summary.polls} poll(s))`);
    out(`Media: ${summary.media.imported} imported, ${summary.media.missing} missing from the archive, ${summary.media.failed} not readable`);
    out(`Already imported before: ${summary.alreadyImported}`);
    out(`Skipped: ${s.boosts} boost(s), ${s.private} private and ${s.direct} direct post(s), ${s.replies} repl(ies) to other people${options.has("with-replies") ? "" : " (--with-replies keeps them)"}, ${s.unreadable} unreadable item(s)`);
  });
}

/**
 * The import's progress on standard error: a bar redrawn in place on a terminal, a line per
 * tenth otherwise (a log keeps a few lines, not thousands).
 */
function progressBar() {
  const tty = process.stderr.isTTY === true;
  const WIDTH = 30;
  const label = { media: "media", posts: "posts" };
  let last = { phase: "", step: -1, at: 0 };
  return {
    update(p: ImportProgress) {
      const fraction = p.total === 0 ? 1 : p.done / p.total;
      const text = `${label[p.phase].padEnd(5)} [${"#".repeat(Math.round(fraction * WIDTH)).padEnd(WIDTH, ".")}] ${p.done}/${p.total}`;
      if (tty) {
        const now = Date.now();
        if (p.phase === last.phase && p.done !== p.total && now - last.at < 100) return;
        if (last.phase !== "" && p.phase !== last.phase) process.stderr.write("\n");
        process.stderr.write(`\r${text}`);
        last = { phase: p.phase, step: 0, at: now };
        return;
      }
      const step = Math.floor(fraction * 10);
      if (p.phase === last.phase && step === last.step) return;
      process.stderr.write(`${text}\n`);
      last = { phase: p.phase, step, at: 0 };
    },
    end() {
      if (tty && last.phase !== "") process.stderr.write("\n");
    },
  };
}
