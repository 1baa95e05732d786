/**
 * Reads on every core (issue 30): the signed-in status read, the home timeline and a thread's
 * context (a local thread of 30: no fill is due, so a serving thread answers it) served with
 * WEB_THREADS=1 and with WEB_THREADS=2, wrk -t1 -c32: requests per second and server CPU per
 * request for the whole process (all its threads: /proc/PID/stat, so wrk's CPU does not count),
 * and the servers' RSS idle and after the runs.
 *
 * Both servers run at once, seeded alike, and are measured in short runs that alternate
 * (1, 2, 2, 1, 1, 2, ...): on a machine others share, the load changes from one minute to
 * the next, and a ratio of two runs taken seconds apart says more than two runs minutes apart.
 * The medians are printed, and each pair's ratio, so that the spread shows.
 *
 * Each endpoint is first read for 10 s on each server (the warm-up).
 *
 * BENCH_PORT (default 4601) and the port after it are the servers' ports: a server listens with
 * SO_REUSEPORT when it has threads, so two benchmarks on one port would share their requests.
 *
 *   bun scripts/bench/threads.ts [seconds per run, default 3] [rounds, default 6] [threads, default 2] [endpoints: status,home,context (the default: all)]
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpuSeconds, fmt, requireWrk, rss, seedUser, startRookery, wrk } from "./lib.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 6);
const many = Number(process.argv[4] ?? 2);
const only = new Set((process.argv[5] ?? "status,home,context").split(","));
const warmUp = 10;

type Server = Awaited<ReturnType<typeof startRookery>>;

/**
 * Two accounts, one following the other; a thread of 30 (each answering the one before, alice
 * and bob in turn), then 40 posts: the status read is the newest, the home timeline bob's, the
 * context the thread's 15th (14 ancestors, 15 descendants), read by bob.
 */
async function seed(server: Server) {
  const alice = await seedUser(server, "alice");
  const bob = await seedUser(server, "bob");
  await fetch(`${server.url}/api/v1/accounts/${alice.id}/follow`, { method: "POST", headers: { authorization: `Bearer ${bob.token}` } });
  const chain: string[] = [];
  for (let i = 0; i < 30; i++) {
    const token = i % 2 === 0 ? alice.token : bob.token;
    const r = await fetch(`${server.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ status: `in the thread ${i}`, in_reply_to_id: chain.at(-1) }) });
    chain.push(((await r.json()) as { id: string }).id);
  }
  let last = "";
  for (let i = 0; i < 40; i++) {
    const r = await fetch(`${server.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" }, body: JSON.stringify({ status: `post ${i} #bench` }) });
    last = ((await r.json()) as { id: string }).id;
  }
  return { token: bob.token, status: last, thread: chain[14]! };
}

/**
 * CPU seconds of the threads that serve requests (the main thread and the Workers), apart from
 * the runtime's helpers (JIT compilers, the garbage collector's helpers, the allocator's scavenger).
 */
function servingCpu(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    if (String(pid) !== task && name !== "Worker") continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    total += (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return total;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const port = Number(process.env.BENCH_PORT ?? 4601);
const one = await startRookery(port, { WEB_THREADS: "1" });
const two = await startRookery(port + 1, { WEB_THREADS: String(many) });
try {
  const idle = [rss(one.proc.pid).now, rss(two.proc.pid).now];
  const seeds = [await seed(one), await seed(two)];
  console.log(`wrk -t1 -c32, ${seconds} s runs alternating WEB_THREADS=1 and ${many}, ${rounds} rounds; the machine: ${navigator.hardwareConcurrency} cores, load average ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}\n`);
  type Seed = (typeof seeds)[number];
  for (const [key, label, path] of [
    ["status", "signed-in status", (s: Seed) => `/api/v1/statuses/${s.status}`],
    ["home", "home timeline", () => "/api/v1/timelines/home?limit=20"],
    ["context", "thread's context (30 posts, signed in)", (s: Seed) => `/api/v1/statuses/${s.thread}/context`],
  ] as const) {
    if (!only.has(key)) continue;
    const servers = [one, two];
    const urls = servers.map((s, i) => `${s.url}${path(seeds[i]!)}`);
    const headers = seeds.map((s) => ({ authorization: `Bearer ${s.token}` }));
    // A warm-up: caches filled and the code compiled on every thread. Each thread has its own
    // JIT, which on a busy machine goes on compiling for seconds: 3 s left the second thread's
    // compiler at a tenth of the process's CPU during the runs.
    for (let i = 0; i < 2; i++) wrk(urls[i]!, { seconds: warmUp, connections: 32, headers: headers[i] });
    const results: { rps: number; cpuUs: number; servingUs: number }[][] = [[], []];
    for (let round = 0; round < rounds; round++) {
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const pid = servers[i]!.proc.pid;
        const [before, servingBefore] = [cpuSeconds(pid), servingCpu(pid)];
        const r = wrk(urls[i]!, { seconds, connections: 32, headers: headers[i] });
        const [cpu, serving] = [cpuSeconds(pid) - before, servingCpu(pid) - servingBefore];
        if (r.non2xx > 0) throw new Error(`${label}: ${r.non2xx} answers not 2xx`);
        const requests = r.requestsPerSecond * seconds;
        results[i]!.push({ rps: r.requestsPerSecond, cpuUs: (cpu / requests) * 1e6, servingUs: (serving / requests) * 1e6 });
      }
    }
    const [a, b] = results as [{ rps: number; cpuUs: number; servingUs: number }[], { rps: number; cpuUs: number; servingUs: number }[]];
    console.log(`${label}`);
    console.log(`  WEB_THREADS=1       median ${fmt(median(a.map((x) => x.rps))).padStart(7)} req/s   ${fmt(median(a.map((x) => x.cpuUs)), 1).padStart(6)} µs CPU/request (serving threads ${fmt(median(a.map((x) => x.servingUs)), 1)})   runs: ${a.map((x) => fmt(x.rps)).join(", ")}`);
    console.log(`  WEB_THREADS=${many}       median ${fmt(median(b.map((x) => x.rps))).padStart(7)} req/s   ${fmt(median(b.map((x) => x.cpuUs)), 1).padStart(6)} µs CPU/request (serving threads ${fmt(median(b.map((x) => x.servingUs)), 1)})   runs: ${b.map((x) => fmt(x.rps)).join(", ")}`);
    console.log(`  ratio per pair      req/s ${b.map((x, i) => `${fmt(x.rps / a[i]!.rps, 2)}x`).join(", ")}   (median ${fmt(median(b.map((x, i) => x.rps / a[i]!.rps)), 2)}x)`);
    console.log(`                      CPU/request ${b.map((x, i) => `${fmt(x.cpuUs / a[i]!.cpuUs, 2)}x`).join(", ")}   (median ${fmt(median(b.map((x, i) => x.cpuUs / a[i]!.cpuUs)), 2)}x)\n`);
  }
  console.log(`RSS idle: ${fmt(idle[0]!, 1)} MB with WEB_THREADS=1, ${fmt(idle[1]!, 1)} MB with ${many}; after the runs: ${fmt(rss(one.proc.pid).now, 1)} MB and ${fmt(rss(two.proc.pid).now, 1)} MB`);
} finally {
  await one.stop();
  await two.stop();
}
