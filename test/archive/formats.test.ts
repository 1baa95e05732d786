import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openArchive } from "../../src/services/archive/files.ts";
import { collect, single, utf8 } from "../../src/services/archive/streams.ts";
import { tarGzStream } from "../../src/services/archive/tar.ts";
import { zipStream, type ArchiveEntry } from "../../src/services/archive/zip.ts";

// The archive formats on their own: what the writers make, the readers (and the system's
// tools) read back, past the limits of plain zip and ustar; damaged archives are refused.

const work = mkdtempSync(join(tmpdir(), "rookery-archive-formats-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function write(path: string, chunks: AsyncIterable<Uint8Array>) {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  writeFileSync(path, Buffer.concat(parts));
}

async function readAll(path: string) {
  const archive = await openArchive(path);
  const files: [string, string][] = [];
  try {
    await archive.scan(() => true, async (name, _size, body) => void files.push([name, new TextDecoder().decode(await collect(body, 1e8, name))]));
  } finally {
    await archive.close();
  }
  return files;
}

const date = new Date(Date.UTC(2024, 4, 6, 7, 8, 10));
const LONG = `media_attachments/${"a".repeat(140)}/${"b".repeat(80)}/${"c".repeat(120)}.png`;

describe("zip and tar.gz", () => {
  test("more entries than plain zip counts (ZIP64), names longer than ustar holds (PAX), empty ones: all read back", async () => {
    const entries = function* (): Generator<ArchiveEntry> {
      yield { name: "outbox.json", body: () => utf8(['{"orderedItems":', "[]}"]), date };
      yield { name: LONG, body: () => single(new TextEncoder().encode("long")), size: 4, date };
      yield { name: "empty.json", body: () => utf8([]), date };
      for (let i = 0; i < 66_000; i++) yield { name: `n/${i}`, body: () => single(new TextEncoder().encode(String(i))), size: String(i).length, date };
    };
    await write(join(work, "many.zip"), zipStream(entries()));
    const zip = await readAll(join(work, "many.zip"));
    expect(zip).toHaveLength(66_003);
    expect(zip.slice(0, 3)).toEqual([["outbox.json", '{"orderedItems":[]}'], [LONG, "long"], ["empty.json", ""]]);
    expect(zip[66_002]).toEqual(["n/65999", "65999"]);
    // The end of central directory says 0xFFFF entries; the ZIP64 record says how many.
    const bytes = readFileSync(join(work, "many.zip"));
    expect(bytes.readUInt16LE(bytes.length - 22 + 10)).toBe(0xffff);

    const few = function* (): Generator<ArchiveEntry> {
      yield* [...entries()].slice(0, 5);
    };
    await write(join(work, "few.tar.gz"), tarGzStream(few()));
    expect(await readAll(join(work, "few.tar.gz"))).toEqual([["outbox.json", '{"orderedItems":[]}'], [LONG, "long"], ["empty.json", ""], ["n/0", "0"], ["n/1", "1"]]);
    const tar = Bun.spawnSync(["tar", "-tzf", join(work, "few.tar.gz")]);
    expect(tar.stdout.toString().split("\n").filter(Boolean)).toEqual(["outbox.json", LONG, "empty.json", "n/0", "n/1"]);
  });

  test("damaged or truncated archives are refused with what is wrong", async () => {
    const entries = (): ArchiveEntry[] => [{ name: "outbox.json", body: () => utf8([JSON.stringify({ orderedItems: Array.from({ length: 200 }, (_, i) => `item ${i}`) })]), date }];
    await write(join(work, "good.zip"), zipStream(entries()));
    await write(join(work, "good.tar.gz"), tarGzStream(entries()));
    const good = readFileSync(join(work, "good.zip"));
    const flipped = Buffer.from(good);
    flipped[60] = flipped[60]! ^ 0xff;
    writeFileSync(join(work, "flipped.zip"), flipped);
    writeFileSync(join(work, "cut.zip"), good.subarray(0, good.length - 30));
    const tgz = readFileSync(join(work, "good.tar.gz"));
    writeFileSync(join(work, "cut.tar.gz"), tgz.subarray(0, Math.floor(tgz.length / 2)));
    writeFileSync(join(work, "empty.bin"), "");
    for (const [file, message] of [
      ["flipped.zip", /damaged|invalid|incorrect/i],
      ["cut.zip", /no end of central directory|not a zip/],
      ["cut.tar.gz", /end|unexpected/i],
      ["empty.bin", /not a zip or tar.gz archive/],
    ] as const) {
      const error = await readAll(join(work, file)).then(
        () => null,
        (e: Error) => e,
      );
      expect(error).not.toBeNull();
      expect(error!.message).toMatch(message);
    }
  });
});
