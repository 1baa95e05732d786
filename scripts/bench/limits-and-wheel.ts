/**
 * Issue 5's two figures.
 *
 * 1. What the rate-limit check costs a request. The check is timed inside the running
 *    server under load, and set against what a request costs as wrk measures it: the cheapest
 *    one (an anonymous status read from the render cache) and a typical one (a signed-in
 *    status read). Then, end to end, the same server runs with the limits on and off in
 *    turns (one process, so process-to-process variance stays out); that difference also
 *    includes writing three more response headers.
 *    Requests come from a pool of 4,096 addresses through a trusted proxy, so no address
 *    bucket fills up (about 120 requests per address in a run).
 * 2. The timer wheel holding 100,000 pending schedules: memory per timer, the time to
 *    schedule them and to fire them all.
 *
 *   bun scripts/bench/limits-and-wheel.ts [seconds per run, default 6] [rounds, default 3]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { parseScopes } from "../../src/auth/scopes.ts";
import { TimerWheel } from "../../src/infra/timer-wheel.ts";
import { fmt, requireWrk, startBaseline, wrk } from "./lib.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 6);
const rounds = Number(process.argv[3] ?? 3);

// ---- 1. Requests and the check, in one server ----
const dataDir = mkdtempSync(join(tmpdir(), "rookery-limits-"));
const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "3924", LOG_REQUESTS: "false", RATE_LIMITS: "on", TRUSTED_PROXIES: "127.0.0.1" }));
const { services } = server.ctx;
const account = await services.accounts.create({ username: "reader", email: "r@bench.test", password: "benchmark password" }, { api: false });
const { app } = await services.applications.register({ name: "bench", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" });
const token = (await services.tokens.issue(app.id, account.id, parseScopes("read write"))).accessToken;
const statusId = (await services.posting.publish(await services.posting.prepare(account.id, app.id, { text: "measured #bench https://example.com" }))).id;
const url = `http://127.0.0.1:3924/api/v1/statuses/${statusId}`;
const script = (authorization?: string) => {
  const path = join(dataDir, `${authorization ? "signed-in" : "anonymous"}.lua`);
  writeFileSync(
    path,
    `counter = 0
request = function()
  counter = counter + 1
  local n = counter % 4096
  return wrk.format(nil, nil, { ["X-Forwarded-For"] = string.format("10.0.%d.%d", math.floor(n / 256), n % 256)${authorization ? `, ["Authorization"] = "${authorization}"` : ""} })
end`,
  );
  return path;
};
const anonymous = script();
const signedIn = script(`Bearer ${token}`);

/** wrk as a child process while this process serves; the check is timed inside the server. */
async function load(lua: string): Promise<{ rps: number; checkUs: number }> {
  services.rateLimits.sweep(Date.now() + 24 * 3600_000);
  const real = services.rateLimits.check.bind(services.rateLimits);
  let spent = 0;
  let calls = 0;
  services.rateLimits.check = (facts) => {
    const t = performance.now();
    const verdict = real(facts);
    spent += performance.now() - t;
    calls++;
    // Benchmark only: keep the one account under its limit so every request is served.
    if (facts.accountId !== null && calls % 250 === 0) services.rateLimits.sweep(Date.now() + 24 * 3600_000);
    return verdict;
  };
  const proc = Bun.spawn(["wrk", "-t1", "-c64", `-d${seconds}s`, "-s", lua, url], { stdout: "pipe" });
  const out = await new Response(proc.stdout).text();
  services.rateLimits.check = real;
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), checkUs: calls ? (spent * 1000) / calls : 0 };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const baseline = await startBaseline(3925);
const bare = wrk(`${baseline.url}/`, { seconds });
await baseline.stop();
console.log(`baseline: bare Elysia GET /: ${fmt(bare.requestsPerSecond)} req/s`);
for (const [label, lua] of [["anonymous status read (the cheapest request: render cache)", anonymous], ["signed-in status read (rendered for the viewer)", signedIn]] as const) {
  const { rps, checkUs } = await load(lua);
  const requestUs = 1e6 / rps;
  console.log(`${label}: ${fmt(rps)} req/s, ${fmt(requestUs, 1)} µs each; the check took ${fmt(checkUs, 2)} µs = ${fmt((checkUs / requestUs) * 100, 1)}% of it`);
}

const turns: Record<"off" | "on", number[]> = { off: [], on: [] };
for (let round = 0; round < rounds; round++) {
  for (const mode of ["off", "on"] as const) {
    (server.ctx.config as { rateLimits: boolean }).rateLimits = mode === "on";
    turns[mode].push((await load(anonymous)).rps);
  }
}
const off = median(turns.off);
const on = median(turns.on);
const endToEndUs = 1e6 / on - 1e6 / off;
console.log(
  `End to end, anonymous reads, limits off ${turns.off.map((x) => fmt(x)).join(" / ")} and on ${turns.on.map((x) => fmt(x)).join(" / ")} req/s: ` +
    `medians differ by ${fmt(endToEndUs, 2)} µs per request (${fmt((endToEndUs * on) / 1e4, 1)}%), writing three more response headers included`,
);
await server.stop();
rmSync(dataDir, { recursive: true, force: true });

// ---- 2. The wheel ----
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const wheel = new TimerWheel(clock);
let fired = 0;
wheel.handle("job", () => void fired++);
Bun.gc(true);
const before = process.memoryUsage().heapUsed;
let t = performance.now();
const N = 100_000;
for (let i = 0; i < N; i++) wheel.schedule("job", i, clock.now() + 60_000 + Math.floor(Math.random() * 30 * 86_400_000));
const scheduleUs = ((performance.now() - t) * 1000) / N;
Bun.gc(true);
const perTimer = (process.memoryUsage().heapUsed - before) / N;
console.log(`\nTimer wheel: ${N.toLocaleString()} pending schedules, ${fmt(perTimer)} bytes of heap each (${fmt((perTimer * N) / 1024 / 1024, 1)} MB), ${fmt(scheduleUs, 2)} µs to schedule one`);
t = performance.now();
for (let day = 0; day <= 31; day++) clock.advance(86_400_000);
console.log(`Firing all of them across 31 simulated days: ${fmt(performance.now() - t)} ms, ${fired.toLocaleString()} fired, ${wheel.size} left`);
wheel.stop();
process.exit(0);
