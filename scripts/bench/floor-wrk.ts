/**
 * Server CPU per request of Rookery's signed-in reads beside the floor they stand on (issue 30,
 * "where the rest of a home request goes"): Bun.serve alone and a bare Elysia route answering
 * bodies of the same sizes (floor-bare-server.ts), the instance document and the anonymous
 * status (Rookery's own floor), then the signed-in status and home. CPU is utime and stime of
 * each server from /proc over a short wrk run (-t1 -c32), split, so that the kernel's share
 * (the loopback, the locks) shows apart from the process's own.
 *
 *   bun scripts/bench/floor-wrk.ts [seconds per run, default 3] [--rounds=2]
 */
import { spawn } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, fmt, requireWrk, seedUser, startRookery, wrk } from "./lib.ts";
import { readEndpoints, seedReads } from "./reads-seed.ts";

requireWrk();
const args = process.argv.slice(2);
const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 3);
const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 2);

function cpu(pid: number): { user: number; sys: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { user: Number(fields[11]) / 100, sys: Number(fields[12]) / 100 };
}

const rookery = await startRookery(4620);
let bare: ReturnType<typeof spawn> | null = null;
try {
  const state = await seedReads(rookery.url, await seedUser(rookery, "author"), await seedUser(rookery, "reader"));
  const endpoints = readEndpoints(state);
  const pick = (part: string) => endpoints.find((e) => e.label.includes(part))!;
  const size = async (e: { path: string; headers: Record<string, string> }) => (await (await fetch(`${rookery.url}${e.path}`, { headers: e.headers })).arrayBuffer()).byteLength;
  const status = pick("(signed in)");
  const home = pick("home");
  const [statusBytes, homeBytes] = [await size(status), await size(home)];
  bare = spawn([BUN, join(ROOT, "scripts/bench/floor-bare-server.ts")], { env: { ...process.env, PORT: "4621", SMALL_BYTES: String(statusBytes), PAGE_BYTES: String(homeBytes) }, stdout: "ignore", stderr: "inherit" });
  const bareUrl = "http://127.0.0.1:4621";
  for (let i = 0; i < 100 && !(await fetch(`${bareUrl}/bun/small`).then((r) => r.ok, () => false)); i++) await Bun.sleep(50);
  const runs = [
    { label: `Bun.serve, ${statusBytes} B`, pid: bare.pid, url: `${bareUrl}/bun/small`, headers: status.headers },
    { label: `Bun.serve, ${homeBytes} B`, pid: bare.pid, url: `${bareUrl}/bun/page`, headers: status.headers },
    { label: `bare Elysia route, ${statusBytes} B`, pid: bare.pid, url: `${bareUrl}/elysia/small`, headers: status.headers },
    { label: `bare Elysia route, ${homeBytes} B`, pid: bare.pid, url: `${bareUrl}/elysia/page`, headers: status.headers },
    { label: "Rookery GET /api/v1/instance", pid: rookery.proc.pid, url: `${rookery.url}/api/v1/instance`, headers: {} },
    { label: "Rookery status, anonymous", pid: rookery.proc.pid, url: `${rookery.url}${pick("(anon)").path}`, headers: {} },
    { label: `Rookery status, signed in (${statusBytes} B)`, pid: rookery.proc.pid, url: `${rookery.url}${status.path}`, headers: status.headers },
    { label: `Rookery home?limit=20 (${homeBytes} B)`, pid: rookery.proc.pid, url: `${rookery.url}${home.path}`, headers: home.headers },
  ];
  const results = new Map<string, string[]>(runs.map((r) => [r.label, []]));
  for (const r of runs) wrk(r.url, { seconds: 1, connections: 32, headers: r.headers }); // warm
  for (let round = 0; round < rounds; round++) {
    for (const r of runs) {
      const before = cpu(r.pid!);
      const w = wrk(r.url, { seconds, connections: 32, headers: r.headers });
      const after = cpu(r.pid!);
      const n = w.requestsPerSecond * seconds;
      const us = (s: number) => (s / n) * 1e6;
      results.get(r.label)!.push(`${fmt(us(after.user - before.user + after.sys - before.sys), 1)} (${fmt(us(after.user - before.user), 1)} + ${fmt(us(after.sys - before.sys), 1)})`);
    }
  }
  console.log(`wrk -t1 -c32, ${seconds} s each, ${rounds} rounds; server CPU µs per request: total (user + system), per round; ${new Date().toISOString().slice(0, 10)}\n`);
  for (const [label, figures] of results) console.log(`${label.padEnd(44)} ${figures.join("   ")}`);
} finally {
  bare?.kill();
  await bare?.exited;
  await rookery.stop();
}
