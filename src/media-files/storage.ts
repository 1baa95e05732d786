import { createReadStream, mkdirSync, renameSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomSecret } from "../auth/secrets.ts";
import { log } from "../log.ts";

/** A kept file read back: its size and its bytes as a stream (never whole in memory). */
export interface KeptFile {
  size: number;
  body(): AsyncIterable<Uint8Array>;
}

/**
 * Where kept media live: a folder under DATA_DIR (FileStore) or a bucket (S3Store, MEDIA_STORAGE=s3).
 * Keys are the server's own relative paths (`media_attachments/2026/11/<random>.webp`).
 */
export interface MediaStore {
  readonly kind: "files" | "s3";
  put(key: string, data: Uint8Array | Blob): Promise<void>;
  /** Takes a local file a tool wrote (sharp, ffmpeg): afterwards it is under `key` and gone from `localPath`, whether this succeeds or not. */
  take(key: string, localPath: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** The kept file's size, or null when there is none. */
  size(key: string): Promise<number | null>;
  open(key: string): Promise<KeptFile | null>;
  /** The base of the URLs clients are given (a bucket's or its CDN's), or null for PUBLIC_URL/system. */
  readonly publicBase: string | null;
  /** What GET /system/<key> answers: a local file to serve, or a URL to redirect to. */
  served(key: string): { file: string } | { redirect: string };
}

/** Raw uploads waiting for the media queue and the tools' output: always on the local disk, never served. */
const SCRATCH = "media_uploads/";

/**
 * Files the server keeps, named by the server (never by the upload): what the store holds, and
 * a local scratch folder (DATA_DIR/media/media_uploads) where uploads wait for processing and
 * sharp and ffmpeg write before the result is handed to the store. Files are served at
 * PUBLIC_URL/system/<path>, or at the store's public URL.
 */
export class MediaStorage {
  /** DATA_DIR/media: the files of a FileStore, and the scratch folder for any store. */
  readonly root: string;

  constructor(
    dataDir: string,
    private publicBase: string,
    readonly store: MediaStore = new FileStore(join(dataDir, "media")),
  ) {
    this.root = join(dataDir, "media");
    mkdirSync(this.root, { recursive: true });
  }

  /** A fresh relative path like `avatars/2026/11/<random>.webp`. */
  newPath(kind: string, ext: string, now = new Date()): string {
    const month = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
    return `${kind}/${month}/${randomSecret(18)}.${ext}`;
  }

  async write(path: string, data: Uint8Array | Buffer | Blob): Promise<void> {
    if (!isMediaPath(path)) throw new Error(`unsafe media path: ${path}`);
    if (!path.startsWith(SCRATCH)) return this.store.put(path, data);
    await Bun.write(this.prepare(path), data);
  }

  /** The local file of a fresh scratch path, its folder made: for a tool that writes the file itself. */
  prepare(path: string): string {
    const full = this.resolve(path);
    if (!full || !path.startsWith(SCRATCH)) throw new Error(`unsafe media path: ${path}`);
    mkdirSync(dirname(full), { recursive: true });
    return full;
  }

  /** Hands a scratch file a tool wrote to the store under a kept path. */
  keep(scratch: string, path: string): Promise<void> {
    const source = this.resolve(scratch);
    if (!source || !scratch.startsWith(SCRATCH) || !isMediaPath(path) || path.startsWith(SCRATCH)) throw new Error(`unsafe media path: ${scratch} -> ${path}`);
    return this.store.take(path, source);
  }

  /**
   * Removes a file, scratch or kept. Never throws: the row that named it is gone already, and a
   * store that fails now leaves an orphan in the bucket, logged, rather than an error for a
   * deletion that happened.
   */
  async remove(path: string | null | undefined): Promise<void> {
    if (!path || !isMediaPath(path)) return;
    if (path.startsWith(SCRATCH)) {
      try {
        unlinkSync(join(this.root, path));
      } catch {
        // already gone
      }
      return;
    }
    try {
      await this.store.delete(path);
    } catch (e) {
      log("warn", "a media file was not removed from the store", { path, error: String(e).split("\n")[0] });
    }
  }

  async removeAll(paths: Iterable<string | null | undefined>): Promise<void> {
    await Promise.all([...paths].map((p) => this.remove(p)));
  }

  url(path: string): string {
    return `${this.urlPrefix()}${path}`;
  }

  /** What the URL of every kept file starts with (the archive names files by what follows it). */
  urlPrefix(): string {
    return `${this.store.publicBase ?? `${this.publicBase}/system`}/`;
  }

  /** A kept file's size and stream (the archive export reads them), or null when it is not there. */
  open(path: string): Promise<KeptFile | null> {
    return isMediaPath(path) && !path.startsWith(SCRATCH) ? this.store.open(path) : Promise.resolve(null);
  }

  size(path: string): Promise<number | null> {
    return isMediaPath(path) ? this.store.size(path) : Promise.resolve(null);
  }

  /** What GET /system/<path> answers (null: no such path can exist; raw uploads are never served). */
  served(path: string): { file: string } | { redirect: string } | null {
    return isMediaPath(path) && !path.startsWith(SCRATCH) ? this.store.served(path) : null;
  }

  /** The local file of a scratch path (or a FileStore's), or null when the path could lead outside the media folder. */
  resolve(path: string): string | null {
    return isMediaPath(path) ? join(this.root, path) : null;
  }
}

/** The shape of every path the server gives its files: nothing else reaches the disk or the bucket. */
export function isMediaPath(path: string): boolean {
  return /^[a-z_]+\/\d{4}\/\d{2}\/[A-Za-z0-9_-]+\.[a-z0-9]{2,5}$/.test(path);
}

/** The store of the default set-up: files under DATA_DIR/media, served by Rookery itself. */
export class FileStore implements MediaStore {
  readonly kind = "files";

  constructor(readonly root: string) {}

  private full(key: string): string {
    if (!isMediaPath(key)) throw new Error(`unsafe media path: ${key}`);
    return join(this.root, key);
  }

  async put(key: string, data: Uint8Array | Blob): Promise<void> {
    const full = this.full(key);
    mkdirSync(dirname(full), { recursive: true });
    await Bun.write(full, data);
  }

  async take(key: string, localPath: string): Promise<void> {
    const full = this.full(key);
    mkdirSync(dirname(full), { recursive: true });
    renameSync(localPath, full);
  }

  async delete(key: string): Promise<void> {
    try {
      unlinkSync(this.full(key));
    } catch {
      // already gone
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      return statSync(this.full(key)).size;
    } catch {
      return null;
    }
  }

  async open(key: string): Promise<KeptFile | null> {
    const full = this.full(key);
    const size = await this.size(key);
    return size === null ? null : { size, body: () => createReadStream(full) as AsyncIterable<Uint8Array> };
  }

  readonly publicBase = null;

  served(key: string): { file: string } {
    return { file: this.full(key) };
  }
}
