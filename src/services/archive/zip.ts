import { open, type FileHandle } from "node:fs/promises";
import { createReadStream } from "node:fs";
import { crc32, createDeflateRaw, createInflateRaw } from "node:zlib";
import { ArchiveFormatError, through, type Bytes } from "./streams.ts";

// Zip, as Mastodon's archives are (rubyzip): written as a stream and read from the central
// directory. Written here over node:zlib rather than with an npm library (yazl and yauzl are
// the well-kept ones): an archive needs only deflated and stored entries, data descriptors and
// ZIP64, a few hundred lines, and the single executable takes no dependency for them.

/** One file of an archive being written. */
export interface ArchiveEntry {
  name: string;
  /** Its bytes (called again when the size is known: once to checksum, once to write). */
  body: () => Bytes;
  /**
   * Known ahead (a file on disk): stored as it is, its checksum taken first, so that the local
   * header is complete (media are compressed already). Unknown (JSON made as it is written):
   * deflated, with a data descriptor after it.
   */
  size?: number;
  date: Date;
}

const MAX32 = 0xffffffff;
const MAX16 = 0xffff;

function dosDateTime(date: Date): { time: number; date: number } {
  const year = Math.max(1980, date.getUTCFullYear());
  return {
    time: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | (date.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

interface Written {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
  method: number;
  flags: number;
  time: number;
  date: number;
}

/** A zip of `entries`, as chunks; ZIP64 records where sizes, offsets or the count need them. */
export async function* zipStream(entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>): AsyncGenerator<Uint8Array> {
  const written: Written[] = [];
  let offset = 0;
  for await (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    const dos = dosDateTime(entry.date);
    const stored = entry.size !== undefined;
    // Bit 11: the name is UTF-8; bit 3: sizes and checksum follow the data.
    const flags = stored ? 0x0800 : 0x0808;
    const method = stored ? 0 : 8;
    let crc = 0;
    if (stored) for await (const chunk of entry.body()) crc = crc32(chunk, crc);
    const size = entry.size ?? 0;
    const big = stored && size >= MAX32;
    const extra = big ? zip64Extra([size, size]) : Buffer.alloc(0);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(big ? 45 : 20, 4);
    header.writeUInt16LE(flags, 6);
    header.writeUInt16LE(method, 8);
    header.writeUInt16LE(dos.time, 10);
    header.writeUInt16LE(dos.date, 12);
    header.writeUInt32LE(crc >>> 0, 14);
    header.writeUInt32LE(big ? MAX32 : size, 18);
    header.writeUInt32LE(big ? MAX32 : size, 22);
    header.writeUInt16LE(name.length, 26);
    header.writeUInt16LE(extra.length, 28);
    yield Buffer.concat([header, name, extra]);
    let compressed = 0;
    let length = 0;
    if (stored) {
      for await (const chunk of entry.body()) {
        length += chunk.length;
        yield chunk;
      }
      if (length !== size) throw new Error(`${entry.name} changed while it was written (${length} bytes, not ${size})`);
      compressed = size;
    } else {
      async function* counted(): AsyncGenerator<Uint8Array> {
        for await (const chunk of entry.body()) {
          crc = crc32(chunk, crc);
          length += chunk.length;
          yield chunk;
        }
      }
      for await (const chunk of through(counted(), createDeflateRaw())) {
        compressed += chunk.length;
        yield chunk;
      }
      // The JSON documents are far below 4 GB; one that is not would need ZIP64 sizes here.
      if (length >= MAX32 || compressed >= MAX32) throw new Error(`${entry.name} is too large for a zip entry without ZIP64`);
      const descriptor = Buffer.alloc(16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc >>> 0, 4);
      descriptor.writeUInt32LE(compressed, 8);
      descriptor.writeUInt32LE(length, 12);
      yield descriptor;
    }
    written.push({ name, crc: crc >>> 0, compressed, size: length, offset, method, flags, time: dos.time, date: dos.date });
    offset += 30 + name.length + extra.length + compressed + (stored ? 0 : 16);
  }
  const directoryStart = offset;
  for (const w of written) {
    const wide = [w.size >= MAX32 ? w.size : null, w.compressed >= MAX32 ? w.compressed : null, w.offset >= MAX32 ? w.offset : null].filter((v): v is number => v !== null);
    const extra = wide.length > 0 ? zip64Extra(wide) : Buffer.alloc(0);
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE((3 << 8) | 45, 4); // made by: Unix, 4.5
    record.writeUInt16LE(wide.length > 0 ? 45 : 20, 6);
    record.writeUInt16LE(w.flags, 8);
    record.writeUInt16LE(w.method, 10);
    record.writeUInt16LE(w.time, 12);
    record.writeUInt16LE(w.date, 14);
    record.writeUInt32LE(w.crc, 16);
    record.writeUInt32LE(Math.min(w.compressed, MAX32), 20);
    record.writeUInt32LE(Math.min(w.size, MAX32), 24);
    record.writeUInt16LE(w.name.length, 28);
    record.writeUInt16LE(extra.length, 30);
    record.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    record.writeUInt32LE(Math.min(w.offset, MAX32), 42);
    const bytes = Buffer.concat([record, w.name, extra]);
    offset += bytes.length;
    yield bytes;
  }
  const directorySize = offset - directoryStart;
  const needs64 = written.length >= MAX16 || directoryStart >= MAX32 || directorySize >= MAX32;
  if (needs64) {
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeUInt16LE(45, 12);
    record.writeUInt16LE(45, 14);
    record.writeBigUInt64LE(BigInt(written.length), 24);
    record.writeBigUInt64LE(BigInt(written.length), 32);
    record.writeBigUInt64LE(BigInt(directorySize), 40);
    record.writeBigUInt64LE(BigInt(directoryStart), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(offset), 8);
    locator.writeUInt32LE(1, 16);
    yield Buffer.concat([record, locator]);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(written.length, MAX16), 8);
  end.writeUInt16LE(Math.min(written.length, MAX16), 10);
  end.writeUInt32LE(Math.min(directorySize, MAX32), 12);
  end.writeUInt32LE(Math.min(directoryStart, MAX32), 16);
  yield end;
}

function zip64Extra(values: number[]): Buffer {
  const extra = Buffer.alloc(4 + 8 * values.length);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(8 * values.length, 2);
  values.forEach((v, i) => extra.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
  return extra;
}

/** An entry of a zip being read, as its central directory lists it. */
export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** A zip on disk, read from its central directory (so entries are found wherever they are). */
export class ZipReader {
  private constructor(
    private path: string,
    private file: FileHandle,
    readonly entries: ZipEntry[],
  ) {}

  static async open(path: string): Promise<ZipReader> {
    const file = await open(path, "r");
    try {
      return new ZipReader(path, file, await readDirectory(file));
    } catch (e) {
      await file.close();
      throw e;
    }
  }

  /** An entry's bytes, inflated, its checksum checked at the end. */
  async *body(entry: ZipEntry): AsyncGenerator<Uint8Array> {
    if (entry.flags & 0x0001) throw new ArchiveFormatError(`${entry.name} is encrypted`);
    if (entry.method !== 0 && entry.method !== 8) throw new ArchiveFormatError(`${entry.name} is compressed with method ${entry.method}; only deflate is read`);
    const local = await readAt(this.file, entry.offset, 30);
    if (local.readUInt32LE(0) !== 0x04034b50) throw new ArchiveFormatError(`${entry.name}: no local header where the directory says`);
    const start = entry.offset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    const raw = entry.compressed === 0 ? emptyBytes() : (createReadStream(this.path, { start, end: start + entry.compressed - 1 }) as AsyncIterable<Uint8Array>);
    const bytes = entry.method === 8 ? through(raw, createInflateRaw()) : raw;
    let crc = 0;
    let length = 0;
    for await (const chunk of bytes) {
      crc = crc32(chunk, crc);
      length += chunk.length;
      yield chunk;
    }
    if (length !== entry.size || crc >>> 0 !== entry.crc) throw new ArchiveFormatError(`${entry.name} is damaged (its checksum or size does not match)`);
  }

  async close() {
    await this.file.close();
  }
}

async function* emptyBytes(): AsyncGenerator<Uint8Array> {}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead < length) throw new ArchiveFormatError("the zip ends too soon");
  return buffer;
}

async function readDirectory(file: FileHandle): Promise<ZipEntry[]> {
  const { size } = await file.stat();
  // The end record is 22 bytes, followed by a comment of at most 64 KB.
  const tailLength = Math.min(size, 22 + MAX16);
  if (tailLength < 22) throw new ArchiveFormatError("not a zip archive");
  const tail = await readAt(file, size - tailLength, tailLength);
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === 0x06054b50) {
      at = i;
      break;
    }
  }
  if (at < 0) throw new ArchiveFormatError("not a zip archive (no end of central directory)");
  let count = tail.readUInt16LE(at + 10);
  let directorySize = tail.readUInt32LE(at + 12);
  let directoryStart = tail.readUInt32LE(at + 16);
  if (count === MAX16 || directorySize === MAX32 || directoryStart === MAX32) {
    const locatorAt = size - tailLength + at - 20;
    const locator = locatorAt >= 0 ? await readAt(file, locatorAt, 20) : null;
    if (!locator || locator.readUInt32LE(0) !== 0x07064b50) throw new ArchiveFormatError("a ZIP64 archive without its locator");
    const record = await readAt(file, Number(locator.readBigUInt64LE(8)), 56);
    if (record.readUInt32LE(0) !== 0x06064b50) throw new ArchiveFormatError("a ZIP64 archive without its end record");
    count = Number(record.readBigUInt64LE(32));
    directorySize = Number(record.readBigUInt64LE(40));
    directoryStart = Number(record.readBigUInt64LE(48));
  }
  if (directoryStart + directorySize > size) throw new ArchiveFormatError("the zip's directory lies past its end");
  const directory = await readAt(file, directoryStart, directorySize);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > directory.length || directory.readUInt32LE(p) !== 0x02014b50) throw new ArchiveFormatError("the zip's directory is damaged");
    const nameLength = directory.readUInt16LE(p + 28);
    const extraLength = directory.readUInt16LE(p + 30);
    const commentLength = directory.readUInt16LE(p + 32);
    const entry: ZipEntry = {
      flags: directory.readUInt16LE(p + 8),
      method: directory.readUInt16LE(p + 10),
      crc: directory.readUInt32LE(p + 16),
      compressed: directory.readUInt32LE(p + 20),
      size: directory.readUInt32LE(p + 24),
      offset: directory.readUInt32LE(p + 42),
      name: directory.toString("utf8", p + 46, p + 46 + nameLength),
    };
    // ZIP64 sizes and offset, in that order, for those the record left at their maximum.
    let e = p + 46 + nameLength;
    const extraEnd = e + extraLength;
    while (e + 4 <= extraEnd) {
      const id = directory.readUInt16LE(e);
      const length = directory.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let v = e + 4;
        for (const key of ["size", "compressed", "offset"] as const) {
          if (entry[key] === MAX32 && v + 8 <= e + 4 + length) {
            entry[key] = Number(directory.readBigUInt64LE(v));
            v += 8;
          }
        }
      }
      e += 4 + length;
    }
    entries.push(entry);
    p = extraEnd + commentLength;
  }
  return entries;
}
