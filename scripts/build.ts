/**
 * `bun run build`: one executable, dist/rookery, with everything inside it: the code,
 * migrations (read at build time by a macro), the default avatar and header, sharp's
 * native addon and the libvips library it needs (written to a private temporary folder
 * and loaded on the first image; see src/media-files/sharp.ts), and ffmpeg and ffprobe from their npm
 * packages, compressed with zstd (45 MB instead of 147) and unpacked under DATA_DIR/tools on first
 * start (src/media-files/ffmpeg.ts).
 *
 *   bun scripts/build.ts [--outfile dist/rookery]
 */
import { spawnSync } from "bun";
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dir, "..");
const i = process.argv.indexOf("--outfile");
const outfile = i > 0 ? (process.argv[i + 1] as string) : join(root, "dist", "rookery");
mkdirSync(dirname(outfile), { recursive: true });

const started = performance.now();

/**
 * The tools, compressed into dist/embed (zstd 9: gzip -9 made 50 MB and took twice as long;
 * kept between builds while the package is unchanged). An extra entry point that is not code
 * is embedded as a file: Bun.embeddedFiles at run time.
 */
const tools: string[] = [];
for (const [name, path] of [
  ["ffmpeg", "node_modules/@ffmpeg-installer/linux-x64/ffmpeg"],
  ["ffprobe", "node_modules/@ffprobe-installer/linux-x64/ffprobe"],
] as const) {
  const source = join(root, path);
  if (!existsSync(source)) {
    console.warn(`${path} is missing: the executable will use FFMPEG_PATH/FFPROBE_PATH or the system's ${name}`);
    continue;
  }
  const packed = join(root, "dist", "embed", `${name}.zst`);
  if (!existsSync(packed) || statSync(packed).mtimeMs < statSync(source).mtimeMs) {
    mkdirSync(dirname(packed), { recursive: true });
    // Written aside and renamed: an interrupted build leaves no half file to embed next time.
    await Bun.write(`${packed}.partial`, Bun.zstdCompressSync(new Uint8Array(await Bun.file(source).arrayBuffer()), { level: 9 }));
    renameSync(`${packed}.partial`, packed);
  }
  tools.push(packed);
}

const result = spawnSync(
  // The serving threads' entry (WEB_THREADS) is an entry point of its own, which Bun embeds for `new Worker`.
  [process.execPath, "build", "--compile", "--minify", "--bytecode", "--sourcemap", "--root", root, join(root, "src/main.ts"), join(root, "src/threads/worker.ts"), ...tools, "--outfile", outfile],
  { cwd: root, stdout: "inherit", stderr: "inherit" },
);
if (result.exitCode !== 0) process.exit(result.exitCode ?? 1);
const size = statSync(outfile).size / (1024 * 1024);
console.log(`built ${outfile} (${size.toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
