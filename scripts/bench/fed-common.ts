/**
 * What the two federation benchmarks share: the simulated remote servers (fed-sim.ts, a process
 * of their own) and polling with a deadline, for things that happen in another process.
 */
import { spawn, type Subprocess } from "bun";
import { join } from "node:path";
import { BUN, pinned, ROOT } from "./lib.ts";

export interface SimStats {
  accepts: number;
  deliveries: number;
  inboxes: number;
  first: number;
  last: number;
}

export interface BlastResult {
  signMs: number;
  /** Date.now() in the simulator when the first request went out. */
  started: number;
  sendMs: number;
  statuses: Record<string, number>;
}

export interface Sim {
  proc: Subprocess;
  url: string;
  stats(): Promise<SimStats>;
  reset(): Promise<void>;
  /** Every actor of that kind (s: shared inbox, p: personal inbox) follows the target. */
  follow(target: string, kind: "s" | "p"): Promise<void>;
  actors(kind: "s" | "p"): Promise<string[]>;
  blast(inbox: string, n: number, concurrency: number, authors: string[]): Promise<BlastResult>;
  stop(): Promise<void>;
}

/** Polls until the check gives a value, every 20 ms; throws at the deadline. */
export async function until<T>(what: string, check: () => Promise<T | null | false>, seconds = 180): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${seconds} s`);
    await Bun.sleep(20);
  }
}

export async function startSim(options: { servers: number; actors: number; port: number; cpus?: string }): Promise<Sim> {
  const proc = spawn(pinned(options.cpus, [BUN, join(ROOT, "scripts/bench/fed-sim.ts")]), {
    env: { ...process.env, SIM_SERVERS: String(options.servers), SIM_ACTORS: String(options.actors), SIM_CONTROL_PORT: String(options.port) },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${options.port}`;
  const post = async (path: string) => {
    const res = await fetch(`${url}${path}`, { method: "POST" });
    if (!res.ok) throw new Error(`simulator ${path.split("?")[0]}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  await until("simulated servers", async () => proc.exitCode === null && (await fetch(`${url}/stats`)).ok, 30);
  return {
    proc,
    url,
    stats: async () => (await fetch(`${url}/stats`)).json() as Promise<SimStats>,
    reset: async () => void (await post("/reset")),
    follow: async (target, kind) => void (await post(`/follow?target=${encodeURIComponent(target)}&kind=${kind}`)),
    actors: async (kind) => (await fetch(`${url}/actors?kind=${kind}`)).json() as Promise<string[]>,
    blast: (inbox, n, concurrency, authors) =>
      post(`/blast?inbox=${encodeURIComponent(inbox)}&n=${n}&concurrency=${concurrency}&authors=${encodeURIComponent(authors.join(","))}`) as Promise<BlastResult>,
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}
