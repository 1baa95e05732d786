import { readdirSync, readFileSync } from "node:fs";
import { SQL } from "bun";
import { freshPgDatabase } from "../../test/support/postgres.ts";
import { cpuSeconds } from "./lib.ts";
function pgCpu(): number {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try { if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("postgres")) total += cpuSeconds(Number(pid)); } catch {}
  }
  return total;
}
const pg = await freshPgDatabase();
const sql = new SQL(pg.url, { max: 8 });
await sql`SELECT 1`;
const N = 20000;
for (const [label, run] of [
  ["SELECT 1 (sequential)", async () => { for (let i = 0; i < N; i++) await sql`SELECT 1 AS one`; }],
  ["SELECT 1 (8 at once)", async () => { await Promise.all(Array.from({ length: 8 }, async () => { for (let i = 0; i < N / 8; i++) await sql`SELECT 1 AS one`; })); }],
  ["accounts by id (unsafe, params)", async () => { for (let i = 0; i < N; i++) await sql.unsafe("SELECT * FROM accounts WHERE id = $1", [i]); }],
] as const) {
  const c0 = cpuSeconds(process.pid), p0 = pgCpu(), t0 = performance.now();
  await run();
  const t = performance.now() - t0, c = cpuSeconds(process.pid) - c0, p = pgCpu() - p0;
  console.log(`${label}: ${(N / t * 1000).toFixed(0)}/s; per statement client CPU ${(c / N * 1e6).toFixed(0)} µs, postgres CPU ${(p / N * 1e6).toFixed(0)} µs`);
}
await sql.close();
await pg.drop();
process.exit(0);
