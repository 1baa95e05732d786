import { spawn, spawnSync, type Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Shared pieces of the benchmarks: servers as child processes on loopback, wrk as the load
 * generator (a C program, so it is not the bottleneck the way a JavaScript one would be),
 * and RSS read from /proc. Every figure is printed next to a baseline measured in the same run.
 */
export const ROOT = join(import.meta.dir, "..", "..");
export const BUN = process.execPath;

/** wrk's script for posts: a new status on each request (its text differs, so nothing is taken for a repeat). */
export const POSTING_LUA = `
n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, nil, '{"status":"measured ' .. n .. '"}')
end`;

export function requireWrk() {
  if (spawnSync(["sh", "-c", "command -v wrk"]).exitCode !== 0) {
    console.error("These benchmarks use wrk: install it first (Debian: apt-get install wrk).");
    process.exit(1);
  }
}

export interface Child {
  proc: Subprocess;
  url: string;
  stop(): Promise<void>;
}

async function waitFor(url: string, proc: Subprocess) {
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode})`);
    if (await fetch(url).then((r) => r.status < 500, () => false)) return;
    await Bun.sleep(50);
  }
  throw new Error(`no answer from ${url}`);
}

/**
 * The command line for a child, pinned with taskset to the given CPUs when `cpus` is set
 * (e.g. "1"): a benchmark that states a figure "on one core" runs the server on a core of its
 * own, the load generators on the other.
 */
export const pinned = (cpus: string | undefined, argv: string[]) => (cpus === undefined ? argv : ["taskset", "-c", cpus, ...argv]);

export async function startBaseline(port: number, cpus?: string): Promise<Child> {
  const proc = spawn(pinned(cpus, [BUN, join(ROOT, "scripts/bench/bare-server.ts")]), { env: { ...process.env, PORT: String(port) }, stdout: "ignore", stderr: "inherit" });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/`, proc);
  return { proc, url, stop: async () => void (proc.kill(), await proc.exited) };
}

/** `root`: the checkout whose src/main.ts runs (another commit's, to compare before and after in one run). */
export async function startRookery(port: number, env: Record<string, string> = {}, cpus?: string, root = ROOT): Promise<Child & { dataDir: string; cli(args: string[]): string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-bench-"));
  // MALLOC_ARENA_MAX=2 as `npm start` runs it: glibc's per-thread arenas otherwise hold on
  // to the memory of image decoding.
  const fullEnv = { ...process.env, MALLOC_ARENA_MAX: "2", DATA_DIR: dataDir, PORT: String(port), RATE_LIMITS: "off", LOG_REQUESTS: "false", ...env };
  // BENCH_PROFILE=dir writes the server's CPU profile there (markdown) when it stops; with
  // BENCH_PROFILE_JSON=1 as a .cpuprofile instead, whose samples post-floor.ts --profile sorts by part.
  const profile = process.env.BENCH_PROFILE ? [process.env.BENCH_PROFILE_JSON ? "--cpu-prof" : "--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const proc = spawn(pinned(cpus, [BUN, ...profile, join(root, "src/main.ts"), "serve"]), { env: fullEnv, stdout: "ignore", stderr: "inherit", cwd: root });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/v1/streaming/health`, proc);
  return {
    proc,
    url,
    dataDir,
    cli(args) {
      const out = spawnSync([BUN, join(root, "src/main.ts"), ...args], { env: fullEnv, cwd: root });
      if (out.exitCode !== 0) throw new Error(out.stderr.toString());
      return out.stdout.toString().trim();
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Resident memory of a process in MB: now (VmRSS) and at its peak (VmHWM). */
export function rss(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** CPU time a process has used so far, user and system, all its threads, in seconds. */
export function cpuSeconds(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name), in clock ticks of 1/100 s.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface WrkResult {
  requestsPerSecond: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
}

function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(value.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
}

type WrkOptions = { seconds?: number; connections?: number; method?: string; body?: string; headers?: Record<string, string>; lua?: string };

function wrkScript(options: WrkOptions): string {
  const script = join(tmpdir(), `wrk-${process.pid}-${Math.random().toString(36).slice(2)}.lua`);
  const lines = [`wrk.method = ${JSON.stringify(options.method ?? "GET")}`];
  if (options.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(options.body)}`);
  for (const [k, v] of Object.entries(options.headers ?? {})) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (options.lua) lines.push(options.lua);
  writeFileSync(script, lines.join("\n"));
  return script;
}

const wrkArgs = (url: string, script: string, options: WrkOptions) => ["wrk", "-t1", `-c${options.connections ?? 64}`, `-d${options.seconds ?? 8}s`, "--latency", "-s", script, url];

function parseWrk(out: string): WrkResult {
  const pct = (p: string) => toMs(new RegExp(`\\s${p}%\\s+(\\S+)`).exec(out)?.[1] ?? "");
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50ms: pct("50"),
    p99ms: pct("99"),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
  };
}

/** Runs wrk against one URL; POST bodies and headers go through a small Lua script. */
export function wrk(url: string, options: WrkOptions = {}): WrkResult {
  const script = wrkScript(options);
  const out = spawnSync(wrkArgs(url, script, options)).stdout.toString();
  rmSync(script, { force: true });
  return parseWrk(out);
}

/** wrk without blocking this process's event loop (for a benchmark that watches something meanwhile). */
export async function wrkAsync(url: string, options: WrkOptions = {}): Promise<WrkResult> {
  const script = wrkScript(options);
  const proc = spawn(wrkArgs(url, script, options), { stdout: "pipe", stderr: "ignore" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  rmSync(script, { force: true });
  return parseWrk(out);
}

/**
 * Lua for wrk that counts responses per 100 ms of wall-clock time (clock_gettime through
 * LuaJIT's FFI) and prints them at the end, one `bucket <start ms / 100> <count>` line each:
 * what a benchmark needs to compare throughput before and during something else it starts.
 */
const TIMELINE_LUA = `
local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int clock_gettime(int, bench_timespec*); ]]
local ts = ffi.new("bench_timespec")
buckets = {}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function response(status, headers, body)
  ffi.C.clock_gettime(0, ts)
  local b = tonumber(ts.tv_sec) * 10 + math.floor(tonumber(ts.tv_nsec) / 1e8)
  buckets[b] = (buckets[b] or 0) + 1
end
function done(summary, latency, requests)
  for _, t in ipairs(threads) do
    for k, n in pairs(t:get("buckets")) do io.write(string.format("bucket %d %d\\n", k, n)) end
  end
end`;

export interface Timeline {
  /** Responses per second over [from, to) in epoch ms, from the whole 100 ms buckets inside it. */
  rate(from: number, to: number): { perSecond: number; buckets: number };
}

/**
 * wrk running in the background until stopped (SIGINT: wrk then prints its summary and the
 * Lua done() as usual), recording when each response came. For "throughput during X against
 * before X" in one continuous run, without restarting wrk between slices.
 */
export function wrkTimeline(url: string, options: Omit<WrkOptions, "seconds" | "lua"> = {}): { stop(): Promise<Timeline & { result: WrkResult }> } {
  const opts = { ...options, seconds: 600, lua: TIMELINE_LUA };
  const script = wrkScript(opts);
  const proc = spawn(wrkArgs(url, script, opts), { stdout: "pipe", stderr: "ignore" });
  const output = new Response(proc.stdout).text();
  return {
    async stop() {
      proc.kill("SIGINT");
      const out = await output;
      await proc.exited;
      rmSync(script, { force: true });
      const buckets = new Map<number, number>();
      for (const m of out.matchAll(/^bucket (\d+) (\d+)$/gm)) buckets.set(Number(m[1]), Number(m[2]));
      return {
        result: parseWrk(out),
        rate(from, to) {
          let count = 0;
          let n = 0;
          for (let b = Math.ceil(from / 100); (b + 1) * 100 <= to; b++, n++) count += buckets.get(b) ?? 0;
          return { perSecond: n === 0 ? NaN : (count / n) * 10, buckets: n };
        },
      };
    },
  };
}

export function fmt(n: number, digits = 0) {
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function row(label: string, r: WrkResult, baseline?: WrkResult) {
  const ratio = baseline ? ` (${fmt((r.requestsPerSecond / baseline.requestsPerSecond) * 100, 1)}% of baseline)` : "";
  const errors = r.non2xx ? `  non-2xx: ${r.non2xx}` : "";
  console.log(`${label.padEnd(34)} ${fmt(r.requestsPerSecond).padStart(9)} req/s   p50 ${fmt(r.p50ms, 2).padStart(7)} ms   p99 ${fmt(r.p99ms, 2).padStart(7)} ms${ratio}${errors}`);
}

/** An app, an account made with the CLI and a password-grant token: what a bot would do. */
export async function seedUser(server: { url: string; cli(args: string[]): string }, username: string, scopes = "read write follow"): Promise<{ id: string; token: string }> {
  const id = server.cli(["accounts", "create", username, "--email", `${username}@bench.test`, "--password", "benchmark password"]);
  const app = await (await fetch(`${server.url}/api/v1/apps`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "bench", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes }) })).json() as { client_id: string; client_secret: string };
  const token = await (await fetch(`${server.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "password", username, password: "benchmark password", client_id: app.client_id, client_secret: app.client_secret, scope: scopes }),
  })).json() as { access_token: string };
  return { id, token: token.access_token };
}
