/**
 * Status throughput: reading one public status, reading a home timeline of 20, and posting,
 * each beside a bare Elysia route measured in the same run. Also counts the SQL queries each
 * kind of request makes, and the server's memory.
 *
 *   bun scripts/bench/statuses.ts [seconds per run, default 8]
 */
import { fmt, requireWrk, row, rss, seedUser, startBaseline, startRookery, wrk } from "./lib.ts";
import { countQueries } from "./query-count.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 8);
const baseline = await startBaseline(3901);
const rookery = await startRookery(3902);
try {
  const author = await seedUser(rookery, "author");
  const reader = await seedUser(rookery, "reader");
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  await fetch(`${rookery.url}/api/v1/accounts/${author.id}/follow`, { method: "POST", headers: auth(reader.token) });
  let statusId = "";
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: auth(author.token), body: JSON.stringify({ status: `Seed status ${i} with a #tag and https://example.com/${i}` }) });
    statusId = ((await res.json()) as { id: string }).id;
  }
  const idle = rss(rookery.proc.pid);
  console.log(`Rookery idle RSS after seeding: ${fmt(idle.now, 1)} MB`);
  console.log(`wrk: 1 thread, 64 connections, ${seconds} s per run, loopback\n`);

  const base = wrk(`${baseline.url}/`, { seconds });
  row("baseline: bare Elysia GET /", base);
  row("GET /api/v1/statuses/:id (anon)", wrk(`${rookery.url}/api/v1/statuses/${statusId}`, { seconds }), base);
  row("GET /api/v1/statuses/:id (signed in)", wrk(`${rookery.url}/api/v1/statuses/${statusId}`, { seconds, headers: auth(reader.token) }), base);
  row("GET /api/v1/timelines/home?limit=20", wrk(`${rookery.url}/api/v1/timelines/home?limit=20`, { seconds, headers: auth(reader.token) }), base);
  row("POST /api/v1/statuses", wrk(`${rookery.url}/api/v1/statuses`, { seconds, method: "POST", body: JSON.stringify({ status: "Benchmark post with #tag and https://example.com" }), headers: auth(author.token) }), base);
  const after = rss(rookery.proc.pid);
  console.log(`\nRookery RSS after the runs: ${fmt(after.now, 1)} MB (peak ${fmt(after.peak, 1)} MB)`);
} finally {
  await rookery.stop();
  await baseline.stop();
}

console.log("\nSQL queries per request (in-process count):");
for (const [label, n] of await countQueries()) console.log(`  ${label.padEnd(40)} ${n}`);
