import { once } from "node:events";
import type { Transform } from "node:stream";

// Byte streams as async iterables of chunks: what the archive writers yield and the readers
// take. Pull-based, so a slow consumer (a client downloading an archive) holds the producer
// back instead of letting it fill memory.

export type Bytes = AsyncIterable<Uint8Array>;

/**
 * `source` through a zlib transform (deflate, gzip, inflate, gunzip): the input is fed while
 * the output is read, each side waiting on the other, so neither is ever held whole.
 */
export async function* through(source: Bytes, transform: Transform): AsyncGenerator<Uint8Array> {
  let failed: unknown = null;
  const feeding = (async () => {
    try {
      for await (const chunk of source) {
        if (!transform.write(chunk)) await once(transform, "drain");
      }
      transform.end();
    } catch (e) {
      failed = e;
      transform.destroy(e instanceof Error ? e : new Error(String(e)));
    }
  })();
  try {
    for await (const chunk of transform) yield chunk as Uint8Array;
  } catch (e) {
    throw failed ?? e;
  } finally {
    transform.destroy();
    await feeding;
  }
  if (failed) throw failed;
}

/** One chunk as a stream. */
export async function* single(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** Strings as UTF-8 chunks. */
export async function* utf8(parts: AsyncIterable<string> | Iterable<string>): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for await (const part of parts) if (part !== "") yield encoder.encode(part);
}

/** The whole of a stream, refused past `maxBytes` (an archive's entry may claim any size). */
export async function collect(source: Bytes, maxBytes: number, what: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > maxBytes) throw new ArchiveFormatError(`${what} is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** An archive that is not one, or not one Rookery can read: told to the person as it is. */
export class ArchiveFormatError extends Error {}
