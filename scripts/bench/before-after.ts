/**
 * Server CPU per request of a few endpoints, before and after a change, in one run: two server
 * processes, one from another checkout (`--before=<dir>`, e.g. `git archive <commit> | tar -x -C
 * <dir>` with node_modules linked), one from this one, measured alternately, round after round,
 * so that the load of a shared machine falls on both alike. CPU is the server's utime+stime
 * from /proc over a short wrk run (wrk's own CPU does not count).
 *
 *   bun scripts/bench/before-after.ts --before=<dir> [--rounds=3] [--seconds=3] [--only=<label part>] [--family=markers|announcements|tags|reports|search] [--port=4620]
 *
 * The endpoints are those of a family converted to the database port (issue 31): markers, or
 * announcements (and custom emojis), or tags (featured tags, followed tags), or reports, or search
 * (search, tags, trends, and the instance's activity and description). `--only`
 * takes parts of labels, comma-separated.
 */
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { cpuSeconds, fmt, requireWrk, seedUser, startRookery, wrk } from "./lib.ts";

requireWrk();
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const beforeRoot = arg("before");
if (!beforeRoot) throw new Error("--before=<dir of the other checkout> is required");
const rounds = Number(arg("rounds") ?? 3);
const seconds = Number(arg("seconds") ?? 3);
const only = arg("only");
const family = arg("family") ?? "markers";
// The two servers listen on this port and the next: another engineer's run on a shared machine may hold the default.
const port = Number(arg("port") ?? 4620);

// A POST that moves the home marker on each request (a write each time, version + 1).
const MOVING_POST = `
n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, nil, '{"home":{"last_read_id":"' .. (100000 + n) .. '"},"notifications":{"last_read_id":"7"}}')
end`;

// A POST that follows another tag on each request (a new tag and a new follow each time; the
// run's start time in the name keeps later rounds from following the same tags again).
const FOLLOWING_POST = `
n = 0
prefix = "b" .. os.time()
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/tags/" .. prefix .. "x" .. n .. "/follow")
end`;

/** What the tags family reads: three featured tags over a few tagged statuses, and twenty followed tags. */
async function seedTags(url: string, token: string) {
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => {
      if (!r.ok) throw new Error(`${path}: ${r.status}`);
    });
  for (let i = 0; i < 12; i++) await post("/api/v1/statuses", { status: `post ${i} #rust${i % 2 ? " #zig" : ""} #go` });
  for (const name of ["rust", "zig", "go"]) await post("/api/v1/featured_tags", { name });
  for (let i = 0; i < 20; i++) await post(`/api/v1/tags/followed${i}/follow`, {});
}

const servers = [
  { name: "before", server: await startRookery(port, {}, undefined, beforeRoot) },
  { name: "after", server: await startRookery(port + 1) },
];
try {
  const tokens = new Map<string, string>();
  for (const s of servers) tokens.set(s.name, (await seedUser(s.server, "reader")).token);
  // The follows written go to another account, so that the reader's list stays as seeded.
  const writers = new Map<string, string>();
  const reported = new Map<string, string>();
  if (family === "tags") {
    for (const s of servers) await seedTags(s.server.url, tokens.get(s.name)!);
    for (const s of servers) writers.set(s.name, (await seedUser(s.server, "writer")).token);
  }
  if (family === "search") {
    // A few accounts whose names the search finds, and tagged statuses for the trends and the tags' history.
    for (const s of servers) for (const name of ["annabel", "anna", "annika", "anneli", "bob"]) s.server.cli(["accounts", "create", name, "--email", `${name}@bench.test`, "--password", "benchmark password"]);
    for (const s of servers) await seedTags(s.server.url, tokens.get(s.name)!);
    for (const s of servers) s.server.cli(["description", "set", "About this #bench server: https://example.com"]);
  }
  if (family === "reports") for (const s of servers) reported.set(s.name, (await seedUser(s.server, "spammer")).id);
  // Two announcements (one reacted to) and two custom emojis in each, made as the operator makes them.
  const announced = new Map<string, string>();
  if (family === "announcements") {
    const emoji = join(tmpdir(), `rookery-bench-emoji-${process.pid}.png`);
    writeFileSync(emoji, await sharp({ create: { width: 32, height: 32, channels: 4, background: "#00ff00" } }).png().toBuffer());
    for (const s of servers) {
      for (const code of ["blobcat", "blobfox"]) s.server.cli(["emoji", "add", code, emoji]);
      const id = s.server.cli(["announcements", "create", "Maintenance tonight, see #status :blobcat:"]);
      s.server.cli(["announcements", "create", "Welcome to the bench"]);
      announced.set(s.name, id);
      await fetch(`${s.server.url}/api/v1/announcements/${id}/reactions/%F0%9F%91%8D`, { method: "PUT", headers: { authorization: `Bearer ${tokens.get(s.name)}` } });
    }
    rmSync(emoji);
  }
  const families = (server: string): Record<string, { label: string; path: string; options: object; writer?: boolean }[]> => ({
    tags: [
      { label: "GET /api/v1/featured_tags", path: "/api/v1/featured_tags", options: {} },
      { label: "GET /api/v1/followed_tags", path: "/api/v1/followed_tags", options: {} },
      { label: "POST /api/v1/tags/:name/follow (new)", path: "/api/v1/tags/x/follow", options: { method: "POST", lua: FOLLOWING_POST }, writer: true },
    ],
    announcements: [
      { label: "GET /api/v1/announcements", path: "/api/v1/announcements", options: {} },
      { label: "POST /api/v1/announcements/:id/dismiss", path: `/api/v1/announcements/${announced.get(server) ?? "0"}/dismiss`, options: { method: "POST" } },
      { label: "GET /api/v1/custom_emojis", path: "/api/v1/custom_emojis", options: {} },
    ],
    search: [
      { label: "GET /api/v2/search (accounts)", path: "/api/v2/search?q=ann&type=accounts", options: {} },
      { label: "GET /api/v2/search (both)", path: "/api/v2/search?q=rus", options: {} },
      { label: "GET /api/v1/tags/:name", path: "/api/v1/tags/rust", options: {} },
      { label: "GET /api/v1/trends/tags", path: "/api/v1/trends/tags", options: {} },
      { label: "GET /api/v1/instance/activity", path: "/api/v1/instance/activity", options: {} },
      { label: "GET /api/v1/instance/extended_descr.", path: "/api/v1/instance/extended_description", options: {} },
      { label: "GET /api/v1/instance", path: "/api/v1/instance", options: {} },
    ],
    reports: [
      {
        label: "POST /api/v1/reports",
        path: "/api/v1/reports",
        options: { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_id: reported.get(server), comment: "spam", category: "spam" }) },
      },
    ],
  });
  const endpoints = (server: string) => (families(server)[family] ?? [
    { label: "GET /api/v1/markers", path: "/api/v1/markers?timeline[]=home&timeline[]=notifications", options: {} },
    { label: "POST /api/v1/markers (moves)", path: "/api/v1/markers", options: { method: "POST", headers: { "content-type": "application/json" }, lua: MOVING_POST } },
    { label: "GET /api/v1/notifications/unread_count", path: "/api/v1/notifications/unread_count", options: {} },
  ]).filter((e) => !only || only.split(",").some((part) => e.label.includes(part))).map((e) => ({ ...e, options: { ...e.options, headers: { ...(e.options as { headers?: Record<string, string> }).headers, authorization: `Bearer ${("writer" in e && e.writer ? writers : tokens).get(server)}` } } }));

  const cpu = new Map<string, number[]>();
  const rps = new Map<string, number[]>();
  console.log(`wrk -t1 -c16, ${seconds} s a run, ${rounds} rounds alternating before/after, ${new Date().toISOString().slice(0, 10)}\n`);
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always follows the other's warm-up.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      for (const e of endpoints(s.name)) {
        const key = `${e.label}|${s.name}`;
        const start = cpuSeconds(s.server.proc.pid);
        const r = wrk(`${s.server.url}${e.path}`, { seconds, connections: 16, ...e.options });
        const used = cpuSeconds(s.server.proc.pid) - start;
        if (r.non2xx) throw new Error(`${key}: ${r.non2xx} non-2xx answers`);
        (cpu.get(key) ?? cpu.set(key, []).get(key)!).push((used / (r.requestsPerSecond * seconds)) * 1e6);
        (rps.get(key) ?? rps.set(key, []).get(key)!).push(r.requestsPerSecond);
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`${"endpoint".padEnd(40)} ${"CPU µs/req before".padStart(18)} ${"after".padStart(8)} ${"ratio".padStart(6)} ${"req/s before".padStart(13)} ${"after".padStart(8)}   (medians; each round's CPU)`);
  for (const e of endpoints("")) {
    const b = cpu.get(`${e.label}|before`)!;
    const a = cpu.get(`${e.label}|after`)!;
    const runs = b.map((x, i) => `${fmt(x, 1)}/${fmt(a[i]!, 1)}`).join(" ");
    console.log(
      `${e.label.padEnd(40)} ${fmt(median(b), 1).padStart(18)} ${fmt(median(a), 1).padStart(8)} ${fmt(median(a) / median(b), 2).padStart(6)} ${fmt(median(rps.get(`${e.label}|before`)!)).padStart(13)} ${fmt(median(rps.get(`${e.label}|after`)!)).padStart(8)}   ${runs}`,
    );
  }
} finally {
  for (const s of servers) await s.server.stop();
}
