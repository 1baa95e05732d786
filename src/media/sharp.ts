import type SharpType from "sharp";

/**
 * sharp through its CommonJS entry: that build requires its native addon statically, which
 * lets `bun build --compile` embed it (the ESM entry loads it at run time and cannot be
 * followed). See docs of scripts/build.ts for the libvips part.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sharp: typeof SharpType = require("sharp");

// Decompression bombs: refuse inputs beyond this many pixels before decoding them.
export const MAX_INPUT_PIXELS = 100_000_000;
// The operation cache only helps repeated work on one file, which uploads never are.
sharp.cache(false);
sharp.concurrency(1);

export default sharp;
