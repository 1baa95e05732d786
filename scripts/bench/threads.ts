/**
 * Reads on every core (issue 30): the signed-in status read and the home timeline with
 * WEB_THREADS=1 and WEB_THREADS=2, interleaved (1, 2, 2, 1), wrk -t1 -c32: requests per second
 * and server CPU per request for the whole process (every thread: /proc/PID/stat), and the
 * server's RSS idle and after the runs.
 *
 *   bun scripts/bench/threads.ts [seconds per run, default 5] [threads to compare, default 2]
 */
import { cpuSeconds, fmt, requireWrk, row, rss, seedUser, startRookery, wrk } from "./lib.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 5);
const many = Number(process.argv[3] ?? 2);

async function measure(threads: number) {
  const server = await startRookery(4600 + threads, { WEB_THREADS: String(threads) });
  try {
    const idle = rss(server.proc.pid).now;
    const alice = await seedUser(server, "alice");
    const bob = await seedUser(server, "bob");
    await fetch(`${server.url}/api/v1/accounts/${alice.id}/follow`, { method: "POST", headers: { authorization: `Bearer ${bob.token}` } });
    let last = "";
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`${server.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" }, body: JSON.stringify({ status: `post ${i} #bench` }) });
      last = ((await r.json()) as { id: string }).id;
    }
    const auth = { authorization: `Bearer ${bob.token}` };
    const out: Record<string, { rps: number; cpuUs: number; p99: number }> = {};
    for (const [label, path] of [
      ["signed-in status", `/api/v1/statuses/${last}`],
      ["home timeline", "/api/v1/timelines/home?limit=20"],
    ] as const) {
      // A warm-up: caches filled and the code compiled on every thread (each has its own JIT).
      wrk(`${server.url}${path}`, { seconds: 3, connections: 32, headers: auth });
      const before = cpuSeconds(server.proc.pid);
      const r = wrk(`${server.url}${path}`, { seconds, connections: 32, headers: auth });
      const cpu = cpuSeconds(server.proc.pid) - before;
      row(`WEB_THREADS=${threads} ${label}`, r);
      const cpuUs = (cpu / (r.requestsPerSecond * seconds)) * 1e6;
      console.log(`${"".padEnd(34)} server CPU ${fmt(cpuUs, 1)} µs/request`);
      out[label] = { rps: r.requestsPerSecond, cpuUs, p99: r.p99ms };
    }
    const loaded = rss(server.proc.pid);
    console.log(`${"".padEnd(34)} RSS idle ${fmt(idle, 1)} MB, after the runs ${fmt(loaded.now, 1)} MB (peak ${fmt(loaded.peak, 1)} MB)`);
    return { out, idle, loaded: loaded.now };
  } finally {
    await server.stop();
  }
}

console.log(`${seconds} s each, wrk -t1 -c32; WEB_THREADS=1 and ${many}, interleaved\n`);
const runs = [];
for (const threads of [1, many, many, 1]) runs.push({ threads, ...(await measure(threads)) });
console.log("\nratio (WEB_THREADS=" + many + " / 1), per pair of runs:");
for (const label of ["signed-in status", "home timeline"]) {
  const one = runs.filter((r) => r.threads === 1).map((r) => r.out[label]!);
  const two = runs.filter((r) => r.threads === many).map((r) => r.out[label]!);
  const ratios = two.map((t, i) => t.rps / one[i]!.rps);
  const cpu = two.map((t, i) => t.cpuUs / one[i]!.cpuUs);
  console.log(`${label.padEnd(20)} req/s ${ratios.map((x) => `${fmt(x, 2)}x`).join(", ")}   CPU/request ${cpu.map((x) => `${fmt(x, 2)}x`).join(", ")}`);
}
