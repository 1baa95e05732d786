/**
 * Fan-out: a post by an account with 1,000 remote followers spread over 100 servers (simulated
 * on loopback by fed-sim.ts, a process of its own), timed from the POST to the last inbox
 * receiving its copy, while wrk reads a status from the same server. Two cases: followers on
 * servers with shared inboxes (one delivery per server, as with Mastodon peers: 100 POSTs) and
 * followers with personal inboxes only (1,000 POSTs). Reads are measured in one-second slices
 * before and during the deliveries; the figure is the slices during the deliveries against the
 * slices before them.
 *
 *   bun scripts/bench/federation-fanout.ts
 */
import { spawn } from "bun";
import { join } from "node:path";
import { BUN, fmt, requireWrk, ROOT, seedUser, startRookery, wrkAsync, type WrkResult } from "./lib.ts";

requireWrk();
const PORT = 3912;
const SIM_PORT = 3913;
const SERVERS = 100;
const ACTORS = 10;
const sim = `http://127.0.0.1:${SIM_PORT}`;

async function until<T>(what: string, check: () => Promise<T | null | false>, seconds = 180): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${seconds} s`);
    await Bun.sleep(50);
  }
}

const simProc = spawn([BUN, join(ROOT, "scripts/bench/fed-sim.ts")], {
  env: { ...process.env, SIM_SERVERS: String(SERVERS), SIM_ACTORS: String(ACTORS), SIM_CONTROL_PORT: String(SIM_PORT) },
  stdout: "ignore",
  stderr: "inherit",
});
const rookery = await startRookery(PORT, { PUBLIC_URL: `http://127.0.0.1:${PORT}`, ALLOW_PRIVATE_ADDRESSES: "true" });
try {
  await until("simulated servers", () => fetch(`${sim}/stats`).then((r) => r.ok));
  const stats = () => fetch(`${sim}/stats`).then((r) => r.json() as Promise<{ accepts: number; deliveries: number; inboxes: number; first: number; last: number }>);
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const alice = await seedUser(rookery, "alice");
  const bob = await seedUser(rookery, "bob");
  const reader = await seedUser(rookery, "reader");

  const setupStarted = Date.now();
  await fetch(`${sim}/follow?target=${encodeURIComponent(`${rookery.url}/users/alice`)}&kind=s`, { method: "POST" });
  await fetch(`${sim}/follow?target=${encodeURIComponent(`${rookery.url}/users/bob`)}&kind=p`, { method: "POST" });
  const followers = (id: string) => fetch(`${rookery.url}/api/v1/accounts/${id}`).then((r) => r.json() as Promise<{ followers_count: number }>).then((a) => a.followers_count);
  await until("2,000 follows stored and accepted", async () => (await followers(alice.id)) === SERVERS * ACTORS && (await followers(bob.id)) === SERVERS * ACTORS && (await stats()).accepts === 2 * SERVERS * ACTORS);
  console.log(`set-up: ${fmt(2 * SERVERS * ACTORS)} signed Follows from ${SERVERS} servers verified, stored and accepted in ${fmt((Date.now() - setupStarted) / 1000, 1)} s`);

  const read = (await (await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: auth(reader.token), body: JSON.stringify({ status: "A status to read" }) })).json()) as { id: string };
  const readUrl = `${rookery.url}/api/v1/statuses/${read.id}`;
  const slice = async () => {
    const start = Date.now();
    const r: WrkResult = await wrkAsync(readUrl, { seconds: 1, connections: 32, headers: auth(reader.token) });
    return { start, end: Date.now(), rps: r.requestsPerSecond };
  };
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  console.log(`reads: signed-in GET /api/v1/statuses/:id, wrk 1 thread, 32 connections, 1 s slices\n`);

  for (const [who, token, expected, label] of [
    [alice, alice.token, SERVERS, "shared inboxes (100 POSTs)"],
    [bob, bob.token, SERVERS * ACTORS, "personal inboxes (1,000 POSTs)"],
  ] as const) {
    void who;
    await fetch(`${sim}/reset`, { method: "POST" });
    const before: number[] = [];
    for (let i = 0; i < 4; i++) before.push((await slice()).rps);
    const slices: { start: number; end: number; rps: number }[] = [];
    let delivering = true;
    const reading = (async () => {
      while (delivering || slices.length < 2) slices.push(await slice());
    })();
    await Bun.sleep(200);
    const t0 = Date.now();
    const posted = await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: auth(token), body: JSON.stringify({ status: "Hello, 1,000 followers" }) });
    if (posted.status !== 200) throw new Error(`post failed: ${posted.status}`);
    const done = await until(`${expected} deliveries`, async () => {
      const s = await stats();
      return s.deliveries >= expected ? s : null;
    }, 120);
    delivering = false;
    await reading;
    const during = slices.filter((s) => s.start < done.last && s.end > t0).map((s) => s.rps);
    const base = mean(before);
    console.log(`${label.padEnd(32)} 1,000 followers reached in ${fmt((done.last - t0) / 1000, 2)} s (first inbox after ${fmt(done.first - t0)} ms, ${done.inboxes} inboxes)`);
    console.log(`${"".padEnd(32)} reads ${fmt(base)} req/s before, ${fmt(mean(during))} req/s during (${fmt((mean(during) / base) * 100, 1)}%, ${during.length} slices)`);
  }
} finally {
  simProc.kill();
  await rookery.stop();
}
