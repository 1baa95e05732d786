/**
 * The executable itself: its size, start-up to the first answered request on an existing
 * database (median and worst of N starts), and resident memory once idle; beside a bare
 * Bun.serve executable compiled the same way in the same run. The figures are written to
 * docs/executable-run.json, and the README and docs/benchmarks.md quote them (see
 * executable-figures.ts); --no-write only prints them.
 *
 *   bun scripts/bench/executable.ts [starts, default 15] [--no-write]
 */
import { spawn, spawnSync } from "bun";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, fmt, ROOT, rss } from "./lib.ts";
import { writeRun } from "./executable-figures.ts";

const args = process.argv.slice(2);
const STARTS = Number(args.find((a) => /^\d+$/.test(a)) ?? 15);
const load = loadavg()[0] as number;
const work = mkdtempSync(join(tmpdir(), "rookery-exe-bench-"));

function build(entry: string, outfile: string, extra: string[] = []) {
  const out = spawnSync([BUN, "build", "--compile", "--minify", ...extra, entry, "--outfile", outfile], { cwd: ROOT });
  if (out.exitCode !== 0) throw new Error(out.stderr.toString());
}

/** Spawns the executable and polls `path` until it answers; returns the time and the process. */
async function start(file: string, args: string[], env: Record<string, string>, port: number, path: string) {
  const t0 = performance.now();
  const proc = spawn([file, ...args], { env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) }, cwd: work, stdout: "ignore", stderr: "ignore" });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}${path}`).then((r) => r.ok, () => false);
    if (ok) break;
    if (proc.exitCode !== null) throw new Error(`${file} exited`);
    await Bun.sleep(1);
  }
  return { ms: performance.now() - t0, proc };
}

async function measure(file: string, args: string[], env: Record<string, string>, path: string) {
  const times: number[] = [];
  let idle = 0;
  for (let i = 0; i < STARTS; i++) {
    const { ms, proc } = await start(file, args, env, 3960, path);
    times.push(ms);
    if (i === STARTS - 1) {
      await Bun.sleep(2000);
      idle = rss(proc.pid).now;
    }
    proc.kill("SIGTERM");
    await proc.exited;
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, worst: times[times.length - 1]!, idle, size: statSync(file).size / (1024 * 1024) };
}

const round = (n: number) => Math.round(n * 10) / 10;

try {
  const bareSource = join(work, "bare.ts");
  writeFileSync(bareSource, `Bun.serve({ port: Number(process.env.PORT), hostname: "127.0.0.1", fetch: () => Response.json({ hello: "world" }) });\n`);
  const bare = join(work, "bare");
  build(bareSource, bare);
  const rookery = join(work, "rookery");
  const built = spawnSync([BUN, join(ROOT, "scripts/build.ts"), "--outfile", rookery], { cwd: ROOT });
  if (built.exitCode !== 0) throw new Error(built.stderr.toString());

  // An existing database with some life in it: accounts, statuses.
  const dataDir = join(work, "data");
  const env = { DATA_DIR: dataDir, HOST: "127.0.0.1", LOG_REQUESTS: "false", MALLOC_ARENA_MAX: "2" };
  // Commands other than serve and migrate need the database to exist already.
  spawnSync([rookery, "migrate"], { env: { ...process.env, ...env }, cwd: work });
  spawnSync([rookery, "accounts", "create", "bench", "--email", "bench@bench.test", "--password", "benchmark password"], { env: { ...process.env, ...env }, cwd: work });

  const b = await measure(bare, [], {}, "/");
  const r = await measure(rookery, ["serve"], env, "/api/v1/instance");
  console.log(`${STARTS} starts each; start-up = spawn to first answered request, on loopback\n`);
  console.log(`baseline: bare Bun.serve executable   size ${fmt(b.size, 1)} MB   start-up median ${fmt(b.median, 1)} ms, worst ${fmt(b.worst, 1)} ms   idle RSS ${fmt(b.idle, 1)} MB`);
  console.log(`rookery (GET /api/v1/instance)        size ${fmt(r.size, 1)} MB   start-up median ${fmt(r.median, 1)} ms, worst ${fmt(r.worst, 1)} ms   idle RSS ${fmt(r.idle, 1)} MB`);
  if (!args.includes("--no-write")) {
    const figures = (m: typeof r) => ({ sizeMb: round(m.size), medianMs: round(m.median), worstMs: round(m.worst), idleMb: round(m.idle) });
    writeRun({ date: new Date().toISOString().slice(0, 10), starts: STARTS, cores: availableParallelism(), load: round(load), bare: figures(b), rookery: figures(r) });
    console.log("Written to docs/executable-run.json; the README and docs/benchmarks.md quote it.");
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
