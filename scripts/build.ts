/**
 * `bun run build`: one executable, dist/rookery, with everything inside it: the code,
 * migrations (read at build time by a macro), the default avatar and header, sharp's
 * native addon and the libvips library it needs (written to a private temporary folder
 * and loaded on the first image; see src/media/sharp.ts).
 *
 *   bun scripts/build.ts [--outfile dist/rookery]
 */
import { spawnSync } from "bun";
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dir, "..");
const i = process.argv.indexOf("--outfile");
const outfile = i > 0 ? (process.argv[i + 1] as string) : join(root, "dist", "rookery");
mkdirSync(dirname(outfile), { recursive: true });

const started = performance.now();
const result = spawnSync(
  [process.execPath, "build", "--compile", "--minify", "--bytecode", "--sourcemap", join(root, "src/main.ts"), "--outfile", outfile],
  { cwd: root, stdout: "inherit", stderr: "inherit" },
);
if (result.exitCode !== 0) process.exit(result.exitCode ?? 1);
const size = statSync(outfile).size / (1024 * 1024);
console.log(`built ${outfile} (${size.toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
