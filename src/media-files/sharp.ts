import { dlopen } from "bun:ffi";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type SharpType from "sharp";
// The shared library sharp's addon links against. Under `bun run` this is its path in
// node_modules; inside the compiled executable it is an embedded file (see scripts/build.ts).
// The name carries libvips' version: sharp is pinned to an exact version in package.json.
import libvipsFile from "../../node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.8.18.7" with { type: "file" };
import { setting } from "../settings.ts";

// Decompression bombs: refuse inputs beyond this many pixels before decoding them.
export const MAX_INPUT_PIXELS = 100_000_000;

let loaded: typeof SharpType | null = null;
/** Held for the life of the process: the addon resolves libvips' symbols through it. */
let libvips: ReturnType<typeof dlopen> | null = null;

/** sharp could not be loaded at all: a fault of the installation, never of an upload. */
export class SharpUnavailable extends Error {}

/**
 * Inside the compiled executable, the addon finds libvips by soname, which nothing on the
 * system provides: the embedded copy is written to a fresh private folder (an attacker
 * cannot plant a library there), loaded, and deleted; the process keeps it mapped.
 */
function preloadEmbeddedLibvips() {
  if (!libvipsFile.startsWith("/$bunfs/") && !libvipsFile.startsWith("B:/~BUN/")) return;
  const bytes = readFileSync(libvipsFile);
  const candidates = [setting("TMPDIR"), tmpdir(), join(setting("DATA_DIR") ?? "data")].filter((d): d is string => !!d);
  const errors: string[] = [];
  for (const base of candidates) {
    let dir: string | null = null;
    try {
      dir = mkdtempSync(join(base, "rookery-libvips-"));
      const path = join(dir, "libvips-cpp.so.8.18.7");
      writeFileSync(path, bytes, { mode: 0o500 });
      // bun:ffi wants one symbol to bind; libvips' version call is harmless.
      libvips = dlopen(path, { vips_version: { args: ["i32"], returns: "i32" } });
      return;
    } catch (e) {
      // A folder mounted noexec refuses the load: try the next one.
      errors.push(`${base}: ${String(e)}`);
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }
  throw new SharpUnavailable(`could not load the embedded libvips (set TMPDIR to a folder that allows executables): ${errors.join("; ")}`);
}

/** sharp, loaded on first use: start-up does not pay for libvips until an image arrives. */
function load(): typeof SharpType {
  if (!loaded) {
    if (!libvips) preloadEmbeddedLibvips();
    // sharp's CommonJS entry requires its native addon statically, which lets
    // `bun build --compile` embed it (the ESM entry loads it at run time, out of sight).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require("sharp") as typeof SharpType;
    // The operation cache only helps repeated work on one file, which uploads never are.
    loaded.cache(false);
    loaded.concurrency(1);
  }
  return loaded;
}

const sharp = ((...args: Parameters<typeof SharpType>) => load()(...args)) as typeof SharpType;

export default sharp;
