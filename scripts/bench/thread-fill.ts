// How long Rookery takes to fill a remote thread of 40 replies it has none of (issue 28): from
// the `GET /api/v1/statuses/:id/context` that starts the fill to the async refresh reported
// finished, after which the second context request shows all 40.
//
//   bun scripts/bench/thread-fill.ts [rounds=10] [latency of the remote server, ms=0,50]
//
// The remote server runs in this process on 127.0.0.40 and answers as Mastodon does: each Note
// with its `replies` Collection and first page embedded, 10 replies a page, the pages linked by
// `next`; 29 direct replies (every third embedded in its page), 10 replies to them and one reply
// two levels down. Each answer waits the given latency first (a server across a network). Each
// round is a new thread; Rookery runs as `rookery serve`, a process of its own.
import { startRookery, seedUser } from "./lib.ts";

const ROUNDS = Number(process.argv[2] ?? 10);
const LATENCIES = (process.argv[3] ?? "0,50").split(",").map(Number);
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const CONTEXT = "https://www.w3.org/ns/activitystreams";

let latency = 0;
const documents = new Map<string, Record<string, unknown>>();
let requests = 0;
const sim = Bun.serve({
  hostname: "127.0.0.40",
  port: 0,
  async fetch(request) {
    requests++;
    const url = new URL(request.url);
    if (latency > 0) await Bun.sleep(latency);
    const doc = documents.get(url.pathname + url.search);
    return doc ? new Response(JSON.stringify({ "@context": CONTEXT, ...doc }), { headers: { "content-type": "application/activity+json" } }) : new Response("not found", { status: 404 });
  },
});
const base = `http://127.0.0.40:${sim.port}`;
const actor = `${base}/actors/dave`;
documents.set("/actors/dave", { id: actor, type: "Person", preferredUsername: "dave", inbox: `${actor}/inbox` });

/** A Note at `path` with its replies, 10 a page, the first page embedded; answers its IRI. */
function thread(path: string, content: string, replies: (string | Record<string, unknown>)[], inReplyTo: string | null): string {
  const id = `${base}${path}`;
  const pages = Math.max(1, Math.ceil(replies.length / 10));
  const page = (n: number) => ({ id: `${id}/replies?page=${n}`, type: "CollectionPage", partOf: `${id}/replies`, items: replies.slice(n * 10, n * 10 + 10), ...(n + 1 < pages ? { next: `${id}/replies?page=${n + 1}` } : {}) });
  for (let n = 1; n < pages; n++) documents.set(`${path}/replies?page=${n}`, page(n));
  documents.set(path, { id, type: "Note", attributedTo: actor, content: `<p>${content}</p>`, to: [PUBLIC], published: "2025-01-01T00:00:00Z", inReplyTo, replies: { id: `${id}/replies`, type: "Collection", first: page(0) } });
  return id;
}

/** A thread of 40 replies under /t{round}/; answers its root's IRI. */
function fortyReplies(round: number): string {
  const root = `${base}/t${round}/root`;
  const direct: (string | Record<string, unknown>)[] = [];
  for (let i = 0; i < 29; i++) {
    const path = `/t${round}/r${i}`;
    const children: string[] = [];
    for (let j = 0; i < 5 && j < 2; j++) {
      const grand = i === 0 && j === 0 ? [thread(`/t${round}/r0-0-0`, "deep", [], `${base}/t${round}/r0-0`)] : [];
      children.push(thread(`/t${round}/r${i}-${j}`, `reply ${i}.${j}`, grand, `${base}${path}`));
    }
    const iri = thread(path, `reply ${i}`, children, root);
    direct.push(i % 3 === 0 ? documents.get(path)! : iri);
  }
  return thread(`/t${round}/root`, "the root", direct, null);
}

const rookery = await startRookery(3990, { ALLOW_PRIVATE_ADDRESSES: "true" });
try {
  const { token } = await seedUser(rookery, "reader");
  const api = async (path: string) => {
    const res = await fetch(`${rookery.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { headers: res.headers, body: (await res.json()) as any };
  };
  console.log(`thread fill: 40 replies over ${ROUNDS} rounds (${new Date().toISOString().slice(0, 10)})`);
  let round = 0;
  for (const ms of LATENCIES) {
    latency = ms;
    const times: number[] = [];
    let perFill = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const root = fortyReplies(round++);
      const found = await api(`/api/v2/search?q=${encodeURIComponent(root)}&resolve=true&type=statuses`);
      const id = found.body.statuses[0].id;
      const before = requests;
      const started = performance.now();
      const first = await api(`/api/v1/statuses/${id}/context`);
      const refresh = /id="([^"]+)"/.exec(first.headers.get("mastodon-async-refresh") ?? "")?.[1];
      if (!refresh) throw new Error("no async refresh announced");
      for (;;) {
        const state = await api(`/api/v1_alpha/async_refreshes/${refresh}`);
        if (state.body.async_refresh.status === "finished") break;
        await Bun.sleep(5);
      }
      times.push(performance.now() - started);
      perFill = requests - before;
      const second = await api(`/api/v1/statuses/${id}/context`);
      if (second.body.descendants.length !== 40) throw new Error(`${second.body.descendants.length} replies shown, not 40`);
    }
    times.sort((x, y) => x - y);
    const median = times[Math.floor(times.length / 2)]!;
    console.log(`  remote latency ${ms} ms: median ${median.toFixed(0)} ms, fastest ${times[0]!.toFixed(0)} ms, slowest ${times[times.length - 1]!.toFixed(0)} ms; ${perFill} requests to the remote server a fill`);
  }
} finally {
  await rookery.stop();
  sim.stop(true);
}
