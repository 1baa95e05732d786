/**
 * Where a request's cost goes on PostgreSQL (docs/scaling.md, "What it costs"): the floor of
 * one statement (Bun.sql's CPU and PostgreSQL's), then one Rookery process on a fresh database
 * of the throwaway cluster: posts and home reads, with Rookery's and PostgreSQL's CPU per
 * request (from /proc) and the database's commits per request; then the statements of one post
 * and one home read, as PostgreSQL logs them (log_statement), the queues' pollers left out.
 *
 *   bun scripts/bench/postgres-costs.ts [--seconds=5] [--connections=8] [--port=4790]
 *
 * Needs wrk and PostgreSQL's binaries (test/support/postgres.ts). Loopback only.
 */
import { readdirSync, readFileSync } from "node:fs";
import { SQL } from "bun";
import { freshPgDatabase } from "../../test/support/postgres.ts";
import { POSTING_LUA as POSTING, cpuSeconds, requireWrk, seedUser, startRookery, wrk } from "./lib.ts";

requireWrk();
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const seconds = Number(arg("seconds") ?? 5);
const connections = Number(arg("connections") ?? 8);
const port = Number(arg("port") ?? 4790);


/** The CPU seconds of every PostgreSQL process on the machine (the cluster's backends and workers). */
function postgresCpu(): number {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("postgres")) total += cpuSeconds(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const µs = (s: number, n: number) => `${((s / n) * 1e6).toFixed(0)} µs`;

// 1. The floor: the smallest statements, one after another and eight at once.
{
  const pg = await freshPgDatabase();
  const sql = new SQL(pg.url, { max: 8 });
  await sql`SELECT 1`;
  const N = 20_000;
  const runs: [string, () => Promise<unknown>][] = [
    ["SELECT 1, one at a time", async () => { for (let i = 0; i < N; i++) await sql`SELECT 1 AS one`; }],
    ["SELECT 1, eight at once", () => Promise.all(Array.from({ length: 8 }, async () => { for (let i = 0; i < N / 8; i++) await sql`SELECT 1 AS one`; }))],
    ["an account by id (parameters)", async () => { for (let i = 0; i < N; i++) await sql.unsafe("SELECT * FROM accounts WHERE id = $1", [i]); }],
  ];
  for (const [label, run] of runs) {
    const [c0, p0, t0] = [cpuSeconds(process.pid), postgresCpu(), performance.now()];
    await run();
    const [c, p, t] = [cpuSeconds(process.pid) - c0, postgresCpu() - p0, performance.now() - t0];
    console.log(`${label}: ${((N / t) * 1000).toFixed(0)}/s; per statement ${µs(c, N)} of Bun.sql's CPU, ${µs(p, N)} of PostgreSQL's`);
  }
  await sql.close();
  await pg.drop();
}

// 2. One Rookery process: posts, then home reads (a reader following the writer).
const pg = await freshPgDatabase();
const sql = new SQL(pg.url, { max: 1 });
const server = await startRookery(port, { DATABASE_URL: pg.url, PUBLIC_URL: `http://127.0.0.1:${port}` });
try {
  const writer = await seedUser(server, "writer");
  const reader = await seedUser(server, "reader");
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  await fetch(`${server.url}/api/v1/accounts/${writer.id}/follow`, { method: "POST", headers: auth(reader.token) });
  for (let i = 0; i < 40; i++) await fetch(`${server.url}/api/v1/statuses`, { method: "POST", headers: auth(writer.token), body: JSON.stringify({ status: `seeded ${i}` }) });
  const commits = async () => Number((await sql`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)[0].xact_commit);
  for (const [label, url, options] of [
    ["home reads", `${server.url}/api/v1/timelines/home`, { headers: { authorization: `Bearer ${reader.token}` } }],
    ["posts", `${server.url}/api/v1/statuses`, { headers: auth(writer.token), lua: POSTING }],
  ] as const) {
    const [x0, c0, p0] = [await commits(), cpuSeconds(server.proc.pid), postgresCpu()];
    const r = wrk(url, { seconds, connections, ...options });
    const [x, c, p] = [(await commits()) - x0, cpuSeconds(server.proc.pid) - c0, postgresCpu() - p0];
    const n = r.requestsPerSecond * seconds;
    console.log(`${label}, ${connections} connections: ${r.requestsPerSecond.toFixed(0)}/s, p50 ${r.p50ms} ms; per request ${µs(c, n)} of Rookery's CPU, ${µs(p, n)} of PostgreSQL's, ${(x / n).toFixed(1)} commits`);
  }

  // 3. The statements of one post and one home read, as PostgreSQL logs them: a new process,
  // whose sessions log every statement (the setting applies to sessions opened after it).
  await sql.unsafe(`ALTER DATABASE "${pg.name}" SET log_statement = 'all'`);
  const logged = await startRookery(port + 1, { DATABASE_URL: pg.url, PUBLIC_URL: `http://127.0.0.1:${port + 1}` });
  try {
    const data = String((await sql`SHOW data_directory`)[0].data_directory);
    const logFile = `${data}/../server.log`;
    const statementsOf = async (label: string, request: () => Promise<Response>) => {
      // Warm: the first requests prepare statements and fill caches.
      for (let i = 0; i < 3; i++) await request();
      await Bun.sleep(300);
      const from = readFileSync(logFile, "utf8").length;
      const res = await request();
      if (!res.ok) throw new Error(`${label}: ${res.status}`);
      await Bun.sleep(300);
      const lines = readFileSync(logFile, "utf8").slice(from).split("\n").filter((l) => /LOG: {2}(statement|execute)/.test(l));
      // Pollers of the queues log too: left out, by what they touch.
      const own = lines.filter((l) => !/fedify_messages|claimed_until|import_rows|FROM imports/.test(l)).map((l) => l.replace(/^.*LOG: {2}/, "").slice(0, 140));
      console.log(`\n${label}: ${own.length} statements\n  ${own.join("\n  ")}`);
    };
    await statementsOf("one post", () => fetch(`${logged.url}/api/v1/statuses`, { method: "POST", headers: auth(writer.token), body: JSON.stringify({ status: `logged ${Math.random()}` }) }));
    await statementsOf("one home read", () => fetch(`${logged.url}/api/v1/timelines/home`, { headers: { authorization: `Bearer ${reader.token}` } }));
  } finally {
    await logged.stop();
  }
} finally {
  await server.stop();
  await sql.close();
  await pg.drop();
}
process.exit(0);
