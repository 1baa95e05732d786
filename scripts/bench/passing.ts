/**
 * What a serving thread's pass to the main thread costs (issue 30, WEB_THREADS=2): a large
 * answer (an account's archive carrying a 64 MB file) downloaded several times over new
 * connections, which the kernel spreads over both threads, with the server's peak RSS above
 * its idle RSS and its CPU per download; then small passed requests under wrk (the export's
 * counts, GET, and a post, POST with a body), CPU per request. (Until issue 30's ctxthread, the
 * GET was a thread's context, which a serving thread now answers itself when no fill is due.) Server CPU is read from
 * /proc/PID/stat (all threads), so the load generator's does not count.
 *
 *   [WEB_THREADS=2] bun scripts/bench/passing.ts [downloads, default 8] [seconds per wrk run, default 4]
 */
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { cpuSeconds, fmt, requireWrk, rss, seedUser, startRookery, wrk } from "./lib.ts";

requireWrk();
const downloads = Number(process.argv[2] ?? 8);
const seconds = Number(process.argv[3] ?? 4);
const BIG = 64 * 1024 * 1024;

const threads = process.env.WEB_THREADS ?? "2";
const server = await startRookery(4611, { WEB_THREADS: threads });
try {
  const alice = await seedUser(server, "alice");
  const auth = { authorization: `Bearer ${alice.token}` };
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 255, g: 0, b: 0 } } }).png().toBuffer();
  const form = new FormData();
  form.append("file", new File([png], "red.png", { type: "image/png" }));
  const media = (await (await fetch(`${server.url}/api/v1/media`, { method: "POST", headers: auth, body: form })).json()) as { id: string };
  const post = async (status: string, extra: Record<string, unknown> = {}) =>
    (await (await fetch(`${server.url}/api/v1/statuses`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ status, ...extra }) })).json()) as { id: string };
  const status = await post("a large picture", { media_ids: [media.id] });
  for (let i = 0; i < 5; i++) await post(`a reply ${i}`, { in_reply_to_id: status.id });
  const db = new Database(join(server.dataDir, "rookery.sqlite3"), { readonly: true });
  const file = db.query<{ file: string }, [number]>("SELECT file FROM media_attachments WHERE id = ?").get(Number(media.id))!.file;
  db.close();
  writeFileSync(join(server.dataDir, "media", file), randomBytes(BIG));

  const pid = server.proc.pid;
  const idle = rss(pid).now;
  const cpu0 = cpuSeconds(pid);
  let bytes = 0;
  for (let i = 0; i < downloads; i++) {
    const res = await fetch(`${server.url}/api/v1/exports/archive.zip`, { headers: { ...auth, connection: "close" } });
    // Read as it comes and let go: the client holds none of it.
    const reader = res.body!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.byteLength;
  }
  const cpu = cpuSeconds(pid) - cpu0;
  const peak = rss(pid).peak;
  console.log(`machine: ${navigator.hardwareConcurrency} cores, load average ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
  console.log(`archive of ${fmt(bytes / downloads / 1e6, 1)} MB, ${downloads} downloads over new connections: ${fmt((cpu / downloads) * 1000)} ms CPU each, RSS idle ${fmt(idle, 1)} MB, peak ${fmt(peak, 1)} MB (+${fmt(peak - idle, 1)} MB)`);

  for (const [label, url, options] of [
    ["GET the export's counts (passed)", `${server.url}/api/v1/exports/stats`, { headers: auth }],
    ["POST a status (passed, a body)", `${server.url}/api/v1/statuses`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ status: "benchmark post" }) }],
  ] as const) {
    wrk(url, { ...options, seconds: 2, connections: 16 });
    const before = cpuSeconds(pid);
    const r = wrk(url, { ...options, seconds, connections: 16 });
    const used = cpuSeconds(pid) - before;
    console.log(`${label.padEnd(34)} ${fmt(r.requestsPerSecond).padStart(7)} req/s   ${fmt((used / (r.requestsPerSecond * seconds)) * 1e6, 1).padStart(7)} µs CPU/request${r.non2xx ? `   non-2xx: ${r.non2xx}` : ""}`);
  }
} finally {
  await server.stop();
}
