/**
 * Fan-out: a post by an account with 1,000 remote followers spread over 100 servers (simulated
 * on loopback by fed-sim.ts, a process of its own), timed from the POST to the last inbox
 * receiving its copy. Two cases: followers on servers with shared inboxes (one delivery per
 * server, as with Mastodon peers: 100 POSTs) and followers with personal inboxes only (1,000
 * POSTs). Each case runs twice: alone (the time, and the server's CPU per delivery), then while
 * wrk reads a status from the same server, whose throughput during the deliveries is compared
 * with its throughput just before them, in the same wrk run (responses counted per 100 ms).
 *
 *   bun scripts/bench/federation-fanout.ts
 */
import { startSim, until } from "./fed-common.ts";
import { cpuSeconds, fmt, requireWrk, seedUser, startRookery, wrkTimeline } from "./lib.ts";

requireWrk();
const PORT = 3912;
const SERVERS = 100;
const ACTORS = 10;
/** Reads measured before the post, the baseline of the reads during the deliveries. */
const BEFORE_MS = 3000;

const sim = await startSim({ servers: SERVERS, actors: ACTORS, port: 3913 });
const rookery = await startRookery(PORT, { PUBLIC_URL: `http://127.0.0.1:${PORT}`, ALLOW_PRIVATE_ADDRESSES: "true" });
try {
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const alice = await seedUser(rookery, "alice");
  const bob = await seedUser(rookery, "bob");
  const reader = await seedUser(rookery, "reader");

  // Set-up over federation: 1,000 actors with shared inboxes follow alice, 1,000 with personal
  // inboxes only follow bob (signed Follows, each accepted).
  const setupStarted = Date.now();
  const setupCpu = cpuSeconds(rookery.proc.pid);
  await sim.follow(`${rookery.url}/users/alice`, "s");
  await sim.follow(`${rookery.url}/users/bob`, "p");
  const followers = (id: string) => fetch(`${rookery.url}/api/v1/accounts/${id}`).then((r) => r.json() as Promise<{ followers_count: number }>).then((a) => a.followers_count);
  await until("2,000 follows stored and accepted", async () => (await followers(alice.id)) === SERVERS * ACTORS && (await followers(bob.id)) === SERVERS * ACTORS && (await sim.stats()).accepts === 2 * SERVERS * ACTORS, 600);
  console.log(`set-up: ${fmt(2 * SERVERS * ACTORS)} signed Follows from ${SERVERS} servers verified, stored and accepted in ${fmt((Date.now() - setupStarted) / 1000, 1)} s (server CPU ${fmt(((cpuSeconds(rookery.proc.pid) - setupCpu) * 1000) / (2 * SERVERS * ACTORS), 1)} ms per Follow)`);

  const read = (await (await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: auth(reader.token), body: JSON.stringify({ status: "A status to read" }) })).json()) as { id: string };
  const readUrl = `${rookery.url}/api/v1/statuses/${read.id}`;

  /** Posts as the account and waits for the simulator to have seen every delivery. */
  const post = async (token: string, expected: number) => {
    await sim.reset();
    const cpuBefore = cpuSeconds(rookery.proc.pid);
    const t0 = Date.now();
    const posted = await fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: auth(token), body: JSON.stringify({ status: "Hello, 1,000 followers" }) });
    if (posted.status !== 200) throw new Error(`post failed: ${posted.status}`);
    const done = await until(`${expected} deliveries`, async () => {
      const s = await sim.stats();
      return s.deliveries >= expected ? s : null;
    }, 120);
    return { t0, done, ms: done.last - t0, cpuMs: (cpuSeconds(rookery.proc.pid) - cpuBefore) * 1000 };
  };

  console.log(`reads: signed-in GET /api/v1/statuses/:id, wrk 1 thread, 32 connections\n`);
  for (const [token, expected, label] of [
    [alice.token, SERVERS, "shared inboxes (100 POSTs)"],
    [bob.token, SERVERS * ACTORS, "personal inboxes (1,000 POSTs)"],
  ] as const) {
    const quiet = await post(token, expected);
    console.log(`${label.padEnd(32)} alone:     1,000 followers reached in ${fmt(quiet.ms / 1000, 2)} s (first inbox after ${fmt(quiet.done.first - quiet.t0)} ms, ${quiet.done.inboxes} inboxes); server CPU ${fmt(quiet.cpuMs / expected, 2)} ms per POST`);

    const reads = wrkTimeline(readUrl, { connections: 32, headers: auth(reader.token) });
    const readsStarted = Date.now();
    // The window the reads before the post are measured in (its first half-second left out: wrk connecting).
    await Bun.sleep(BEFORE_MS);
    const loaded = await post(token, expected);
    const timeline = await reads.stop();
    const before = timeline.rate(readsStarted + 500, loaded.t0);
    const during = timeline.rate(loaded.t0, loaded.done.last);
    console.log(`${"".padEnd(32)} under reads: reached in ${fmt(loaded.ms / 1000, 2)} s; reads ${fmt(before.perSecond)} req/s before, ${fmt(during.perSecond)} req/s during = ${fmt((during.perSecond / before.perSecond) * 100, 1)}% (${during.buckets} x 100 ms)`);
  }
} finally {
  await rookery.stop();
  await sim.stop();
}
