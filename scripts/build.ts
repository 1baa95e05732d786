/**
 * `bun run build`: one executable, dist/rookery, with everything inside it: the code,
 * migrations (read at build time by a macro), the default avatar and header, sharp's
 * native addon and the libvips library it needs (written to a private temporary folder
 * and loaded on the first image; see src/media-files/sharp.ts), and ffmpeg and ffprobe from their npm
 * packages, compressed with zstd (45 MB instead of 147) and unpacked under DATA_DIR/tools on first
 * start (src/media-files/ffmpeg.ts).
 *
 *   bun scripts/build.ts [--outfile dist/rookery] [--no-profile]
 */
import { spawn, spawnSync } from "bun";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
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

/**
 * What keeps the idle server small (docs/benchmarks.md, "Idle memory"):
 * - `--splitting` (ESM): what is loaded by `import()` (Fedify and its stack, federation/lazy.ts)
 *   is a chunk of its own, read when first imported; in one file its functions were made at start.
 * - `--compile-jit-policy`: start-up code runs once and is not worth compiling; main.ts sets the
 *   normal policy back once the server listens.
 * - `src/serving-thread.ts`: the serving threads' entry (WEB_THREADS) is an entry point of its own,
 *   which Bun embeds for `new Worker`.
 * - `--bytecode-order`: the bytecode start-up uses is laid out together at the front (recorded
 *   by a first build's run, below), so fewer pages of the file are read in.
 */
const flags = ["--compile", "--minify", "--bytecode", "--sourcemap", "--splitting", "--format=esm", "--compile-jit-policy=8", "--root", root];
const compile = (extra: string[]) => {
  const result = spawnSync([process.execPath, "build", ...flags, ...extra, join(root, "src/main.ts"), join(root, "src/serving-thread.ts"), ...tools, "--outfile", outfile], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (result.exitCode !== 0) process.exit(result.exitCode ?? 1);
};
compile([]);
if (!process.argv.includes("--no-profile")) {
  const order = join(root, "dist", "bytecode.order");
  await recordStartUp(outfile, order);
  compile([`--bytecode-order=${order}`]);
}
const size = statSync(outfile).size / (1024 * 1024);
console.log(`built ${outfile} (${size.toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

/**
 * Runs the executable as a server starts for the first time and is first asked (the instance,
 * the public timeline), recording which functions it used (BUN_BYTECODE_ORDER_OUT, written as it
 * exits). Functions are matched by a hash of their code, so the profile also fits the next build.
 */
async function recordStartUp(executable: string, order: string) {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-build-profile-"));
  rmSync(order, { force: true });
  const env = { PATH: process.env.PATH ?? "", HOME: dataDir, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: "0", LOG_REQUESTS: "false", BUN_BYTECODE_ORDER_OUT: order };
  const proc = spawn([executable, "serve"], { env, stdout: "pipe", stderr: "inherit" });
  try {
    let output = "";
    const decoder = new TextDecoder();
    const reader = proc.stdout.getReader();
    while (!/listen=\S+/.test(output)) {
      const { done, value } = await reader.read();
      if (done) break;
      output += decoder.decode(value);
    }
    reader.releaseLock();
    const listen = /listen=(\S+)/.exec(output)?.[1];
    if (!listen) throw new Error(`the executable did not start: ${output}`);
    for (const path of ["/api/v1/instance", "/api/v2/instance", "/api/v1/timelines/public", "/api/v1/custom_emojis"]) await (await fetch(`${listen}${path}`)).arrayBuffer();
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (!existsSync(order)) throw new Error("the profiling run wrote no bytecode order");
}
