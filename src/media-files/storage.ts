import { mkdirSync, renameSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomSecret } from "../auth/secrets.ts";

/**
 * Files the server keeps under DATA_DIR/media, named by the server (never by the upload),
 * and served at PUBLIC_URL/system/<path>.
 */
export class MediaStorage {
  readonly root: string;

  constructor(dataDir: string, private publicUrl: string) {
    this.root = join(dataDir, "media");
    mkdirSync(this.root, { recursive: true });
  }

  /** A fresh relative path like `avatars/2026/11/<random>.webp`. */
  newPath(kind: string, ext: string, now = new Date()): string {
    const month = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
    return `${kind}/${month}/${randomSecret(18)}.${ext}`;
  }

  async write(path: string, data: Uint8Array | Buffer | Blob): Promise<void> {
    const full = this.resolve(path);
    if (!full) throw new Error(`unsafe media path: ${path}`);
    mkdirSync(dirname(full), { recursive: true });
    await Bun.write(full, data);
  }

  /** The full path of a fresh relative path, its folder made: for a tool that writes the file itself. */
  prepare(path: string): string {
    const full = this.resolve(path);
    if (!full) throw new Error(`unsafe media path: ${path}`);
    mkdirSync(dirname(full), { recursive: true });
    return full;
  }

  /** Moves a file the server wrote to another of its paths. */
  move(from: string, to: string) {
    const source = this.resolve(from);
    if (!source) throw new Error(`unsafe media path: ${from}`);
    renameSync(source, this.prepare(to));
  }

  remove(path: string | null | undefined) {
    if (!path) return;
    const full = this.resolve(path);
    if (!full) return;
    try {
      unlinkSync(full);
    } catch {
      // already gone
    }
  }

  url(path: string): string {
    return `${this.publicUrl}/system/${path}`;
  }

  /** The file for a served path, or null when the path could lead outside the media folder. */
  resolve(path: string): string | null {
    if (!/^[a-z_]+\/\d{4}\/\d{2}\/[A-Za-z0-9_-]+\.[a-z0-9]{2,5}$/.test(path)) return null;
    return join(this.root, path);
  }
}
