/**
 * Public pages: `/@name/:id` (a status with a thread of two replies) and `/@name`, against the
 * API's anonymous read of the same status, each beside a bare Elysia route in the same run.
 * Target (issue 15): the status page at least half the req/s of the API's anonymous read.
 *
 *   bun scripts/bench/pages.ts [seconds per run, default 8]
 */
import { requireWrk, row, seedUser, startBaseline, startRookery, wrk } from "./lib.ts";

requireWrk();
const seconds = Number(process.argv[2] ?? 8);
const baseline = await startBaseline(3931);
const rookery = await startRookery(3932);
try {
  const author = await seedUser(rookery, "author");
  const auth = { authorization: `Bearer ${author.token}`, "content-type": "application/json" };
  const post = async (body: Record<string, unknown>) => ((await (await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: auth, body: JSON.stringify(body) })).json()) as { id: string });
  for (let i = 0; i < 30; i++) await post({ status: `Seed status ${i} with a #tag and https://example.com/${i}` });
  const root = await post({ status: "The status whose page is read, with a #tag and https://example.com" });
  await post({ status: "A first reply", in_reply_to_id: root.id });
  await post({ status: "A second reply", in_reply_to_id: root.id });
  console.log(`wrk: 1 thread, 64 connections, ${seconds} s per run, loopback\n`);
  const base = wrk(`${baseline.url}/`, { seconds });
  row("baseline: bare Elysia GET /", base);
  const api = wrk(`${rookery.url}/api/v1/statuses/${root.id}`, { seconds });
  row("GET /api/v1/statuses/:id (anon)", api, base);
  const page = wrk(`${rookery.url}/@author/${root.id}`, { seconds, headers: { accept: "text/html" } });
  row("GET /@author/:id (status page)", page, base);
  row("GET /@author (profile page)", wrk(`${rookery.url}/@author`, { seconds, headers: { accept: "text/html" } }), base);
  console.log(`\nstatus page / API anonymous read: ${((page.requestsPerSecond / api.requestsPerSecond) * 100).toFixed(1)}% (target: at least 50%)`);
} finally {
  await rookery.stop();
  await baseline.stop();
}
