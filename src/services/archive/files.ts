import { open } from "node:fs/promises";
import { readTarGz } from "./tar.ts";
import { ArchiveFormatError, type Bytes } from "./streams.ts";
import { ZipReader } from "./zip.ts";

/** The files of an archive to import, zip or tar.gz, told apart by their first bytes. */
export interface ArchiveFiles {
  /** Visits the files `wanted` accepts (by their names, as normalized), in the order they are stored. */
  scan(wanted: (name: string) => boolean, visit: (name: string, size: number, body: Bytes) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** `./outbox.json` and `/outbox.json` (archives made by hand) are `outbox.json`. */
export function normalizeName(name: string): string {
  return name.replace(/^(\.?\/)+/, "");
}

export async function openArchive(path: string): Promise<ArchiveFiles> {
  const handle = await open(path, "r").catch((e: NodeJS.ErrnoException) => {
    throw new ArchiveFormatError(e.code === "ENOENT" ? `${path} does not exist` : `${path} cannot be read (${e.code ?? e.message})`);
  });
  const head = Buffer.alloc(4);
  try {
    await handle.read(head, 0, 4, 0);
  } finally {
    await handle.close();
  }
  if (head[0] === 0x1f && head[1] === 0x8b) {
    return {
      scan: (wanted, visit) => readTarGz(path, async (name, size, body) => (wanted(normalizeName(name)) ? visit(normalizeName(name), size, body) : undefined)),
      close: async () => {},
    };
  }
  if (head.readUInt32LE(0) === 0x04034b50 || head.readUInt32LE(0) === 0x06054b50) {
    const zip = await ZipReader.open(path);
    return {
      async scan(wanted, visit) {
        for (const entry of zip.entries) {
          const name = normalizeName(entry.name);
          if (!name.endsWith("/") && wanted(name)) await visit(name, entry.size, zip.body(entry));
        }
      },
      close: () => zip.close(),
    };
  }
  throw new ArchiveFormatError("not a zip or tar.gz archive");
}
