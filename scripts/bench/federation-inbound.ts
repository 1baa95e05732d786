/**
 * Incoming: signed Create activities of public Notes posted at Rookery's shared inbox by the
 * simulated servers (fed-sim.ts), timed from the first request to the last status stored. The
 * Creates are signed before the clock starts (the sender's signing is not what is measured);
 * their authors are followed by a local account, so Rookery keeps every one of them (it drops
 * a Create from an author nobody here follows). Rookery runs pinned to CPU 1, the simulator on
 * CPU 0: the figure is for one core.
 *
 * Baseline in the same run: the same blast at a bare Elysia route on the same core that parses
 * the JSON and answers 202 (the most a server could take from this sender).
 *
 *   bun scripts/bench/federation-inbound.ts [activities, default 5000] [concurrency, default 32]
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { startSim, until, type BlastResult } from "./fed-common.ts";
import { cpuSeconds, fmt, seedUser, startBaseline, startRookery } from "./lib.ts";

const N = Number(process.argv[2] ?? 5000);
const CONCURRENCY = Number(process.argv[3] ?? 32);
const SERVERS = 100;
const PORT = 3922;
const SERVER_CPU = "1";
const SIM_CPU = "0";

const sim = await startSim({ servers: SERVERS, actors: 1, port: 3923, cpus: SIM_CPU });
const baseline = await startBaseline(3921, SERVER_CPU);
const rookery = await startRookery(PORT, { PUBLIC_URL: `http://127.0.0.1:${PORT}`, ALLOW_PRIVATE_ADDRESSES: "true" }, SERVER_CPU);
// Read-only, beside the server: what is stored is what counts, not the 202s.
let db: Database | null = null;
try {
  const reader = await seedUser(rookery, "reader");
  const auth = { authorization: `Bearer ${reader.token}`, "content-type": "application/json" };
  const account = async () => (await fetch(`${rookery.url}/api/v1/accounts/${reader.id}`)).json() as Promise<{ followers_count: number; following_count: number }>;

  // Set-up, all over federation: one actor on each simulated server follows the reader (Rookery
  // learns of them, and they of the reader), then the reader follows each back (Follow, Accept).
  const setupStarted = Date.now();
  await sim.follow(`${rookery.url}/users/reader`, "s");
  await until("100 follows of the reader", async () => (await account()).followers_count === SERVERS && (await sim.stats()).accepts === SERVERS);
  const remoteIds: string[] = [];
  for (let next: string | null = `${rookery.url}/api/v1/accounts/${reader.id}/followers?limit=80`; next; ) {
    const res: Response = await fetch(next, { headers: auth });
    remoteIds.push(...((await res.json()) as { id: string }[]).map((a) => a.id));
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1] ?? null;
  }
  for (const id of remoteIds) {
    const res = await fetch(`${rookery.url}/api/v1/accounts/${id}/follow`, { method: "POST", headers: auth });
    if (!res.ok) throw new Error(`follow ${id}: ${res.status}`);
  }
  await until("the reader follows 100 remote authors", async () => (await account()).following_count === SERVERS);
  console.log(`set-up: ${SERVERS} remote authors on ${SERVERS} servers follow and are followed by the reader (${fmt((Date.now() - setupStarted) / 1000, 1)} s)`);

  db = new Database(join(rookery.dataDir, "rookery.sqlite3"), { readonly: true });
  const remoteStatuses = db.query<{ n: number }, []>("SELECT count(*) AS n FROM statuses WHERE uri IS NOT NULL");
  const stored = () => remoteStatuses.get()!.n;
  const authors = await sim.actors("s");
  const inbox = `${rookery.url}/inbox`;

  /** One blast, then polls the database until all of it is stored; returns when the last was. */
  const run = async (n: number) => {
    const before = stored();
    const cpuBefore = cpuSeconds(rookery.proc.pid);
    const blast = await sim.blast(inbox, n, CONCURRENCY, authors);
    const storedAt = await until(`${n} statuses stored`, async () => (stored() >= before + n ? Date.now() : null), 300);
    // The signing before the first request is idle time for the server: its CPU over the run is the work of n activities.
    return { blast, storedAt, count: stored() - before, cpuMs: (cpuSeconds(rookery.proc.pid) - cpuBefore) * 1000 };
  };
  // Warm-up: each author's key fetched and cached, the code paths compiled.
  await run(4 * SERVERS);

  const base = await sim.blast(`${baseline.url}/inbox`, N, CONCURRENCY, authors);
  const measured = await run(N);
  const accepted = (b: BlastResult) => b.statuses["202"] ?? 0;
  const perSecond = (count: number, ms: number) => (count / ms) * 1000;
  const line = (label: string, count: number, ms: number, extra = "") =>
    console.log(`${label.padEnd(44)} ${fmt(count).padStart(6)} in ${fmt(ms / 1000, 2).padStart(6)} s = ${fmt(perSecond(count, ms)).padStart(6)}/s${extra}`);
  console.log(`\n${fmt(N)} signed Creates from ${authors.length} authors, ${CONCURRENCY} at a time; server on CPU ${SERVER_CPU}, simulator on CPU ${SIM_CPU}`);
  console.log(`(signing them took the simulator ${fmt(measured.blast.signMs / 1000, 2)} s, not counted)\n`);
  line("baseline: bare Elysia parses, answers 202", accepted(base), base.sendMs);
  line("Rookery: answered 202 (verified, queued)", accepted(measured.blast), measured.blast.sendMs, `  ${fmt((perSecond(accepted(measured.blast), measured.blast.sendMs) / perSecond(accepted(base), base.sendMs)) * 100, 1)}% of baseline`);
  line("Rookery: stored (first request to last row)", measured.count, measured.storedAt - measured.blast.started, `  last stored ${fmt(measured.storedAt - measured.blast.started - measured.blast.sendMs)} ms after the last 202`);
  console.log(`Rookery's CPU time: ${fmt(measured.cpuMs / measured.count, 2)} ms per activity stored (${fmt(measured.count / (measured.cpuMs / 1000))} activities per CPU-second)`);
  const other = Object.entries(measured.blast.statuses).filter(([status]) => status !== "202");
  if (other.length > 0) console.log(`other answers: ${other.map(([s, n]) => `${s} x ${n}`).join(", ")}`);
} finally {
  db?.close();
  await rookery.stop();
  await baseline.stop();
  await sim.stop();
}
