/**
 * Posting with everything a post sets off turned on, timed until every post is fully done.
 *
 * Rookery (CPU 0) has an author and a local follower ("reader") who follows with the bell on
 * (notify: every post is a `status` notification), has a Web Push subscription to a push
 * service stand-in on loopback, and holds the user stream open (SSE). A second Rookery process
 * (the peer, CPU 1) has an account that follows the author, so every post is a Create delivered
 * to its inbox. Each post carries a link to a page on loopback (its card fetched once, then set
 * from the kept one on every post).
 *
 * wrk posts for the given seconds; the script then waits until every post is in the reader's
 * home feed, streamed to the SSE client, pushed, its card set, and delivered (stored by the
 * peer), and prints when each was reached and Rookery's CPU time per post (utime+stime of its
 * process from wrk's start until all is done here; the peer's CPU is shown apart).
 *
 *   bun scripts/bench/posting.ts [seconds=4] [--connections=32] [--no-bell] [--no-peer] [--no-stream] [--no-link]
 *
 * Each --no- takes one part away, to see what it costs: --no-bell (the follower follows without
 * notifications: no push is sent, the push checks remain), --no-peer (no remote follower),
 * --no-stream (no SSE client), --no-link (posts without a link, so no card).
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { until } from "./fed-common.ts";
import { cpuSeconds, fmt, requireWrk, seedUser, startRookery, wrkAsync } from "./lib.ts";

requireWrk();
const args = process.argv.slice(2);
const seconds = Number(args.find((a) => !a.startsWith("--")) ?? 4);
const connections = Number(args.find((a) => a.startsWith("--connections="))?.split("=")[1] ?? 32);
const bell = !args.includes("--no-bell");
const withPeer = !args.includes("--no-peer");
const withStream = !args.includes("--no-stream");
const withLink = !args.includes("--no-link");
const PORT = 3931;
const PEER_PORT = 3932;

// A page with OpenGraph tags, and a push service that takes every push (201).
let pageFetches = 0;
const page = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch() {
    pageFetches++;
    return new Response(`<html><head><title>A page</title><meta property="og:title" content="A linked page"><meta property="og:description" content="What it is about"></head><body>text</body></html>`, { headers: { "content-type": "text/html; charset=utf-8" } });
  },
});
let pushes = 0;
const pushService = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    await request.arrayBuffer();
    pushes++;
    return new Response(null, { status: 201 });
  },
});

const federating = { ALLOW_PRIVATE_ADDRESSES: "true", INBOX_RATE_LIMIT: "off" };
const rookery = await startRookery(PORT, { ...federating, PUBLIC_URL: `http://127.0.0.1:${PORT}` }, "0");
const peer = await startRookery(PEER_PORT, { ...federating, PUBLIC_URL: `http://127.0.0.1:${PEER_PORT}` }, "1");
const db = new Database(join(rookery.dataDir, "rookery.sqlite3"), { readonly: true });
const peerDb = new Database(join(peer.dataDir, "rookery.sqlite3"), { readonly: true });
const count = (d: Database, sql: string, ...params: (string | number)[]) => (d.query(sql).get(...params) as { n: number }).n;
let sse: AbortController | null = null;
try {
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const author = await seedUser(rookery, "author");
  const reader = await seedUser(rookery, "reader", "read write follow push");
  const remote = await seedUser(peer, "remote");
  const api = async (base: string, token: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method: body === undefined ? "GET" : "POST", headers: auth(token), body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };

  await api(rookery.url, reader.token, `/api/v1/accounts/${author.id}/follow`, { notify: bell });
  const keys = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const p256dh = Buffer.from(await crypto.subtle.exportKey("raw", keys.publicKey)).toString("base64url");
  const alerts = Object.fromEntries(["mention", "status", "reblog", "follow", "favourite", "poll", "update"].map((t) => [t, true]));
  await api(rookery.url, reader.token, "/api/v1/push/subscription", {
    subscription: { endpoint: `http://127.0.0.1:${pushService.port}/push/reader`, keys: { p256dh, auth: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url") } },
    data: { alerts, policy: "all" },
  });
  // The peer's account finds the author by its actor IRI and follows it (Follow, Accept).
  let remoteAuthorRow = 0;
  if (withPeer) {
    const found = await api(peer.url, remote.token, `/api/v2/search?resolve=true&type=accounts&q=${encodeURIComponent(`${rookery.url}/users/author`)}`);
    const remoteAuthorId = found.accounts[0]?.id as string;
    if (!remoteAuthorId) throw new Error("the peer did not find the author");
    await api(peer.url, remote.token, `/api/v1/accounts/${remoteAuthorId}/follow`, {});
    await until("the peer's follow accepted", async () => (await api(peer.url, remote.token, `/api/v1/accounts/relationships?id[]=${remoteAuthorId}`))[0]?.following === true, 30);
    remoteAuthorRow = Number(remoteAuthorId);
  }

  // The reader's user stream, counting the updates it is sent.
  let streamed = 0;
  if (withStream) {
    sse = new AbortController();
    const stream = await fetch(`${rookery.url}/api/v1/streaming/user`, { headers: { authorization: `Bearer ${reader.token}` }, signal: sse.signal });
    void (async () => {
      const decoder = new TextDecoder();
      let tail = "";
      try {
        for (const body = stream.body!.getReader(); ; ) {
          const { value: chunk, done } = await body.read();
          if (done) break;
          const text = tail + decoder.decode(chunk, { stream: true });
          const lines = text.split("\n");
          tail = lines.pop()!;
          for (const line of lines) if (line === "event: update") streamed++;
        }
      } catch {}
    })();
  }

  const linkUrl = `http://127.0.0.1:${page.port}/article`;
  const body = JSON.stringify({ status: withLink ? `Benchmark post with #tag and ${linkUrl}` : "Benchmark post with #tag" });
  const authorRowId = Number(author.id);
  const state = () => ({
    posted: count(db, "SELECT count(*) AS n FROM statuses WHERE account_id = ?", authorRowId),
    home: count(db, "SELECT count(*) AS n FROM home_feed WHERE account_id = ?", Number(reader.id)),
    carded: count(db, "SELECT count(*) AS n FROM statuses WHERE account_id = ? AND card IS NOT NULL", authorRowId),
    queued: count(db, "SELECT count(*) AS n FROM fedify_messages"),
    stored: count(peerDb, "SELECT count(*) AS n FROM statuses WHERE account_id = ?", remoteAuthorRow),
    streamed,
    pushes,
  });
  // Warm-up: ten posts, fully done (the card fetched, the peer's keys known).
  for (let i = 0; i < 10; i++) await api(rookery.url, author.token, "/api/v1/statuses", JSON.parse(body));
  await until("the warm-up done", async () => {
    const s = state();
    return (!withPeer || s.stored === 10) && (!withStream || s.streamed === 10) && (!withLink || s.carded === 10) && s.queued === 0 && (!bell || s.pushes === 10);
  }, 60);

  const before = state();
  const cpu0 = cpuSeconds(rookery.proc.pid);
  const peerCpu0 = cpuSeconds(peer.proc.pid);
  const t0 = Date.now();
  const result = await wrkAsync(`${rookery.url}/api/v1/statuses`, { seconds, connections, method: "POST", body, headers: auth(author.token) });
  const wrkEnd = Date.now();
  const cpuWrk = cpuSeconds(rookery.proc.pid) - cpu0;
  const afterWrk = state();
  const posts = afterWrk.posted - before.posted;
  const reached: Record<string, number> = {};
  type Goal = [string, (s: ReturnType<typeof state>) => boolean];
  const goals: Goal[] = [
    ["in the follower's home", (s) => s.home - before.home >= posts],
    ...(withStream ? [["streamed to the SSE client", (s) => s.streamed - before.streamed >= posts] as Goal] : []),
    ...(withLink ? [["card set", (s) => s.carded - before.carded >= posts] as Goal] : []),
    ...(bell ? [["pushed", (s) => s.pushes - before.pushes >= posts] as Goal] : []),
    // Rookery's queue can be empty while Creates are still being prepared (signed) in memory:
    // a post is delivered when the peer has stored it.
    ...(withPeer ? [["delivered, stored by the peer", (s) => s.stored - before.stored >= posts && s.queued === 0] as Goal] : []),
  ];
  const local = goals.filter(([n]) => n !== "delivered, stored by the peer");
  let localDoneCpu = NaN;
  await until("every post fully done", async () => {
    const s = state();
    for (const [name, check] of goals) if (reached[name] === undefined && check(s)) reached[name] = Date.now();
    if (Number.isNaN(localDoneCpu) && local.every(([n]) => reached[n] !== undefined)) {
      localDoneCpu = cpuSeconds(rookery.proc.pid) - cpu0;
    }
    return goals.every(([n]) => reached[n] !== undefined);
  }, 600);
  const allCpu = cpuSeconds(rookery.proc.pid) - cpu0;

  console.log(`wrk: 1 thread, ${connections} connections, ${seconds} s of POST /api/v1/statuses; bell ${bell ? "on (a push per post)" : "off"}, remote follower ${withPeer ? "on" : "off"}, SSE ${withStream ? "on" : "off"}, link ${withLink ? "on" : "off"}`);
  console.log(`posts accepted:          ${fmt(posts)} = ${fmt(posts / ((wrkEnd - t0) / 1000))}/s (wrk: ${fmt(result.requestsPerSecond)}/s, p50 ${fmt(result.p50ms, 2)} ms, p99 ${fmt(result.p99ms, 2)} ms${result.non2xx ? `, non-2xx ${result.non2xx}` : ""})`);
  for (const [name] of goals) {
    const ms = reached[name]! - t0;
    console.log(`${name.padEnd(36)} all after ${fmt(ms / 1000, 2)} s = ${fmt(posts / (ms / 1000))}/s`);
  }
  const localDone = Math.max(...local.map(([n]) => reached[n]!));
  const all = Math.max(...goals.map(([n]) => reached[n]!));
  console.log(`fully done (all of the above) after ${fmt((all - t0) / 1000, 2)} s = ${fmt(posts / ((all - t0) / 1000))} posts/s`);
  console.log(`done here (all but the peer) after ${fmt((localDone - t0) / 1000, 2)} s = ${fmt(posts / ((localDone - t0) / 1000))} posts/s`);
  console.log(`Rookery CPU per post:    ${fmt((cpuWrk * 1e6) / posts)} µs while wrk ran; ${fmt((localDoneCpu * 1e6) / posts)} µs until done here; ${fmt((allCpu * 1e6) / posts)} µs until fully done`);
  if (withPeer) console.log(`the peer's CPU per post:  ${fmt(((cpuSeconds(peer.proc.pid) - peerCpu0) * 1e6) / posts)} µs (verifying and storing each Create; not Rookery's)`);
  console.log(`link page fetched ${pageFetches} time(s)`);
} finally {
  sse?.abort();
  db.close();
  peerDb.close();
  await rookery.stop();
  await peer.stop();
  page.stop(true);
  pushService.stop(true);
}
