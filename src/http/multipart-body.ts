import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomSecret } from "../auth/secrets.ts";
import { ApiError } from "../errors.ts";
import { MultipartError, MultipartParser, type MultipartEvent } from "./multipart.ts";

/** How many of a file's first bytes decide its limit (what sniff.ts reads). */
export const HEAD_BYTES = 64;
/** Rack's multipart limits: parts of any kind, and files among them. */
const MAX_PARTS = 4096;
const MAX_FILES = 128;
/** Body bytes read between two hints to the garbage collector (see readMultipart). */
const COLLECT_EVERY = 16 * 1024 * 1024;
let readSinceCollect = 0;

export interface MultipartLimits {
  /** The whole body, its framing included. */
  body: number;
  /** The text fields, all together: they are held in memory. */
  text: number;
  /** How large one file may grow, told from its first bytes (HEAD_BYTES, or the whole file when shorter). */
  file(head: Uint8Array): number;
}

const tooLarge = () => new ApiError(413, "Request body is too large");
const malformed = () => new ApiError(400, "Malformed multipart body");

/**
 * Where the files of multipart bodies are kept while their request runs: DATA_DIR/tmp/uploads.
 * What a killed process left there is removed when the server starts.
 */
export class UploadFolder {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, "tmp", "uploads");
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  newPath(): string {
    return join(this.dir, randomSecret(18));
  }
}

/** Removes a request's upload files: once it is answered, or when its body is refused. */
export function removeUploads(paths: string[] | undefined) {
  for (const path of paths ?? []) rmSync(path, { force: true });
}

/** The part being read: text collected in memory, or a file going to disk. */
interface Part {
  name: string | null;
  filename: string | null;
  contentType: string | null;
  size: number;
  text: Buffer[];
  /** A file's first bytes (views of the chunks they came in), held until there are enough to tell its limit. */
  head: Uint8Array[];
  limit: number | null;
  path: string | null;
  fd: number | null;
}

/**
 * A multipart/form-data body read as it arrives: text fields into memory under `limits.text`,
 * each file to its own file in `folder` under the limit its first bytes call for, the whole
 * under `limits.body`. Past any of them it is 413 at once, and the rest is never read. Every
 * file made is added to `kept` when it is opened: the caller removes them once it has answered;
 * on any failure here they are removed before the error is thrown.
 *
 * Memory stays flat only if the body is taken as fast as it comes: while this waits, Bun goes
 * on reading the socket into its own queue (tens of MB per request). So files are written
 * synchronously (a write to the page cache returns at once; awaited writes on the thread pool
 * let four concurrent uploads add 105-122 MB of RSS against 45-56 MB), and the collector is
 * hinted every 16 MB, or the chunks already written wait for it (34-39 MB then).
 */
export async function readMultipart(body: ReadableStream<Uint8Array>, boundary: string, limits: MultipartLimits, folder: UploadFolder, kept: string[]): Promise<[string, string | File][]> {
  const parser = new MultipartParser(boundary);
  const entries: [string, string | File][] = [];
  const made: string[] = [];
  const reader = body.getReader();
  let part: Part | null = null;
  let total = 0;
  let text = 0;
  let parts = 0;
  let files = 0;

  const write = (p: Part, bytes: Uint8Array) => {
    if (p.fd === null) {
      p.path = folder.newPath();
      made.push(p.path);
      kept.push(p.path);
      p.fd = openSync(p.path, "wx", 0o600);
    }
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(p.fd, bytes, offset, bytes.length - offset);
  };
  /** Tells the file's limit from its first bytes, checks it, and sends what was held to disk. */
  const settle = (p: Part) => {
    const held = Buffer.concat(p.head);
    p.head = [];
    p.limit = limits.file(held.subarray(0, HEAD_BYTES));
    if (p.size > p.limit) throw tooLarge();
    if (held.length > 0) write(p, held);
  };
  const handle = (event: MultipartEvent) => {
    if (event.type === "part") {
      if (++parts > MAX_PARTS || (event.filename !== null && ++files > MAX_FILES)) throw tooLarge();
      part = { name: event.name, filename: event.filename, contentType: event.contentType, size: 0, text: [], head: [], limit: null, path: null, fd: null };
      return;
    }
    const p = part as Part | null;
    // A part with no name is no parameter: its bytes count towards the body, and go nowhere.
    if (!p || p.name === null) {
      if (event.type === "end") part = null;
      return;
    }
    if (event.type === "data") {
      p.size += event.bytes.length;
      if (p.filename === null) {
        text += event.bytes.length;
        if (text > limits.text) throw tooLarge();
        p.text.push(Buffer.from(event.bytes));
      } else if (p.limit === null) {
        p.head.push(event.bytes);
        if (p.size >= HEAD_BYTES) settle(p);
      } else {
        if (p.size > p.limit) throw tooLarge();
        write(p, event.bytes);
      }
      return;
    }
    part = null;
    if (p.filename === null) {
      entries.push([p.name, Buffer.concat(p.text).toString("utf8")]);
      return;
    }
    if (p.limit === null) settle(p);
    if (p.fd !== null) closeSync(p.fd);
    p.fd = null;
    const options = p.contentType ? { type: p.contentType } : {};
    // A file on disk, read only when the route reads it (Bun keeps it as a path, not bytes).
    entries.push([p.name, p.path ? new File([Bun.file(p.path)], p.filename, options) : new File([], p.filename, options)]);
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limits.body) throw tooLarge();
      readSinceCollect += value.byteLength;
      if (readSinceCollect > COLLECT_EVERY) {
        readSinceCollect = 0;
        Bun.gc(false);
      }
      // Past the closing boundary nothing comes out (an epilogue is read and dropped, under the cap).
      for (const event of parser.push(value)) handle(event);
    }
    parser.end();
  } catch (e) {
    // The rest of the body is not read: Bun drops it with the connection.
    reader.cancel().catch(() => {});
    const current = part as Part | null;
    if (current?.fd != null) closeSync(current.fd);
    removeUploads(made);
    if (e instanceof MultipartError) throw malformed();
    throw e;
  }
  return entries;
}
