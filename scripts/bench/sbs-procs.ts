/**
 * The side-by-side benchmark's hold on what it starts (servers, wrk, the simulated follower,
 * temporary folders): everything is registered here and ended on exit, error, Ctrl-C or
 * SIGTERM, so no server outlives a failed run. Also what it reads of a process from /proc:
 * CPU time and resident memory of the process with its descendants (a server that serves with
 * worker processes is measured whole, as one with threads is), and "has gone quiet".
 */
import { spawnSync, type Subprocess } from "bun";
import { readdirSync, readFileSync, rmSync } from "node:fs";

/** A reason the benchmark cannot run (a missing tool, a busy port, a wrong option): said in one line, without a stack. */
export class Refusal extends Error {}

const children = new Set<Subprocess>();
const dirs = new Set<string>();
let cleaning = false;

export function track<T extends Subprocess>(proc: T): T {
  children.add(proc);
  void proc.exited.then(() => children.delete(proc));
  return proc;
}

/** A temporary folder (or file) removed at the end, whatever the end. */
export function trackDir(dir: string): string {
  dirs.add(dir);
  return dir;
}

/** SIGTERM, then SIGKILL after `graceMs` if it has not gone. */
export async function stopChild(proc: Subprocess, graceMs = 10_000) {
  if (proc.exitCode === null && proc.signalCode === null) {
    proc.kill("SIGTERM");
    const gone = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
    if (!gone) proc.kill("SIGKILL");
  }
  await proc.exited;
  children.delete(proc);
}

/** Ends every child still running and removes the temporary folders. */
export async function cleanUp() {
  if (cleaning) return;
  cleaning = true;
  await Promise.all([...children].map((p) => stopChild(p, 5000)));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

function lastResort() {
  // Synchronous: on process exit nothing awaited would run.
  for (const p of children) p.kill("SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

export function installCleanUp() {
  process.on("exit", lastResort);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping every server and removing the temporary folders`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
}

/** The process and every descendant, from the parent links in /proc. */
function tree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // Gone between the listing and the read.
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(parents.get(out[i]!) ?? []));
  return out;
}

/** Clock ticks per second of /proc's times (100 on Linux almost everywhere). */
function clockTicks(): number {
  try {
    return Number(spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
  } catch {
    return 100;
  }
}
const TICKS = clockTicks();

/** utime + stime of the process and its descendants (all threads), in seconds. */
export function treeCpuSeconds(pid: number): number {
  let total = 0;
  for (const p of tree(pid)) {
    try {
      // Fields 14 and 15 of /proc/<pid>/stat, counted after the parenthesised name.
      const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / TICKS;
    } catch {
      // A descendant that just ended.
    }
  }
  return total;
}

/** VmRSS of the process and its descendants, in MB. */
export function treeRssMb(pid: number): number {
  let kb = 0;
  for (const p of tree(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // Gone.
    }
  }
  return kb / 1024;
}

/**
 * Waits until the process has used less than `maxCpu` seconds of CPU over the last `windowMs`
 * (sampled every 250 ms): its background work is finished. Returns how long that took, or
 * null when it was still busy at the deadline.
 */
export async function quiet(pid: number, options: { windowMs?: number; maxCpu?: number; timeoutMs?: number } = {}): Promise<number | null> {
  const windowMs = options.windowMs ?? 2000;
  const maxCpu = options.maxCpu ?? 0.03;
  const timeoutMs = options.timeoutMs ?? 600_000;
  const started = performance.now();
  const samples: { at: number; cpu: number }[] = [];
  for (;;) {
    const at = performance.now();
    samples.push({ at, cpu: treeCpuSeconds(pid) });
    while (samples.length > 1 && at - samples[1]!.at >= windowMs) samples.shift();
    const first = samples[0]!;
    if (at - first.at >= windowMs && samples[samples.length - 1]!.cpu - first.cpu < maxCpu) return Math.max(0, at - started - windowMs);
    if (at - started > timeoutMs) return null;
    await Bun.sleep(250);
  }
}

/** Throws when something already answers at the address: a benchmark must not measure another engineer's server. */
export async function assertFree(url: string) {
  const answered = await fetch(url, { signal: AbortSignal.timeout(1000) }).then(() => true, () => false);
  if (answered) throw new Refusal(`${url} already answers: another process holds that port (choose others with --port-base)`);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
