/**
 * The load side of the streaming benchmark, run as its own process so that the server's
 * figures are its own: opens COUNT streaming connections to BASE (half server-sent events
 * over raw sockets, half WebSockets; every fourth one signed in with TOKEN), then notes
 * when each connection sees each `bench-<n>` marker.
 *
 * Talks to its parent over stdin/stdout, one JSON object per line:
 *   out {"ready": n}              all connections are open
 *   in  "report"                  -> out {"report": {marker: [arrival ms...]}}
 *   in  "close"                   -> closes everything, out {"closed": true}
 *   in  "churn <n>"               -> opens and closes n connections, out {"churned": n}
 */
import type { Socket } from "bun";

const BASE = process.env.BASE ?? "http://127.0.0.1:3000";
const COUNT = Number(process.env.COUNT ?? 10_000);
const TOKEN = process.env.TOKEN ?? "";
const STREAM = process.env.STREAM ?? "public:local";
const SSE_PATH = process.env.SSE_PATH ?? "/api/v1/streaming/public/local";
const url = new URL(BASE);
const port = Number(url.port);
const MARKER = /bench-(\d+)/g;

const now = () => performance.timeOrigin + performance.now();
const arrivals = new Map<string, number[]>();

/** Markers seen in a chunk; the tail of the previous chunk covers a marker split in two. */
function scanner() {
  let tail = "";
  const seen = new Set<string>();
  return (text: string) => {
    const at = now();
    const hay = tail + text;
    for (const m of hay.matchAll(MARKER)) {
      // A marker ending at the very end may still be cut short; wait for the next chunk.
      if (m.index! + m[0].length === hay.length) continue;
      if (seen.has(m[1]!)) continue;
      seen.add(m[1]!);
      let list = arrivals.get(m[1]!);
      if (!list) arrivals.set(m[1]!, (list = []));
      list.push(at);
    }
    tail = hay.slice(-24);
  };
}

type Closer = () => void;
const open: Closer[] = [];

function openSse(signedIn: boolean): Promise<Closer> {
  const scan = scanner();
  const decoder = new TextDecoder();
  return new Promise((resolve, reject) => {
    let headers = false;
    Bun.connect({
      hostname: url.hostname,
      port,
      socket: {
        open(s: Socket<undefined>) {
          s.write(`GET ${SSE_PATH} HTTP/1.1\r\nHost: ${url.host}\r\n${signedIn ? `Authorization: Bearer ${TOKEN}\r\n` : ""}Accept: text/event-stream\r\n\r\n`);
        },
        data(s, data) {
          const text = decoder.decode(data, { stream: true });
          if (!headers) {
            if (!text.startsWith("HTTP/1.1 200")) reject(new Error(`SSE refused: ${text.slice(0, 80)}`));
            headers = true;
            resolve(() => s.end());
          }
          scan(text);
        },
        error(_s, e) {
          reject(e);
        },
      },
    }).catch(reject);
  });
}

function openWs(signedIn: boolean): Promise<Closer> {
  const scan = scanner();
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${BASE.replace("http", "ws")}/api/v1/streaming?stream=${STREAM}`, signedIn ? [TOKEN] : []);
    ws.onopen = () => resolve(() => ws.close());
    ws.onerror = () => reject(new Error("WebSocket failed"));
    ws.onmessage = (m) => scan(String(m.data));
  });
}

async function openMany(n: number, into: Closer[]) {
  const BATCH = 250;
  for (let i = 0; i < n; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      const signedIn = TOKEN !== "" && j % 4 === 3;
      batch.push(j % 2 === 0 ? openSse(signedIn) : openWs(signedIn));
    }
    into.push(...(await Promise.all(batch)));
  }
}

function say(body: unknown) {
  process.stdout.write(`${JSON.stringify(body)}\n`);
}

await openMany(COUNT, open);
say({ ready: open.length });

const decoder = new TextDecoder();
let buffered = "";
const stdin = Bun.stdin.stream().getReader();
for (;;) {
  const { value, done } = await stdin.read();
  if (done) break;
  buffered += decoder.decode(value);
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const command = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    if (command === "report") {
      say({ report: Object.fromEntries(arrivals) });
    } else if (command === "close") {
      for (const close of open.splice(0)) close();
      say({ closed: true });
    } else if (command.startsWith("churn ")) {
      const n = Number(command.slice(6));
      const churned: Closer[] = [];
      await openMany(n, churned);
      for (const close of churned) close();
      say({ churned: churned.length });
    } else if (command === "exit") {
      process.exit(0);
    }
  }
}
