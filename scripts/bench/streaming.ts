/**
 * Streaming at scale: 10,000 concurrent connections (half SSE, half WebSocket; a quarter
 * signed in) opened by a separate load process on loopback, then public statuses posted one
 * at a time. Reports the delivery latency from the POST to the last of the 10,000 readers
 * (p50/p99 over the posts) and over every single delivery, the server's RSS per idle
 * connection, and RSS over five rounds of 10,000 more connects and disconnects. A bare Bun server that
 * only forwards a posted string to the same kind of connections is measured the same way.
 *
 *   bun scripts/bench/streaming.ts [connections, default 10000] [posts, default 30]
 */
import { spawn, type Subprocess } from "bun";
import { BUN, fmt, ROOT, rss, seedUser, startRookery } from "./lib.ts";
import { join } from "node:path";

const COUNT = Number(process.argv[2] ?? 10_000);
const POSTS = Number(process.argv[3] ?? 30);
const GAP_MS = 250;
const CHURN_ROUNDS = Number(process.env.CHURN_ROUNDS ?? 5);

interface Clients {
  proc: Subprocess<"pipe", "pipe", "inherit">;
  next(): Promise<any>;
  send(command: string): void;
}

/** The load process, and a reader of its JSON lines. */
function startClients(base: string, env: Record<string, string>): Clients {
  const proc = spawn([BUN, join(ROOT, "scripts/bench/stream-clients.ts")], {
    env: { ...process.env, BASE: base, COUNT: String(COUNT), ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    proc,
    async next() {
      for (;;) {
        const nl = buffered.indexOf("\n");
        if (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          return JSON.parse(line);
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("load process ended");
        buffered += decoder.decode(value);
      }
    },
    send(command) {
      proc.stdin.write(`${command}\n`);
      proc.stdin.flush();
    },
  };
}

function percentile(sorted: number[], p: number) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const now = () => performance.timeOrigin + performance.now();

interface Figures {
  idleMb: number;
  connectedMb: number;
  perConnKb: number;
  lastP50: number;
  lastP99: number;
  allP50: number;
  allP99: number;
  missing: number;
  churnMb: number[];
}

/** Connects, publishes with `publish(i)` (returns when the POST was answered), measures. */
async function measure(label: string, pid: number, base: string, clientEnv: Record<string, string>, publish: (i: number) => Promise<void>): Promise<Figures> {
  await Bun.sleep(500);
  const idle = rss(pid).now;
  const clients = startClients(base, clientEnv);
  const ready = await clients.next();
  if (ready.ready !== COUNT) throw new Error(`${label}: only ${ready.ready} connections`);
  await Bun.sleep(2000);
  const connected = rss(pid).now;

  const sentAt: number[] = [];
  for (let i = 0; i < POSTS; i++) {
    sentAt.push(now());
    await publish(i);
    await Bun.sleep(GAP_MS);
  }
  await Bun.sleep(1000);
  clients.send("report");
  const { report } = (await clients.next()) as { report: Record<string, number[]> };
  const lastLatencies: number[] = [];
  const all: number[] = [];
  let missing = 0;
  for (let i = 0; i < POSTS; i++) {
    const times = report[String(i)] ?? [];
    missing += COUNT - times.length;
    const latencies = times.map((t) => t - sentAt[i]!);
    all.push(...latencies);
    lastLatencies.push(Math.max(...latencies));
  }
  lastLatencies.sort((a, b) => a - b);
  all.sort((a, b) => a - b);

  clients.send("close");
  await clients.next();
  // Rounds of COUNT connects and disconnects: memory must settle (once the GC runs), not climb.
  const churn: number[] = [];
  for (let round = 0; round < CHURN_ROUNDS; round++) {
    clients.send(`churn ${COUNT}`);
    await clients.next();
    await Bun.sleep(2000);
    churn.push(rss(pid).now);
  }
  clients.send("exit");
  await clients.proc.exited;
  return {
    idleMb: idle,
    connectedMb: connected,
    perConnKb: ((connected - idle) * 1024) / COUNT,
    lastP50: percentile(lastLatencies, 50),
    lastP99: percentile(lastLatencies, 99),
    allP50: percentile(all, 50),
    allP99: percentile(all, 99),
    missing,
    churnMb: churn,
  };
}

function print(label: string, f: Figures) {
  console.log(`\n${label}`);
  console.log(`  RSS idle ${fmt(f.idleMb, 1)} MB -> ${fmt(f.connectedMb, 1)} MB with ${fmt(COUNT)} connections: ${fmt(f.perConnKb, 2)} KB per idle connection`);
  console.log(`  delivery to the last of ${fmt(COUNT)} readers: p50 ${fmt(f.lastP50, 1)} ms, p99 ${fmt(f.lastP99, 1)} ms (over ${POSTS} posts)`);
  console.log(`  every delivery: p50 ${fmt(f.allP50, 1)} ms, p99 ${fmt(f.allP99, 1)} ms; missed deliveries: ${f.missing}`);
  console.log(`  RSS after closing them, then after each of ${CHURN_ROUNDS} rounds of ${fmt(COUNT)} connects and disconnects: ${f.churnMb.map((m) => `${fmt(m, 1)} MB`).join(", ")}`);
}

console.log(`${fmt(COUNT)} connections (half SSE, half WebSocket), ${POSTS} posts ${GAP_MS} ms apart, loopback, separate load process`);

// Baseline: a bare Bun server forwarding a same-sized payload.
const bare = spawn([BUN, join(ROOT, "scripts/bench/bare-stream-server.ts")], { env: { ...process.env, PORT: "3903" }, stdout: "ignore", stderr: "inherit" });
try {
  for (let i = 0; i < 100 && !(await fetch("http://127.0.0.1:3903/api/v1/streaming/health").then((r) => r.ok, () => false)); i++) await Bun.sleep(50);
  const filler = "x".repeat(2200);
  const f = await measure("bare", bare.pid, "http://127.0.0.1:3903", { SSE_PATH: "/api/v1/streaming/public/local" }, async (i) => {
    await fetch("http://127.0.0.1:3903/publish", { method: "POST", body: JSON.stringify({ content: `<p>bench-${i} ${filler}</p>` }) });
  });
  print("baseline: bare Bun server, one frame written to every connection", f);
} finally {
  bare.kill();
  await bare.exited;
}

const rookery = await startRookery(3904);
try {
  const author = await seedUser(rookery, "author");
  const reader = await seedUser(rookery, "reader");
  const post = (text: string) =>
    fetch(`${rookery.url}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${author.token}`, "content-type": "application/json" }, body: JSON.stringify({ status: text }) });
  // Warm the server the way a running instance is warm.
  for (let i = 0; i < 50; i++) await post(`warm-up status ${i} #bench`);
  const f = await measure("rookery", rookery.proc.pid, rookery.url, { TOKEN: reader.token }, async (i) => {
    const res = await post(`bench-${i} a public status with a #tag and https://example.com/${i}`);
    if (!res.ok) throw new Error(`post failed: ${res.status}`);
  });
  print("Rookery: POST /api/v1/statuses -> public:local stream", f);
} finally {
  await rookery.stop();
}
