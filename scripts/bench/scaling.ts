/**
 * docs/scaling.md's figures, measured side by side in one run: posts per second and signed-in
 * reads per second (the home timeline) for one process on SQLite, one on PostgreSQL, and two and
 * three processes on PostgreSQL behind Caddy round-robin (as test/scaling/cluster.test.ts runs
 * them), each on a fresh database seeded alike. Reads before posts, as every benchmark here.
 * Every figure is printed with its ratio to one process on SQLite, measured in the same run.
 *
 *   bun scripts/bench/scaling.ts [--seconds=8] [--connections=64] [--port=4700]
 *
 * Needs wrk, PostgreSQL's binaries (a throwaway cluster, test/support/postgres.ts) and Caddy
 * (/usr/bin/caddy). Everything listens on loopback. On one machine the processes, Caddy,
 * PostgreSQL and wrk share its cores: the figures say what several processes cost there, not
 * what they gain on several machines.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCaddy } from "../../test/support/caddy.ts";
import { freshPgDatabase } from "../../test/support/postgres.ts";
import { POSTING_LUA as POSTING, fmt, requireWrk, seedUser, startRookery, wrk, type WrkResult } from "./lib.ts";

requireWrk();
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const seconds = Number(arg("seconds") ?? 8);
const connections = Number(arg("connections") ?? 64);
const firstPort = Number(arg("port") ?? 4700);


interface Setup {
  label: string;
  processes: number;
  postgres: boolean;
}
const SETUPS: Setup[] = [
  { label: "1 process, SQLite", processes: 1, postgres: false },
  { label: "1 process, PostgreSQL", processes: 1, postgres: true },
  { label: "2 processes, PostgreSQL", processes: 2, postgres: true },
  { label: "3 processes, PostgreSQL", processes: 3, postgres: true },
];

async function measure(setup: Setup, port: number): Promise<{ reads: WrkResult; posts: WrkResult }> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-scaling-"));
  const pg = setup.postgres ? await freshPgDatabase() : null;
  const publicPort = setup.processes > 1 ? port + 10 : port;
  const env: Record<string, string> = { DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${publicPort}` };
  if (pg) Object.assign(env, { DATABASE_URL: pg.url });
  const servers = [];
  try {
    // One after another: the first makes DATA_DIR's key files, which the others read.
    for (let i = 0; i < setup.processes; i++) servers.push(await startRookery(port + i, env));
    const caddy = setup.processes > 1 ? await startCaddy(publicPort, servers.map((s) => `127.0.0.1:${new URL(s.url).port}`)) : null;
    try {
      const front = { url: caddy?.url ?? servers[0]!.url, cli: servers[0]!.cli };
      const writer = await seedUser(front, "writer");
      const reader = await seedUser(front, "reader");
      const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
      const follow = await fetch(`${front.url}/api/v1/accounts/${writer.id}/follow`, { method: "POST", headers: auth(reader.token) });
      if (!follow.ok) throw new Error(`follow: ${follow.status}`);
      for (let i = 0; i < 40; i++) {
        const r = await fetch(`${front.url}/api/v1/statuses`, { method: "POST", headers: auth(writer.token), body: JSON.stringify({ status: `seeded ${i} #bench` }) });
        if (!r.ok) throw new Error(`seed post: ${r.status}`);
      }
      const reads = wrk(`${front.url}/api/v1/timelines/home`, { seconds, connections, headers: { authorization: `Bearer ${reader.token}` } });
      const posts = wrk(`${front.url}/api/v1/statuses`, { seconds, connections, headers: auth(writer.token), lua: POSTING });
      return { reads, posts };
    } finally {
      await caddy?.stop();
    }
  } finally {
    for (const s of servers) await s.stop();
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const line = (label: string, r: WrkResult, base: WrkResult) =>
  `| ${label} | ${fmt(r.requestsPerSecond)} | ${fmt((r.requestsPerSecond / base.requestsPerSecond) * 100)}% | ${fmt(r.p50ms, 1)} | ${fmt(r.p99ms, 1)} |${r.non2xx ? ` ${r.non2xx} non-2xx` : ""}`;

const results: { setup: Setup; reads: WrkResult; posts: WrkResult }[] = [];
for (const [i, setup] of SETUPS.entries()) {
  console.error(`measuring ${setup.label}...`);
  results.push({ setup, ...(await measure(setup, firstPort + i * 20)) });
}
const base = results[0]!;
for (const kind of ["reads", "posts"] as const) {
  console.log(`\n${kind === "reads" ? "Signed-in reads (GET /api/v1/timelines/home)" : "Posts (POST /api/v1/statuses)"}, ${seconds} s, ${connections} connections:\n`);
  console.log("| setup | per second | of one process on SQLite | p50 ms | p99 ms |");
  console.log("|---|---|---|---|---|");
  for (const r of results) console.log(line(r.setup.label, r[kind], base[kind]));
}
