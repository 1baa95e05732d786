import { readdirSync, readFileSync } from "node:fs";
import { SQL } from "bun";
import { freshPgDatabase } from "../../test/support/postgres.ts";
import { cpuSeconds, seedUser, startRookery, wrk } from "./lib.ts";

const POSTING = `
n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, nil, '{"status":"measured ' .. n .. '"}')
end`;
function pgCpu(): number {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("postgres")) total += cpuSeconds(Number(pid));
    } catch {}
  }
  return total;
}
const pg = await freshPgDatabase();
const server = await startRookery(4790, { DATABASE_URL: pg.url, PUBLIC_URL: "http://127.0.0.1:4790" });
const writer = await seedUser(server, "writer");
const reader = await seedUser(server, "reader");
const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
await fetch(`${server.url}/api/v1/accounts/${writer.id}/follow`, { method: "POST", headers: auth(reader.token) });
const sql = new SQL(pg.url, { max: 1 });
const stats = async () => (await sql`SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_returned, tup_fetched FROM pg_stat_database WHERE datname = current_database()`)[0];
for (const conns of [8]) {
  const s0 = await stats(); const c0 = cpuSeconds(server.proc.pid); const p0 = pgCpu();
  const r = wrk(`${server.url}/api/v1/statuses`, { seconds: 5, connections: conns, headers: auth(writer.token), lua: POSTING });
  const s1 = await stats(); const c1 = cpuSeconds(server.proc.pid); const p1 = pgCpu();
  const n = r.requestsPerSecond * 5;
  console.log(`posts c=${conns}: ${r.requestsPerSecond.toFixed(0)}/s p50 ${r.p50ms} ms; per post: rookery CPU ${((c1 - c0) / n * 1e3).toFixed(2)} ms, postgres CPU ${((p1 - p0) / n * 1e3).toFixed(2)} ms, commits ${((s1.xact_commit - s0.xact_commit) / n).toFixed(1)}, rollbacks ${((s1.xact_rollback - s0.xact_rollback) / n).toFixed(1)}, inserted ${((s1.tup_inserted - s0.tup_inserted) / n).toFixed(1)}, updated ${((s1.tup_updated - s0.tup_updated) / n).toFixed(1)}, returned ${((s1.tup_returned - s0.tup_returned) / n).toFixed(0)}, fetched ${((s1.tup_fetched - s0.tup_fetched) / n).toFixed(0)}`);
}
await sql.unsafe("ANALYZE");
for (const mode of ["force_custom_plan", "force_generic_plan"]) {
  await sql.unsafe(`SET plan_cache_mode = ${mode}`);
  await sql.unsafe("DEALLOCATE ALL");
  await sql.unsafe("PREPARE q(bigint) AS SELECT status_id FROM home_feed WHERE account_id = $1 ORDER BY status_id DESC LIMIT 20");
  const plan = await sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE q(${reader.id})`);
  console.log(mode, plan.map((r: any) => r["QUERY PLAN"]).join("\n"));
}
await sql.close();
await server.stop();
await pg.drop();
process.exit(0);
