import { createReadStream, statSync, unlinkSync } from "node:fs";
import { S3Client } from "bun";
import { ApiError } from "../errors.ts";
import { log } from "../log.ts";
import { isMediaPath, type KeptFile, type MediaStore } from "./storage.ts";

export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The public base URL of the bucket or its CDN (S3_ALIAS_HOST), or null: served through presigned redirects. */
  aliasUrl: string | null;
}

/** Above this a file is sent in parts, read from the disk as it goes (Mastodon's S3_MULTIPART_THRESHOLD is 15 MB too). */
export const MULTIPART_THRESHOLD = 15 * 1024 * 1024;
const PART_SIZE = 5 * 1024 * 1024;
/** How long a redirect to a private bucket stays good: long enough for a player to fetch a video in ranges. */
const PRESIGNED_SECONDS = 3600;

/** Content types of the kept files by their extension: a CDN serves them from the bucket as they were put. */
export const MEDIA_TYPES: Record<string, string> = {
  webp: "image/webp",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  avif: "image/avif",
  mp4: "video/mp4",
  mp3: "audio/mpeg",
  bin: "application/octet-stream",
};

/** Mastodon answers a storage that cannot be reached (Seahorse::Client::NetworkingError) with this 503. */
export class StorageUnavailable extends ApiError {
  constructor() {
    super(503, "There was a temporary problem serving your request, please try again");
  }
}

/** Error codes of Bun's S3 client for a store that could not be reached at all (not an S3 answer). */
const UNREACHABLE = new Set(["ConnectionRefused", "ConnectionClosed", "ConnectionTimedOut", "ConnectionReset", "Timeout", "TimedOut", "FailedToOpenSocket", "UnableToConnect", "DNSError"]);

function unreachable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" && (UNREACHABLE.has(code) || /^E[A-Z]+$/.test(code));
}

/**
 * Media in an S3-compatible bucket, through Bun's built-in client (SigV4, multipart). A write
 * the store refuses is an error (500, as Mastodon's unrescued S3 errors are); one that cannot
 * reach it is a 503 the client may retry. Either way the caller removes what it wrote and
 * stores no row.
 */
export class S3Store implements MediaStore {
  readonly kind = "s3";
  readonly client: S3Client;

  constructor(readonly settings: S3Settings) {
    this.client = new S3Client({ endpoint: settings.endpoint, bucket: settings.bucket, region: settings.region, accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey });
  }

  private key(key: string): string {
    if (!isMediaPath(key)) throw new Error(`unsafe media path: ${key}`);
    return key;
  }

  private failed(action: string, key: string, e: unknown): never {
    log("warn", `media store: ${action} failed`, { key, code: String((e as { code?: unknown }).code ?? ""), error: String(e).split("\n")[0] });
    if (unreachable(e)) throw new StorageUnavailable();
    throw e;
  }

  private type(key: string): string {
    return MEDIA_TYPES[key.slice(key.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  }

  async put(key: string, data: Uint8Array | Blob): Promise<void> {
    try {
      await this.client.write(this.key(key), data, { type: this.type(key) });
    } catch (e) {
      this.failed("put", key, e);
    }
  }

  async take(key: string, localPath: string): Promise<void> {
    try {
      await this.upload(this.key(key), localPath);
    } catch (e) {
      this.failed("upload", key, e);
    } finally {
      try {
        unlinkSync(localPath);
      } catch {
        // already gone
      }
    }
  }

  /** Sends a local file: whole when small, else in parts streamed from the disk (at most a few parts in memory). */
  async upload(key: string, localPath: string): Promise<void> {
    const size = statSync(localPath).size;
    if (size <= MULTIPART_THRESHOLD) {
      await this.client.write(key, Bun.file(localPath), { type: this.type(key) });
      return;
    }
    const writer = this.client.file(key).writer({ partSize: PART_SIZE, queueSize: 2, type: this.type(key) });
    for await (const chunk of createReadStream(localPath, { highWaterMark: 1024 * 1024 })) await writer.write(chunk as Buffer);
    await writer.end();
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.delete(this.key(key));
    } catch (e) {
      this.failed("delete", key, e);
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await this.client.stat(this.key(key))).size;
    } catch (e) {
      if ((e as { code?: unknown }).code === "NoSuchKey") return null;
      this.failed("stat", key, e);
    }
  }

  async open(key: string): Promise<KeptFile | null> {
    const size = await this.size(key);
    if (size === null) return null;
    const file = this.client.file(key);
    return { size, body: () => file.stream() as unknown as AsyncIterable<Uint8Array> };
  }

  get publicBase(): string | null {
    return this.settings.aliasUrl;
  }

  served(key: string): { redirect: string } {
    const base = this.settings.aliasUrl;
    return { redirect: base === null ? this.client.presign(this.key(key), { expiresIn: PRESIGNED_SECONDS }) : `${base}/${this.key(key)}` };
  }
}
