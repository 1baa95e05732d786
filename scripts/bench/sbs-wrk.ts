/**
 * wrk for the side-by-side benchmark: the thread count and the CPUs given, headers (and POST
 * bodies) through a Lua script, and the number of requests it completed, which the server's
 * CPU time is divided by. The server's CPU is read from /proc before and after, so wrk's own
 * CPU never counts.
 */
import { spawn, spawnSync } from "bun";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Refusal, track, trackDir, treeCpuSeconds } from "./sbs-procs.ts";

export const USER_AGENT = "rookery-side-by-side/1 (wrk)";

export interface LoadOptions {
  threads: number;
  connections: number;
  seconds: number;
  /** taskset CPU list for wrk, or undefined to leave it unpinned. */
  cpus: string | undefined;
}

export interface Run {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  socketErrors: number;
  /** Server CPU (utime + stime of its process tree) during the run, over the requests counted. */
  cpuUsPerRequest: number;
}

export function requireTools(cpus: (string | undefined)[]) {
  const has = (cmd: string) => spawnSync(["sh", "-c", `command -v ${cmd}`]).exitCode === 0;
  if (!has("wrk")) throw new Refusal("wrk is missing: this benchmark uses it as the load generator (Debian: apt-get install wrk)");
  if (cpus.some((c) => c !== undefined) && !has("taskset")) throw new Refusal("taskset is missing, and CPUs were given to pin to (Debian: apt-get install util-linux)");
}

export const pin = (cpus: string | undefined, argv: string[]) => (cpus === undefined ? argv : ["taskset", "-c", cpus, ...argv]);

function toMs(value: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec((value ?? "").trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : m[2] === "m" ? n * 60_000 : n;
}

/**
 * Lua that sets the method and headers; with `postBody`, a request() that makes each body
 * unique: `%s` in it becomes "<thread>-<counter>" (a post of its own, a link of its own).
 */
function script(method: string, headers: Record<string, string>, postBody?: string): string {
  const lines = [`wrk.method = ${JSON.stringify(method)}`];
  for (const [k, v] of Object.entries({ "User-Agent": USER_AGENT, ...headers })) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (postBody !== undefined) {
    lines.push(
      "local threads = 0",
      "function setup(thread) thread:set(\"tid\", threads); threads = threads + 1 end",
      "local counter = 0",
      `local template = ${JSON.stringify(postBody)}`,
      "request = function()",
      "  counter = counter + 1",
      "  local n = tostring(tid) .. \"-\" .. tostring(counter)",
      "  return wrk.format(nil, nil, nil, (string.gsub(template, \"%%s\", n)))",
      "end",
    );
  }
  const file = join(tmpdir(), `sbs-wrk-${process.pid}-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(file, lines.join("\n") + "\n");
  // Removed after the run, or by the clean-up if the run is interrupted.
  return trackDir(file);
}

/** One wrk run against `url`, with the server's CPU read before and after. */
export async function load(url: string, serverPid: number, options: LoadOptions, request: { method?: string; headers?: Record<string, string>; postBody?: string } = {}): Promise<Run> {
  const file = script(request.method ?? "GET", request.headers ?? {}, request.postBody);
  try {
    const argv = ["wrk", `-t${options.threads}`, `-c${options.connections}`, `-d${options.seconds}s`, "--latency", "-s", file, url];
    const cpuBefore = treeCpuSeconds(serverPid);
    const proc = track(spawn(pin(options.cpus, argv), { stdout: "pipe", stderr: "pipe" }));
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    await proc.exited;
    const cpu = treeCpuSeconds(serverPid) - cpuBefore;
    const m = /(\d+) requests in ([\d.]+)(s|m|ms)/.exec(out);
    if (!m) throw new Error(`wrk printed no summary for ${url}: ${(out + err).trim().slice(0, 400)}`);
    const requests = Number(m[1]);
    const seconds = toMs(`${m[2]}${m[3]}`) / 1000;
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    return {
      requests,
      seconds,
      requestsPerSecond: requests / seconds,
      p50ms: toMs(/\s50%\s+(\S+)/.exec(out)?.[1]),
      p99ms: toMs(/\s99%\s+(\S+)/.exec(out)?.[1]),
      non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
      socketErrors: errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
      cpuUsPerRequest: requests > 0 ? (cpu / requests) * 1e6 : NaN,
    };
  } finally {
    rmSync(file, { force: true });
  }
}
