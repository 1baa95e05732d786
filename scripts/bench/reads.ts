/**
 * The signed-in reads of issue 30, one server process: for each, server CPU per request
 * (utime+stime of the server from /proc over a short wrk run, so wrk's CPU does not count; the
 * figure that holds on a shared machine, where req/s does not), req/s, and, counted in-process,
 * SQL statements and JavaScript heap per request.
 *
 *   bun scripts/bench/reads.ts [seconds per run, default 4] [--sql] [--only=<label part>]
 *
 * --sql prints each read's statements. BENCH_PROFILE=dir writes the server's CPU profile.
 */
import { cpuSeconds, fmt, requireWrk, seedUser, startRookery, wrk } from "./lib.ts";
import { countReads } from "./query-count.ts";
import { readEndpoints, seedReads } from "./reads-seed.ts";

requireWrk();
const args = process.argv.slice(2);
const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 4);
const only = args.find((a) => a.startsWith("--only="))?.slice(7);
const showSql = args.includes("--sql");

const counts = new Map((await countReads(only)).map((c) => [c.label, c]));
const rookery = await startRookery(4610);
try {
  const state = await seedReads(rookery.url, await seedUser(rookery, "author"), await seedUser(rookery, "reader"));
  console.log(`wrk -t1 -c32, ${seconds} s each, one server process, ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(`${"read".padEnd(36)} ${"req/s".padStart(8)} ${"CPU µs/req".padStart(11)} ${"SQL".padStart(4)} ${"heap KB/req".padStart(12)}`);
  for (const e of readEndpoints(state)) {
    if (only && !e.label.includes(only)) continue;
    const before = cpuSeconds(rookery.proc.pid);
    const r = wrk(`${rookery.url}${e.path}`, { seconds, connections: 32, headers: e.headers });
    const cpu = cpuSeconds(rookery.proc.pid) - before;
    const c = counts.get(e.label)!;
    const errors = r.non2xx ? `  non-2xx: ${r.non2xx}` : "";
    console.log(`${e.label.padEnd(36)} ${fmt(r.requestsPerSecond).padStart(8)} ${fmt((cpu / (r.requestsPerSecond * seconds)) * 1e6, 1).padStart(11)} ${String(c.statements).padStart(4)} ${fmt(c.heapBytes / 1024, 1).padStart(12)}${errors}`);
    if (showSql) for (const s of c.sql) console.log(`    ${s.replace(/\s+/g, " ").slice(0, 220)}`);
  }
} finally {
  await rookery.stop();
}
