/**
 * Idle memory of the executable, as an operator sees it: resident memory (VmRSS, and its
 * anonymous and file-backed parts) of `rookery serve` after start, after the statuses
 * benchmark's seeding (two accounts, one following the other, 200 posts) and after a short
 * load (wrk on a status and on the home timeline), each read once the server has been idle
 * for a while (3 s after start, 12 s after a burst). Beside it: a bare `Bun.serve` executable compiled the same way (the floor
 * of any Bun program here) and GoToSocial when its binary is present (GTS_BIN, default
 * /work/peers/gotosocial; templates from GTS_WEB_DIR or web/ beside it). Both servers are
 * measured on their second start over an existing database, as a server usually starts.
 *
 *   bun scripts/bench/memory.ts [--exe dist/rookery] [--seconds 3]
 *
 * Without --exe it builds the executable as `bun run build` does, into a temporary folder.
 */
import { spawn, spawnSync, type Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BUN, fmt, requireWrk, ROOT, seedUser, wrk } from "./lib.ts";

requireWrk();
const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SECONDS = Number(option("--seconds") ?? 3);
/** How long a server is left alone before its memory is read: after start, and after a burst (IdleMemory releases memory within two of its 5 s periods). */
const SETTLE_MS = 3000;
const AFTER_BURST_MS = 12_000;
const work = mkdtempSync(join(tmpdir(), "rookery-memory-"));

interface Memory {
  rss: number;
  anon: number;
  file: number;
}

/** VmRSS, RssAnon and RssFile of a process, in MB. */
function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: mb("VmRSS"), anon: mb("RssAnon"), file: mb("RssFile") };
}

const show = (m: Memory) => `${fmt(m.rss, 1).padStart(6)} MB  (anonymous ${fmt(m.anon, 1)}, file-backed ${fmt(m.file, 1)})`;

/** Spawns a server and waits for `url` to answer 200; the time from spawn to that answer. */
async function start(argv: string[], env: Record<string, string>, url: string): Promise<{ proc: Subprocess; ms: number }> {
  const t0 = performance.now();
  const proc = spawn(argv, { env, cwd: work, stdout: "ignore", stderr: "ignore" });
  for (;;) {
    if (await fetch(url).then((r) => r.status === 200, () => false)) return { proc, ms: performance.now() - t0 };
    if (proc.exitCode !== null) throw new Error(`${argv[0]} exited (${proc.exitCode})`);
    await Bun.sleep(2);
  }
}

async function stop(proc: Subprocess) {
  proc.kill("SIGTERM");
  await proc.exited;
}

function build(): string {
  const given = option("--exe");
  if (given) return given;
  const file = join(work, "rookery");
  const built = spawnSync([BUN, join(ROOT, "scripts/build.ts"), "--outfile", file], { cwd: ROOT });
  if (built.exitCode !== 0) throw new Error(built.stderr.toString());
  return file;
}

async function measureRookery(exe: string) {
  const port = 3991;
  const url = `http://127.0.0.1:${port}`;
  const env = { PATH: process.env.PATH ?? "", HOME: work, DATA_DIR: join(work, "rookery-data"), HOST: "127.0.0.1", PORT: String(port), RATE_LIMITS: "off", LOG_REQUESTS: "false", MALLOC_ARENA_MAX: "2" };
  // The first start makes the database; the one measured starts over it.
  await stop((await start([exe, "serve"], env, `${url}/api/v1/instance`)).proc);
  const { proc, ms } = await start([exe, "serve"], env, `${url}/api/v1/instance`);
  try {
    const first = memory(proc.pid!);
    await Bun.sleep(SETTLE_MS);
    const started = memory(proc.pid!);
    const server = {
      url,
      cli(argv: string[]) {
        const out = spawnSync([exe, ...argv], { env, cwd: work });
        if (out.exitCode !== 0) throw new Error(out.stderr.toString());
        return out.stdout.toString().trim();
      },
    };
    const author = await seedUser(server, "author");
    const reader = await seedUser(server, "reader");
    const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    await fetch(`${url}/api/v1/accounts/${author.id}/follow`, { method: "POST", headers: auth(reader.token) });
    let statusId = "";
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${url}/api/v1/statuses`, { method: "POST", headers: auth(author.token), body: JSON.stringify({ status: `Seed status ${i} with a #tag and https://example.com/${i}` }) });
      statusId = ((await res.json()) as { id: string }).id;
    }
    await Bun.sleep(AFTER_BURST_MS);
    const seeded = memory(proc.pid!);
    const loads = [
      wrk(`${url}/api/v1/statuses/${statusId}`, { seconds: SECONDS, connections: 32 }),
      wrk(`${url}/api/v1/statuses/${statusId}`, { seconds: SECONDS, connections: 32, headers: auth(reader.token) }),
      wrk(`${url}/api/v1/timelines/home?limit=20`, { seconds: SECONDS, connections: 32, headers: auth(reader.token) }),
    ];
    const loaded = memory(proc.pid!);
    await Bun.sleep(AFTER_BURST_MS);
    const settled = memory(proc.pid!);
    const peak = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
    return { ms, first, started, seeded, loaded, settled, peak, requests: loads.map((l) => Math.round(l.requestsPerSecond)) };
  } finally {
    await stop(proc);
  }
}

async function measureBare() {
  const source = join(work, "bare.ts");
  writeFileSync(source, `Bun.serve({ port: Number(process.env.PORT), hostname: "127.0.0.1", fetch: () => Response.json({ hello: "world" }) });\n`);
  const exe = join(work, "bare");
  const out = spawnSync([BUN, "build", "--compile", "--minify", source, "--outfile", exe], { cwd: ROOT });
  if (out.exitCode !== 0) throw new Error(out.stderr.toString());
  const { proc } = await start([exe], { PATH: process.env.PATH ?? "", PORT: "3992" }, "http://127.0.0.1:3992/");
  await Bun.sleep(SETTLE_MS);
  const m = memory(proc.pid!);
  await stop(proc);
  return m;
}

/** GoToSocial over SQLite with rate limits off, as scripts/interop/gotosocial-peer.ts configures it, on plain http. */
async function measureGoToSocial() {
  const bin = process.env.GTS_BIN ?? "/work/peers/gotosocial";
  const webDir = process.env.GTS_WEB_DIR ?? join(dirname(bin), "web");
  if (!existsSync(bin) || !existsSync(join(webDir, "template"))) return null;
  const dir = join(work, "gts");
  mkdirSync(join(dir, "storage"), { recursive: true });
  const port = 3993;
  const config = {
    "log-level": "warn",
    host: "gts.bench.test",
    protocol: "http",
    "bind-address": "127.0.0.1",
    port,
    "db-type": "sqlite",
    "db-address": join(dir, "gts.sqlite"),
    "web-template-base-dir": `${join(webDir, "template")}/`,
    "web-asset-base-dir": `${join(webDir, "assets")}/`,
    "storage-backend": "local",
    "storage-local-base-path": join(dir, "storage"),
    "letsencrypt-enabled": false,
    "accounts-registration-open": false,
    "media-ffmpeg-pool-size": 1,
    "advanced-rate-limit-requests": 0,
    "advanced-throttling-multiplier": 0,
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  const env = { PATH: process.env.PATH ?? "", HOME: dir, TZ: "UTC" };
  const argv = [bin, "--config-path", join(dir, "config.json"), "server", "start"];
  const url = `http://127.0.0.1:${port}/api/v1/instance`;
  await stop((await start(argv, env, url)).proc);
  const { proc, ms } = await start(argv, env, url);
  const first = memory(proc.pid!);
  await Bun.sleep(SETTLE_MS);
  const started = memory(proc.pid!);
  await stop(proc);
  return { ms, first, started };
}

try {
  const load = loadavg()[0] as number;
  const exe = build();
  const bare = await measureBare();
  const r = await measureRookery(exe);
  const gts = await measureGoToSocial();
  console.log(`Resident memory, read ${SETTLE_MS / 1000} s after start and ${AFTER_BURST_MS / 1000} s after a burst; load average ${fmt(load, 1)} when the run began\n`);
  console.log(`bare Bun.serve executable, idle          ${show(bare)}`);
  console.log(`rookery: start-up to the first answer    ${fmt(r.ms, 0)} ms (second start, existing database)`);
  console.log(`rookery: at the first answer             ${show(r.first)}`);
  console.log(`rookery: idle after start                ${show(r.started)}`);
  console.log(`rookery: after seeding (2 accounts, 200 posts)  ${show(r.seeded)}`);
  console.log(`rookery: right after ${SECONDS} s of wrk x3 (${r.requests.join(", ")} req/s)  ${show(r.loaded)}`);
  console.log(`rookery: idle after the load             ${show(r.settled)}   peak ${fmt(r.peak, 1)} MB`);
  if (gts) {
    console.log(`gotosocial: start-up to the first answer ${fmt(gts.ms, 0)} ms`);
    console.log(`gotosocial: idle after start             ${show(gts.started)}`);
    console.log(`\nrookery / gotosocial, idle after start: ${fmt(r.started.rss / gts.started.rss, 2)} (the goal of issue 30: at most 0.33)`);
  } else {
    console.log("\n(no GoToSocial binary: set GTS_BIN to compare)");
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
