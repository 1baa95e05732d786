/**
 * Relays (issue 28): what a relay's stream costs a single-user server, and how soon relays fill
 * a fresh one's federated timeline. The relays and the origin servers are simulated
 * (relay-sim.ts, pinned to CPU 0); Rookery runs pinned to CPU 1.
 *
 * 1. Cost: Rookery subscribes to the Mastodon relay (`rookery relays add`); the relay forwards
 *    Linked-Data-signed Creates of 100 authors nobody here follows, in requests it signs. First
 *    as fast as they go (what one core takes at most), then at growing paced rates while wrk
 *    reads the federated timeline (signed in, 20 a page): the highest rate at which the reads
 *    keep 80 % of their throughput alone, and every stored status keeps up.
 * 2. Fill: a fresh server subscribes to both relays (Mastodon and LitePub) at once, each then
 *    sending at a realistic rate (RATE a second, default 2: a relay of a few hundred servers);
 *    the time from `relays add` to the first status, and to a full first page (20) and two (40)
 *    of the federated timeline.
 *
 *   bun scripts/bench/relay-stream.ts [unpaced count, default 2000] [fill rate per relay, default 2]
 */
import { Database } from "bun:sqlite";
import { spawn } from "bun";
import { join } from "node:path";
import { until } from "./fed-common.ts";
import { BUN, cpuSeconds, fmt, pinned, ROOT, seedUser, startRookery, wrkAsync } from "./lib.ts";

const UNPACED = Number(process.argv[2] ?? 2000);
const FILL_RATE = Number(process.argv[3] ?? 2);
const SIM_PORT = 3931;
const SECONDS = 8;
const RATES = [10, 25, 35, 50, 75, 100, 150, 200];

const proc = spawn(pinned("0", [BUN, join(ROOT, "scripts/bench/relay-sim.ts")]), { env: { ...process.env, SIM_CONTROL_PORT: String(SIM_PORT) }, stdout: "ignore", stderr: "inherit" });
const sim = `http://127.0.0.1:${SIM_PORT}`;
const call = async (path: string) => {
  const res = await fetch(`${sim}${path}`, { method: "POST" });
  if (!res.ok) throw new Error(`simulator ${path}: ${res.status}`);
  return res.json() as Promise<any>;
};
await until("simulated relays", async () => (await fetch(`${sim}/stats`)).ok, 30);
const stats = async () => (await fetch(`${sim}/stats`)).json() as Promise<{ inboxes: { m: string; l: string }; actors: { m: string; l: string } }>;
const { inboxes, actors } = await stats();

/** A Rookery of its own on CPU 1, its database read beside it, a signed-in reader. */
async function server(port: number) {
  const rookery = await startRookery(port, { PUBLIC_URL: `http://127.0.0.1:${port}`, ALLOW_PRIVATE_ADDRESSES: "true" }, "1");
  const reader = await seedUser(rookery, "reader");
  const db = new Database(join(rookery.dataDir, "rookery.sqlite3"), { readonly: true });
  const storedQuery = db.query<{ n: number }, []>("SELECT count(*) AS n FROM statuses WHERE uri IS NOT NULL");
  const accepted = db.query<{ n: number }, []>("SELECT count(*) AS n FROM relays WHERE state = 'accepted'");
  return { rookery, reader, db, stored: () => storedQuery.get()!.n, accepted: () => accepted.get()!.n };
}

const cost = await server(3932);
try {
  cost.rookery.cli(["relays", "add", inboxes.m]);
  await until("the Mastodon relay accepted", async () => cost.accepted() === 1, 30);
  const total = UNPACED + 300 + RATES.reduce((sum, r) => sum + r * SECONDS, 0);
  const prepared = await call(`/prepare?relay=m&n=${total}`);
  console.log(`${fmt(total)} Creates signed by their authors in ${fmt(prepared.ms / 1000, 1)} s (not counted)`);

  const run = async (n: number, rate: number) => {
    const before = cost.stored();
    const cpu = cpuSeconds(cost.rookery.proc.pid);
    const sent = await call(`/stream?relay=m&n=${n}&rate=${rate}&concurrency=${rate === 0 ? 16 : 8}`);
    const storedAt = await until(`${n} relayed statuses stored`, async () => (cost.stored() >= before + n ? Date.now() : null), 300);
    return { sent, ms: storedAt - sent.started, cpuMs: (cpuSeconds(cost.rookery.proc.pid) - cpu) * 1000, lagMs: storedAt - sent.started - sent.sendMs };
  };
  await run(300, 0); // warm-up: keys fetched, paths compiled
  const max = await run(UNPACED, 0);
  console.log(`\nunpaced: ${fmt(UNPACED)} relayed Creates stored in ${fmt(max.ms / 1000, 2)} s = ${fmt((UNPACED / max.ms) * 1000)}/s, ${fmt(max.cpuMs / UNPACED, 2)} ms of CPU each (answers: ${JSON.stringify(max.sent.statuses)})`);

  const timeline = `${cost.rookery.url}/api/v1/timelines/public?limit=20`;
  const read = () => wrkAsync(timeline, { seconds: SECONDS, connections: 16, headers: { authorization: `Bearer ${cost.reader.token}` } });
  const alone = await read();
  console.log(`\nfederated timeline alone: ${fmt(alone.requestsPerSecond)} reads/s (p99 ${fmt(alone.p99ms, 1)} ms)\n`);
  console.log("relayed/s   reads/s   of alone   read p99   last stored after the last sent");
  for (const rate of RATES) {
    const [reads, streamed] = await Promise.all([read(), run(rate * SECONDS, rate)]);
    const share = reads.requestsPerSecond / alone.requestsPerSecond;
    console.log(`${String(rate).padStart(9)} ${fmt(reads.requestsPerSecond).padStart(9)} ${`${fmt(share * 100, 1)} %`.padStart(10)} ${`${fmt(reads.p99ms, 1)} ms`.padStart(10)}   ${fmt(streamed.lagMs)} ms`);
    if (share < 0.8) break;
  }
} finally {
  cost.db.close();
  await cost.rookery.stop();
}

// A fresh server, both relays at a realistic rate.
const fill = await server(3933);
try {
  await call(`/prepare?relay=m&n=${FILL_RATE * 30}`);
  await call(`/prepare?relay=l&n=${FILL_RATE * 30}`);
  const started = Date.now();
  fill.rookery.cli(["relays", "add", inboxes.m]);
  fill.rookery.cli(["relays", "add", actors.l]);
  const acceptedAt = await until("both relays accepted", async () => (fill.accepted() === 2 ? Date.now() : null), 30);
  const streams = Promise.all([call(`/stream?relay=m&n=${FILL_RATE * 30}&rate=${FILL_RATE}&concurrency=2`), call(`/stream?relay=l&n=${FILL_RATE * 30}&rate=${FILL_RATE}&concurrency=2`)]);
  const page = async () => ((await (await fetch(`${fill.rookery.url}/api/v1/timelines/public?limit=40`, { headers: { authorization: `Bearer ${fill.reader.token}` } })).json()) as unknown[]).length;
  const at = async (n: number) => until(`${n} statuses in the federated timeline`, async () => ((await page()) >= n ? Date.now() : null), 120);
  const [first, twenty, forty] = [await at(1), await at(20), await at(40)];
  await streams;
  const s = (t: number) => `${fmt((t - started) / 1000, 1)} s`;
  console.log(`\nfill, two relays (Mastodon and LitePub) at ${FILL_RATE}/s each: both accepted after ${s(acceptedAt)} (two CLI runs included), first status ${s(first)}, 20 ${s(twenty)}, 40 ${s(forty)}`);
} finally {
  fill.db.close();
  await fill.rookery.stop();
  proc.kill();
  await proc.exited;
}
