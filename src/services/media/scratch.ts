import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { MediaStorage } from "../../media-files/storage.ts";

/**
 * Shared (several processes): an upload in the scratch folder that no unfinished row names yet
 * may belong to a request another process is still answering (the row comes after the file);
 * one this old does not.
 */
const ORPHAN_UPLOAD_AGE_MS = 60 * 60 * 1000;

/**
 * Removes what a previous run left in media_uploads (the scratch folder) besides the uploads
 * `kept` (those unfinished rows name): uploads of requests it died in (up to 99 MB each), and
 * the output of transcodes it was killed in. `shared`: only files older than any request.
 */
export function removeLeftoverUploads(storage: MediaStorage, kept: Set<string | null>, shared: boolean) {
  const uploads = join(storage.root, "media_uploads");
  if (!existsSync(uploads)) return;
  for (const entry of readdirSync(uploads, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    const path = relative(storage.root, full);
    if (kept.has(path) || (shared && Date.now() - (statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? 0) < ORPHAN_UPLOAD_AGE_MS)) continue;
    // Not awaited: a leftover upload goes in the background (remove never rejects).
    void storage.remove(path);
  }
}
