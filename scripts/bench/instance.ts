/**
 * The documents every client reads at start and on every refresh: GET /api/v1/instance,
 * /api/v2/instance and /api/v1/accounts/verify_credentials (issue 30), in req/s and server CPU
 * per request (read from /proc, so wrk's own CPU does not count), and a revalidation with the
 * ETag (If-None-Match: 304).
 *
 *   bun scripts/bench/instance.ts [seconds per run, default 8]
 */
import { cpuSeconds, fmt, requireWrk, row, seedUser, startRookery, wrk } from "./lib.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 8);
const rookery = await startRookery(4590);
try {
  const alice = await seedUser(rookery, "alice");
  // Some posts, so that the counts are not of an empty server.
  for (let i = 0; i < 20; i++) {
    await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" }, body: JSON.stringify({ status: `post ${i}` }) });
  }
  const auth = { authorization: `Bearer ${alice.token}` };
  const etagOf = async (path: string, headers: Record<string, string> = {}) => (await fetch(`${rookery.url}${path}`, { headers })).headers.get("etag");
  const runs: [string, string, Record<string, string>][] = [
    ["GET /api/v1/instance", "/api/v1/instance", {}],
    ["GET /api/v2/instance", "/api/v2/instance", {}],
    ["GET verify_credentials", "/api/v1/accounts/verify_credentials", auth],
  ];
  for (const [label, path, headers] of [...runs]) {
    const etag = await etagOf(path, headers);
    if (etag) runs.push([`${label}, If-None-Match`, path, { ...headers, "if-none-match": etag }]);
  }
  console.log(`${seconds} s each, wrk -t1 -c32, one server process\n`);
  for (const [label, path, headers] of runs) {
    const before = cpuSeconds(rookery.proc.pid);
    const r = wrk(`${rookery.url}${path}`, { seconds, connections: 32, headers });
    const cpu = cpuSeconds(rookery.proc.pid) - before;
    row(label, r);
    console.log(`${"".padEnd(34)} server CPU ${fmt((cpu / (r.requestsPerSecond * seconds)) * 1e6, 1)} µs/request`);
  }
} finally {
  await rookery.stop();
}
