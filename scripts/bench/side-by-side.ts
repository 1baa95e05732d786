/**
 * Rookery and GoToSocial side by side (issue 30): both on loopback, in the same state, every
 * endpoint measured in the order GoToSocial, Rookery, Rookery, GoToSocial, in req/s and server
 * CPU per request (utime + stime from /proc of the server's processes, before and after each
 * wrk run, over the requests wrk counted: wrk's own CPU does not count); posting (Rookery's
 * posts timed until fully done, with federation, link cards, streaming and push on;
 * GoToSocial's background work waited for and reported); idle memory and start-up time.
 * Prints a Markdown table with the ratios; docs/benchmarks.md says how to read it.
 *
 *   bun scripts/bench/side-by-side.ts [--duration 10] [--post-duration 10] [--threads 2]
 *     [--connections 32] [--rookery-cmd "/path/to/rookery"] [--rookery-env K=V ...]
 *     [--server-cpus 0,1] [--wrk-cpus 0,1] [--starts 3] [--port-base 5270] [--json file]
 *
 * GTS_BIN: GoToSocial's binary (default /work/peers/gotosocial); GTS_WEB_DIR: its web/ folder
 * (default web/ beside the binary). Without --rookery-cmd, Rookery's executable is built from
 * this checkout (scripts/build.ts) into the temporary folder.
 */
import { spawnSync } from "bun";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BUN, ROOT } from "./lib.ts";
import { postGoToSocial, postRookery, setUpRookeryFollowers, startSinks, subscribePush, type FollowerSetup, type Sinks } from "./sbs-posting.ts";
import { cleanUp, installCleanUp, quiet, Refusal, trackDir, treeRssMb } from "./sbs-procs.ts";
import { header, median, postingDetail, table, type Figures } from "./sbs-report.ts";
import { check, ENDPOINTS, headersFor, seed } from "./sbs-seed.ts";
import { checkGtsBinary, prepareGoToSocial, prepareRookery, type Server } from "./sbs-servers.ts";
import { load, requireTools, type LoadOptions, type Run } from "./sbs-wrk.ts";

function parseArgs(argv: string[]) {
  const o = { duration: 10, postDuration: NaN, threads: 2, connections: 32, starts: 3, portBase: 5270, rookeryCmd: "", rookeryEnv: {} as Record<string, string>, serverCpus: undefined as string | undefined, wrkCpus: undefined as string | undefined, json: "", keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Refusal(`${arg} needs a value`);
      return v;
    };
    const number = () => {
      const v = Number(value());
      if (!(v > 0)) throw new Refusal(`${arg} needs a positive number`);
      return v;
    };
    if (arg === "--duration") o.duration = number();
    else if (arg === "--post-duration") o.postDuration = number();
    else if (arg === "--threads") o.threads = number();
    else if (arg === "--connections") o.connections = number();
    else if (arg === "--starts") o.starts = number();
    else if (arg === "--port-base") o.portBase = number();
    else if (arg === "--rookery-cmd") o.rookeryCmd = value();
    else if (arg === "--rookery-env") {
      const kv = value();
      const eq = kv.indexOf("=");
      if (eq < 1) throw new Refusal(`--rookery-env takes K=V, not ${kv}`);
      o.rookeryEnv[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else if (arg === "--server-cpus") o.serverCpus = value();
    else if (arg === "--wrk-cpus") o.wrkCpus = value();
    else if (arg === "--json") o.json = value();
    else if (arg === "--keep") o.keep = true;
    else throw new Refusal(`unknown option ${arg} (see the comment at the top of scripts/bench/side-by-side.ts)`);
  }
  if (Number.isNaN(o.postDuration)) o.postDuration = o.duration;
  return o;
}

const say = (line: string) => console.error(line);
const git = (...args: string[]) => spawnSync(["git", ...args], { cwd: ROOT }).stdout.toString().trim();

function machine() {
  const cpu = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "unknown CPU";
  return { cores: availableParallelism(), cpu, load: loadavg() };
}

function buildRookery(work: string): string[] {
  const outfile = join(work, "build", "rookery");
  say("building Rookery's executable (scripts/build.ts) ...");
  const built = spawnSync([BUN, join(ROOT, "scripts/build.ts"), "--outfile", outfile], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`the build failed:\n${built.stderr.toString()}`);
  say(built.stdout.toString().trim());
  return [outfile];
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const gtsBin = process.env.GTS_BIN ?? "/work/peers/gotosocial";
  const webDir = process.env.GTS_WEB_DIR ?? join(dirname(gtsBin), "web");
  requireTools([o.serverCpus, o.wrkCpus]);
  checkGtsBinary(gtsBin, webDir);
  installCleanUp();
  const startMachine = machine();
  const work = mkdtempSync(join(tmpdir(), "rookery-side-by-side-"));
  if (!o.keep) trackDir(work);
  const dirty = git("status", "--porcelain", "--untracked-files=no") ? " (with uncommitted changes)" : "";
  const commit = o.rookeryCmd ? `given build \`${o.rookeryCmd}\` (checkout at ${git("rev-parse", "--short", "HEAD")})` : `${git("rev-parse", "--short", "HEAD")}${dirty}`;
  const command = o.rookeryCmd ? o.rookeryCmd.split(/\s+/).filter(Boolean) : buildRookery(work);
  const envNote = Object.keys(o.rookeryEnv).length ? `, with ${Object.entries(o.rookeryEnv).map(([k, v]) => `${k}=${v}`).join(" ")}` : "";
  const ports = { gts: o.portBase + 1, rookery: o.portBase + 2, page: o.portBase + 3, push: o.portBase + 4, sim: o.portBase + 5 };

  say("preparing GoToSocial and Rookery (first start, accounts) ...");
  const gts = await prepareGoToSocial({ bin: gtsBin, webDir, port: ports.gts, dir: join(work, "gotosocial"), cpus: o.serverCpus, users: ["alice", "bob"] });
  const rookery = await prepareRookery({ command, port: ports.rookery, dir: join(work, "rookery"), cpus: o.serverCpus, env: o.rookeryEnv, users: ["alice", "bob"] });

  // Start-up on the existing databases, alternating, and resident memory once each start has
  // gone quiet; the last start of each stays up for the rest.
  const startupMs = { gotosocial: [] as number[], rookery: [] as number[] };
  const idleRuns = { gotosocial: [] as number[], rookery: [] as number[] };
  for (let i = 0; i < o.starts; i++) {
    for (const [server, key] of [[gts, "gotosocial"], [rookery, "rookery"]] as const) {
      startupMs[key].push(await server.start());
      await quiet(server.pid());
      idleRuns[key].push(treeRssMb(server.pid()));
      if (i < o.starts - 1) await server.stop();
    }
  }
  const idleRssMb = { gotosocial: median(idleRuns.gotosocial), rookery: median(idleRuns.rookery) };
  say(`start-up to the first 200 of /api/v1/instance: GoToSocial ${startupMs.gotosocial.map(Math.round).join(", ")} ms; Rookery ${startupMs.rookery.map(Math.round).join(", ")} ms`);
  say(`idle RSS once quiet after start: GoToSocial ${idleRuns.gotosocial.map((x) => x.toFixed(1)).join(", ")} MB; Rookery ${idleRuns.rookery.map((x) => x.toFixed(1)).join(", ")} MB`);
  const reported = ((await (await fetch(`${gts.url}/api/v1/instance`, { headers: { "user-agent": "rookery-side-by-side/1" } })).json()) as { version?: string }).version;
  // A build without the release's version stamp reports none; the binary is named instead.
  const version = reported || "(reports no version)";

  say("seeding both through their client APIs: bob follows alice, 20 mentions, 300 statuses, 30 favourites ...");
  const seedStarted = performance.now();
  const signedIn = async (server: Server) => seed(server, await server.signIn("alice"), await server.signIn("bob"));
  const [g, r] = await Promise.all([signedIn(gts), signedIn(rookery)]);
  say(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s; waiting until both servers' CPU is quiet (under 0.03 s of CPU in 2 s) before any read ...`);
  const quietStarted = performance.now();
  const [gQuiet, rQuiet] = await Promise.all([quiet(gts.pid()), quiet(rookery.pid())]);
  const quietAfterSeedSeconds = { gotosocial: gQuiet === null ? null : gQuiet / 1000, rookery: rQuiet === null ? null : rQuiet / 1000 };
  say(`GoToSocial's background work finished ${gQuiet === null ? "NOT within the deadline" : `${(gQuiet / 1000).toFixed(1)} s`} after the seeding (Rookery's: ${rQuiet === null ? "not within the deadline" : `${(rQuiet / 1000).toFixed(1)} s`}; waited ${((performance.now() - quietStarted) / 1000).toFixed(1)} s)`);

  const loadOptions: LoadOptions = { threads: o.threads, connections: o.connections, seconds: o.duration, cpus: o.wrkCpus };
  const reads: Figures["reads"] = [];
  for (const endpoint of ENDPOINTS) {
    const [gSeen, rSeen] = [await check(endpoint, g), await check(endpoint, r)];
    say(`\n${endpoint.label}: checked 200 (GoToSocial: ${gSeen}; Rookery: ${rSeen})`);
    const runs = { gotosocial: [] as Run[], rookery: [] as Run[] };
    for (const s of [g, r, r, g]) {
      const run = await load(`${s.server.url}${endpoint.path(s)}`, s.server.pid(), loadOptions, { headers: headersFor(endpoint, s) });
      (s === g ? runs.gotosocial : runs.rookery).push(run);
      const errors = run.non2xx || run.socketErrors ? `  non-2xx ${run.non2xx}, socket errors ${run.socketErrors}` : "";
      say(`  ${s.server.name.padEnd(10)} ${Math.round(run.requestsPerSecond).toLocaleString("en-US").padStart(8)}/s  ${run.cpuUsPerRequest.toFixed(1).padStart(7)} µs CPU/request  p99 ${run.p99ms.toFixed(2)} ms${errors}`);
    }
    reads.push({ label: endpoint.label, path: { gotosocial: endpoint.path(g), rookery: endpoint.path(r) }, ...runs });
  }

  say("\nposting: setting up Rookery's remote follower (fed-sim.ts), bob's stream and push subscriptions, the link-card page ...");
  const sinks: Sinks = startSinks(ports.page, ports.push);
  let followers: FollowerSetup | undefined;
  try {
    followers = await setUpRookeryFollowers(r, sinks, ports.sim);
    // GoToSocial takes only https:// endpoints (and its sign-in's token has no push scope), and
    // the stand-in is plain HTTP: it then posts without push, less work than Rookery does (said
    // in the output).
    const gtsPushRefused = await subscribePush(g.bob, `${sinks.pushBase}/push/gotosocial`);
    say(gtsPushRefused ? `GoToSocial refused bob's push subscription (${gtsPushRefused}): it posts without push` : "GoToSocial took bob's push subscription");
    const postOptions = { ...loadOptions, seconds: o.postDuration };
    const posting: Figures["posting"] = { gotosocial: [], rookery: [], rookeryHas: `federation on (alice has a follower on another server: fed-sim.ts, one Fedify actor on 127.0.1.1), bob's SSE stream connected, bob's web push subscription (status notifications, notify on his follow), link cards on (each post links its own page on loopback)${envNote}; GoToSocial: bob's follow with notify, ${gtsPushRefused ? `no push (refused: ${gtsPushRefused.split(" ").slice(0, 8).join(" ")}; it takes https:// endpoints only)` : "push subscribed (not counted)"}` };
    const deadline = Math.max(120, o.postDuration * 30);
    for (const s of [g, r, r, g]) {
      if (s === g) {
        const p = await postGoToSocial(g, sinks, postOptions);
        posting.gotosocial.push(p);
        say(`  GoToSocial ${Math.round(p.acceptedPerSecond)} posts/s accepted (${p.posts}); CPU quiet ${p.busySeconds === null ? "not reached" : `${p.busySeconds.toFixed(1)} s`} after the run; ${p.cpuUsPerPostAll.toFixed(0)} µs CPU per post until then`);
      } else {
        const p = await postRookery(r, followers, sinks, postOptions, deadline);
        posting.rookery.push(p);
        say(`  Rookery    ${Math.round(p.acceptedPerSecond)} posts/s accepted (${p.posts}); fully done ${p.fullyDonePerSecond === null ? "not reached" : `${Math.round(p.fullyDonePerSecond)}/s`}; ${p.cpuUsPerPostAll.toFixed(0)} µs CPU per post until quiet`);
      }
    }
    const afterRssMb = { gotosocial: treeRssMb(gts.pid()), rookery: treeRssMb(rookery.pid()) };
    const figures: Figures = {
      date: new Date().toISOString().slice(0, 10),
      machine: startMachine,
      commit: `${commit}${envNote}`,
      gotosocial: { bin: gtsBin, version },
      options: { threads: o.threads, connections: o.connections, duration: o.duration, postDuration: o.postDuration, serverCpus: o.serverCpus, wrkCpus: o.wrkCpus, rookeryEnv: o.rookeryEnv, starts: o.starts },
      startupMs,
      idleRssMb,
      afterRssMb,
      quietAfterSeedSeconds,
      reads,
      posting,
    };
    console.log(`\n${header(figures)}\n`);
    console.log(table(figures));
    console.log(`\n${postingDetail(figures)}`);
    console.log(`GoToSocial's background work after the seeding: CPU quiet ${quietAfterSeedSeconds.gotosocial === null ? "not reached" : `${quietAfterSeedSeconds.gotosocial.toFixed(1)} s`} after it; every read was measured after that.`);
    console.log(`Start-up medians: GoToSocial ${Math.round(median(startupMs.gotosocial))} ms, Rookery ${Math.round(median(startupMs.rookery))} ms. ⚠ marks runs with non-2xx answers or socket errors.`);
    if (o.json) {
      writeFileSync(o.json, JSON.stringify(figures, null, 2) + "\n");
      say(`figures written to ${o.json}`);
    }
  } finally {
    followers?.stream.stop();
    sinks.stop();
    if (o.keep) say(`kept: ${work} (databases and logs)`);
  }
}

try {
  await main();
  await cleanUp();
  process.exit(0);
} catch (error) {
  console.error(`side-by-side: ${error instanceof Refusal ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanUp();
  process.exit(1);
}
