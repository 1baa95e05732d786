import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { loadConfig } from "../config.ts";
import { S3Store } from "../media-files/s3-store.ts";
import { isMediaPath } from "../media-files/storage.ts";
import { CliFailure } from "./admin.ts";

/** Files sent at once: enough to hide a round trip each, few enough for a small bucket plan. */
const AT_ONCE = 4;

/** `rookery media <command>`: only migrate-to-s3 so far. */
export async function mediaCommand(args: string[]): Promise<void> {
  if (args[0] !== "migrate-to-s3") throw new CliFailure(`unknown media command "${args[0] ?? ""}"; use media migrate-to-s3`);
  if (args.length > 1) throw new CliFailure(`media migrate-to-s3 takes no arguments (got "${args.slice(1).join(" ")}"); the bucket comes from the S3_ settings`);
  await migrateToS3();
}

/** The kept files under DATA_DIR/media as keys (their paths there), sorted: raw uploads waiting for processing stay local. */
function localFiles(root: string): { key: string; path: string }[] {
  const out: { key: string; path: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push({ key: relative(root, path), path });
    }
  };
  try {
    walk(root);
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
  }
  return out.filter((f) => isMediaPath(f.key) && !f.key.startsWith("media_uploads/")).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A file's size; 0 for one that cannot be read now (its copy fails, and says why, in its turn). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

const mb = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

/**
 * Copies every kept file under DATA_DIR/media to the bucket the S3_ settings name, under the
 * same key, so the server finds them there once MEDIA_STORAGE=s3 is set for it. Resumable: a
 * key already in the bucket with the same size is skipped, so a run stopped (or failed) halfway
 * is finished by running it again. It switches nothing: the server keeps serving its files
 * until the operator sets MEDIA_STORAGE=s3 for it, and the local files stay until removed.
 */
async function migrateToS3(): Promise<void> {
  const config = loadConfig();
  if (config.mediaStorage.kind !== "s3") {
    throw new CliFailure("media migrate-to-s3 copies to the bucket the S3_ settings name: run it with MEDIA_STORAGE=s3, S3_BUCKET, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and S3_ENDPOINT, S3_REGION, S3_ALIAS_HOST) set as the server will have them");
  }
  const store = new S3Store(config.mediaStorage);
  const files = localFiles(join(config.dataDir, "media"));
  const there = new Map<string, number>();
  try {
    for await (const object of listAll(store)) there.set(object.key, object.size);
  } catch (e) {
    throw new CliFailure(`cannot list the bucket ${config.mediaStorage.bucket} at ${config.mediaStorage.endpoint}: ${String(e).split("\n")[0]}`);
  }
  const total = files.reduce((sum, f) => sum + sizeOf(f.path), 0);
  const progress = { done: 0, copied: 0, skipped: 0, bytes: 0 };
  const tty = process.stderr.isTTY;
  const line = () => `media migrate-to-s3: ${progress.done}/${files.length} files, ${mb(progress.bytes)} of ${mb(total)} (${progress.copied} copied, ${progress.skipped} already there)`;
  const show = (last = false) => {
    if (tty) process.stderr.write(`\r${line()}${last ? "\n" : ""}`);
    else if (last || progress.done % 100 === 0) process.stderr.write(`${line()}\n`);
  };
  let failure: { key: string; error: unknown } | null = null;
  let next = 0;
  const worker = async () => {
    while (failure === null && next < files.length) {
      const file = files[next++]!;
      try {
        const size = statSync(file.path).size;
        if (there.get(file.key) === size) progress.skipped++;
        else {
          await store.upload(file.key, file.path);
          progress.copied++;
        }
        progress.bytes += size;
        progress.done++;
        show();
      } catch (error) {
        failure ??= { key: file.key, error };
      }
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  show(true);
  if (failure !== null) {
    const { key, error } = failure as { key: string; error: unknown };
    throw new CliFailure(`could not copy ${key}: ${String(error).split("\n")[0]}; ${progress.copied} copied in this run: run the command again to go on from there`);
  }
  process.stdout.write(
    `Copied ${progress.copied} file(s) to the bucket ${config.mediaStorage.bucket}; ${progress.skipped} were there already.\n` +
      "Nothing is switched: set MEDIA_STORAGE=s3 and the S3_ settings for the server and restart it; the files under " +
      `${join(config.dataDir, "media")} can go once it serves from the bucket (run this again first to copy what came meanwhile).\n`,
  );
}

/** Every object of the bucket, page by page. */
async function* listAll(store: S3Store): AsyncGenerator<{ key: string; size: number }> {
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.client.list({ startAfter, maxKeys: 1000 });
    const objects = page.contents ?? [];
    for (const o of objects) yield { key: o.key, size: o.size ?? -1 };
    if (!page.isTruncated || objects.length === 0) return;
    startAfter = objects[objects.length - 1]!.key;
  }
}
