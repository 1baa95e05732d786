import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGunzip, createGzip } from "node:zlib";
import { ArchiveFormatError, through, type Bytes } from "./streams.ts";
import type { ArchiveEntry } from "./zip.ts";

// tar.gz, as Mastodon wrote archives before 4.2 (Gem::Package::TarWriter in a GzipWriter), and
// as an operator may prefer: ustar headers (PAX for longer names), read and written as streams.

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: Buffer, size: number, date: Date, type: string): Buffer {
  const block = Buffer.alloc(BLOCK);
  let prefix: Buffer = Buffer.alloc(0);
  let short: Buffer = name;
  if (name.length > 100) {
    // ustar's prefix holds the folders of a longer path; the caller makes sure one fits.
    const cut = name.lastIndexOf(0x2f, 155);
    prefix = name.subarray(0, cut);
    short = name.subarray(cut + 1);
  }
  short.copy(block, 0);
  block.write(octal(0o644, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  if (size < 8 ** 11) block.write(octal(size, 12), 124, "ascii");
  else {
    // Past 8 GB: base-256, as GNU tar and libarchive read it.
    block[124] = 0x80;
    block.writeBigUInt64BE(BigInt(size), 128);
  }
  block.write(octal(Math.floor(date.getTime() / 1000), 12), 136, "ascii");
  block.write("        ", 148, "ascii");
  block.write(type, 156, "ascii");
  block.write("ustar\0" + "00", 257, "ascii");
  prefix.copy(block, 345);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + " ", 148, "ascii");
  return block;
}

/** Whether ustar's name and prefix fields can hold `name`, split at a slash. */
function fitsUstar(name: Buffer): boolean {
  if (name.length <= 100) return true;
  const cut = name.lastIndexOf(0x2f, 155);
  return cut > 0 && name.length - cut - 1 <= 100;
}

function paxRecord(key: string, value: string): Buffer {
  // "<length> key=value\n", the length counting its own digits.
  const body = Buffer.byteLength(` ${key}=${value}\n`);
  let length = body + 1;
  while (String(length).length + body !== length) length = String(length).length + body;
  return Buffer.from(`${length} ${key}=${value}\n`, "utf8");
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/**
 * A tar.gz of `entries`, as chunks. A tar header states the size before the data: an entry
 * made as it is written (JSON) is first spooled to a temporary file, never held in memory.
 */
export async function* tarGzStream(entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>): AsyncGenerator<Uint8Array> {
  yield* through(tarStream(entries), createGzip());
}

async function* tarStream(entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>): AsyncGenerator<Uint8Array> {
  const spool = await mkdtemp(join(tmpdir(), "rookery-archive-"));
  try {
    for await (const entry of entries) {
      let size = entry.size;
      let body = entry.body;
      if (size === undefined) {
        const path = join(spool, "entry");
        const out = createWriteStream(path);
        for await (const chunk of entry.body()) if (!out.write(chunk)) await once(out, "drain");
        out.end();
        await once(out, "close");
        size = (await stat(path)).size;
        body = () => createReadStream(path) as AsyncIterable<Uint8Array>;
      }
      const name = Buffer.from(entry.name, "utf8");
      if (!fitsUstar(name)) {
        const pax = paxRecord("path", entry.name);
        yield header(Buffer.from("PaxHeader"), pax.length, entry.date, "x");
        yield pax;
        yield padding(pax.length);
      }
      yield header(fitsUstar(name) ? name : name.subarray(0, 100), size, entry.date, "0");
      let length = 0;
      for await (const chunk of body()) {
        length += chunk.length;
        yield chunk;
      }
      if (length !== size) throw new Error(`${entry.name} changed while it was written (${length} bytes, not ${size})`);
      yield padding(size);
    }
    yield Buffer.alloc(2 * BLOCK);
  } finally {
    await rm(spool, { recursive: true, force: true });
  }
}

/** Reads exact lengths off a stream of chunks. */
class ChunkReader {
  private buffer: Buffer = Buffer.alloc(0);
  private iterator: AsyncIterator<Uint8Array>;
  private done = false;

  constructor(source: Bytes) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  private async fill(n: number): Promise<boolean> {
    while (this.buffer.length < n && !this.done) {
      const next = await this.iterator.next();
      if (next.done) this.done = true;
      else this.buffer = this.buffer.length === 0 ? Buffer.from(next.value) : Buffer.concat([this.buffer, next.value]);
    }
    return this.buffer.length >= n;
  }

  /** Exactly `n` bytes, or null at the end of the stream. */
  async read(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) return null;
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }

  /** The next `n` bytes as chunks, without holding them together. */
  async *take(n: number): AsyncGenerator<Uint8Array> {
    let left = n;
    while (left > 0) {
      if (this.buffer.length === 0 && !(await this.fill(1))) throw new ArchiveFormatError("the tar ends in the middle of a file");
      const part = this.buffer.subarray(0, Math.min(left, this.buffer.length));
      this.buffer = this.buffer.subarray(part.length);
      left -= part.length;
      yield part;
    }
  }

  async close() {
    await this.iterator.return?.();
  }
}

function field(block: Buffer, start: number, length: number): string {
  const end = block.indexOf(0, start);
  return block.toString("utf8", start, end >= 0 && end < start + length ? end : start + length);
}

function sizeOf(block: Buffer): number {
  if (block[124]! & 0x80) return Number(block.readBigUInt64BE(128));
  const text = field(block, 124, 12).trim();
  if (!/^[0-7]*$/.test(text)) throw new ArchiveFormatError("not a tar archive (a header's size is no number)");
  return text === "" ? 0 : parseInt(text, 8);
}

function paxValues(data: Buffer): Map<string, string> {
  const values = new Map<string, string>();
  let p = 0;
  while (p < data.length) {
    const space = data.indexOf(0x20, p);
    const length = Number(data.toString("ascii", p, space));
    if (space < 0 || !Number.isSafeInteger(length) || length <= 0) break;
    const record = data.toString("utf8", space + 1, p + length - 1);
    const eq = record.indexOf("=");
    if (eq > 0) values.set(record.slice(0, eq), record.slice(eq + 1));
    p += length;
  }
  return values;
}

/**
 * The regular files of a tar.gz on disk, in the order they are stored. `visit` reads the
 * body it is given or not; what it leaves is skipped.
 */
export async function readTarGz(path: string, visit: (name: string, size: number, body: Bytes) => Promise<void>): Promise<void> {
  const reader = new ChunkReader(through(createReadStream(path) as AsyncIterable<Uint8Array>, createGunzip()));
  try {
    let longName: string | null = null;
    for (;;) {
      const block = await reader.read(BLOCK);
      if (!block || block.every((b) => b === 0)) return;
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
      if (parseInt(field(block, 148, 8).trim(), 8) !== sum) throw new ArchiveFormatError("not a tar archive (a header's checksum does not match)");
      const size = sizeOf(block);
      const type = String.fromCharCode(block[156]!);
      const padded = size + ((BLOCK - (size % BLOCK)) % BLOCK);
      if (type === "x" || type === "L") {
        if (size > 1024 * 1024) throw new ArchiveFormatError("a tar extended header is too large");
        const data = (await reader.read(padded)) ?? Buffer.alloc(0);
        longName = type === "x" ? (paxValues(data.subarray(0, size)).get("path") ?? null) : field(data, 0, size);
        continue;
      }
      const prefix = field(block, 345, 155);
      const name = longName ?? (prefix ? `${prefix}/${field(block, 0, 100)}` : field(block, 0, 100));
      longName = null;
      if (type === "0" || type === "\0") {
        let consumed = 0;
        const body = async function* () {
          for await (const chunk of reader.take(size)) {
            consumed += chunk.length;
            yield chunk;
          }
        };
        await visit(name, size, body());
        for await (const _ of reader.take(size - consumed)) void _;
        for await (const _ of reader.take(padded - size)) void _;
      } else {
        for await (const _ of reader.take(padded)) void _;
      }
    }
  } finally {
    await reader.close();
  }
}
