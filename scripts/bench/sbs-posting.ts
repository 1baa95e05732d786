/**
 * Posting, side by side. Rookery's posts are timed until fully done: stored (wrk's last
 * answer), in the follower's home (bob's home timeline polled), streamed (bob's SSE stream of
 * /api/v1/streaming/user counts its `update` events) and delivered to a follower on another
 * server (scripts/bench/fed-sim.ts with one actor: a real Fedify actor with a key, which
 * follows alice with a signed Follow and answers each delivered Create 202 without checking
 * its signature); with link cards (each post links a page of its own on a loopback page
 * server here) and web push (bob's subscription to a push service stand-in here, told of each
 * post by his follow's notify) on, both also timed. GoToSocial's posts are counted as
 * accepted; then the time until its CPU goes quiet is reported, and nothing else is measured
 * before that.
 */
import { newDevice } from "../../test/support/push-service.ts";
import type { ApiClient } from "../interop/support.ts";
import { startSim, type Sim } from "./fed-common.ts";
import { quiet, track, treeCpuSeconds } from "./sbs-procs.ts";
import type { Seeded } from "./sbs-seed.ts";
import { load, type LoadOptions, type Run } from "./sbs-wrk.ts";

interface Counter {
  count: number;
  /** Date.now() of the latest one. */
  last: number;
}

const counter = (): Counter => ({ count: 0, last: 0 });
const tick = (c: Counter) => {
  c.count++;
  c.last = Date.now();
};

export interface Sinks {
  pageBase: string;
  pushBase: string;
  /** Each page fetched (its path) and when. */
  pages: Map<string, number>;
  pushes: Map<string, Counter>;
  stop(): void;
}

/** The page every post links (a page of its own each, so each card is fetched) and the push service. */
export function startSinks(pagePort: number, pushPort: number): Sinks {
  const pages = new Map<string, number>();
  const pushes = new Map<string, Counter>();
  const page = Bun.serve({
    hostname: "127.0.0.1",
    port: pagePort,
    fetch(request) {
      const path = new URL(request.url).pathname;
      pages.set(path, Date.now());
      const html = `<!doctype html><html><head><title>Page ${path}</title><meta property="og:title" content="A linked page ${path}"><meta property="og:description" content="What a link card shows of the page."><meta property="og:type" content="article"></head><body><p>A page on loopback.</p></body></html>`;
      return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  const push = Bun.serve({
    hostname: "127.0.0.1",
    port: pushPort,
    async fetch(request) {
      await request.arrayBuffer();
      const path = new URL(request.url).pathname;
      if (!pushes.has(path)) pushes.set(path, counter());
      tick(pushes.get(path)!);
      return new Response(null, { status: 201 });
    },
  });
  return {
    pageBase: `http://127.0.0.1:${pagePort}`,
    pushBase: `http://127.0.0.1:${pushPort}`,
    pages,
    pushes,
    stop() {
      page.stop(true);
      push.stop(true);
    },
  };
}

/** Subscribes the client to status notifications at the push service stand-in; null if the server took it, else its answer. */
export async function subscribePush(client: ApiClient, endpoint: string): Promise<string | null> {
  const device = await newDevice();
  const res = await client.post("/api/v1/push/subscription", {
    form: {
      "subscription[endpoint]": endpoint,
      "subscription[keys][p256dh]": device.p256dh,
      "subscription[keys][auth]": device.auth,
      "subscription[standard]": "true",
      "data[alerts][status]": "true",
      "data[alerts][mention]": "true",
      "data[policy]": "all",
    },
  });
  return res.status === 200 ? null : `${res.status} ${res.text.slice(0, 200)}`;
}

/** Records the status of each `update` event of an SSE stream (its id, and when it came) until stopped. */
export function streamCounter(url: string, token: string) {
  const updates = new Map<string, number>();
  const abort = new AbortController();
  const { promise: ready, resolve: connected } = Promise.withResolvers<void>();
  const done = (async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "user-agent": "rookery-side-by-side/1" }, signal: abort.signal });
    if (res.status !== 200 || !res.body) throw new Error(`the stream ${url} answered ${res.status}`);
    connected();
    const decoder = new TextDecoder();
    let rest = "";
    const reader = res.body.getReader();
    for (;;) {
      const { done: ended, value: chunk } = await reader.read();
      if (ended) break;
      const text = rest + decoder.decode(chunk, { stream: true });
      const events = text.split("\n\n");
      rest = events.pop()!;
      for (const event of events) {
        if (!/^event: update$/m.test(event)) continue;
        const data = /^data: (.*)$/m.exec(event)?.[1];
        if (data) updates.set((JSON.parse(data) as { id: string }).id, Date.now());
      }
    }
  })().catch((e) => {
    if (!abort.signal.aborted) throw e;
  });
  return { updates, ready, stop: () => abort.abort(), done };
}

export interface FollowerSetup {
  sim: Sim;
  stream: ReturnType<typeof streamCounter>;
  pushPath: string;
}

/** alice's remote follower, bob's stream and bob's push subscription on Rookery. */
export async function setUpRookeryFollowers(rookery: Seeded, sinks: Sinks, simPort: number): Promise<FollowerSetup> {
  const sim = await startSim({ servers: 1, actors: 1, port: simPort });
  track(sim.proc);
  await sim.follow(`${rookery.server.url}/users/alice`, "s");
  await within("the remote follower's Follow accepted", 60, async () => (await sim.stats()).accepts >= 1);
  const pushPath = "/push/rookery";
  const refused = await subscribePush(rookery.bob, `${sinks.pushBase}${pushPath}`);
  if (refused) throw new Error(`Rookery refused bob's push subscription: ${refused}`);
  const stream = streamCounter(`${rookery.server.url}/api/v1/streaming/user`, rookery.bob.token!);
  await Promise.race([stream.ready, stream.done.then(() => Promise.reject(new Error("bob's stream closed at once")))]);
  return { sim, stream, pushPath };
}

async function within(what: string, seconds: number, check: () => Promise<boolean>) {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await Bun.sleep(20);
  }
}

/** The body wrk posts: `%s` is made unique per post by sbs-wrk.ts, and `nonce` per run, so that every post links a page not seen before. */
export const postBody = (pageBase: string, nonce: string) => JSON.stringify({ status: `A benchmark post ${nonce}-%s with #sidebyside and a link: ${pageBase}/page/${nonce}-%s` });

async function statusesCount(s: Seeded): Promise<number> {
  const res = await s.alice.get("/api/v1/accounts/verify_credentials");
  if (res.status !== 200) throw new Error(`${s.server.name} verify_credentials: ${res.status}`);
  return res.body.statuses_count as number;
}

export interface PostRun {
  run: Run;
  /** Posts accepted (wrk's 2xx answers). */
  posts: number;
  acceptedPerSecond: number;
  /** Server CPU from the start of wrk until the server went quiet again, over the posts: background work included. */
  cpuUsPerPostAll: number;
}

async function post(s: Seeded, sinks: Sinks, options: LoadOptions, nonce: string) {
  const before = await statusesCount(s);
  const cpu0 = treeCpuSeconds(s.server.pid());
  const t0 = Date.now();
  const run = await load(`${s.server.url}/api/v1/statuses`, s.server.pid(), options, {
    method: "POST",
    headers: { authorization: `Bearer ${s.alice.token}`, "content-type": "application/json" },
    postBody: postBody(sinks.pageBase, nonce),
  });
  const tEnd = Date.now();
  // Accepted: wrk's 2xx answers (GoToSocial's statuses_count lags behind its posts). Stored:
  // the account's count, which also has the posts still in flight when wrk stopped.
  const accepted = run.requests - run.non2xx;
  const stored = (await statusesCount(s)) - before;
  return { run, posts: accepted, stored, acceptedPerSecond: accepted / run.seconds, t0, tEnd, cpu0 };
}

export interface GtsPostRun extends PostRun {
  /** From wrk's end until GoToSocial's CPU went quiet, in s; null if not within the deadline. */
  busySeconds: number | null;
}

export async function postGoToSocial(s: Seeded, sinks: Sinks, options: LoadOptions): Promise<GtsPostRun> {
  const r = await post(s, sinks, options, nonce());
  const busy = await quiet(s.server.pid());
  const cpuUsPerPostAll = ((treeCpuSeconds(s.server.pid()) - r.cpu0) / r.posts) * 1e6;
  return { run: r.run, posts: r.posts, acceptedPerSecond: r.acceptedPerSecond, cpuUsPerPostAll, busySeconds: busy === null ? null : busy / 1000 };
}

export interface Stage {
  /** Seconds from the start of wrk until this stage had every post, or null if not reached. */
  seconds: number | null;
  reached: number;
}

export interface RookeryPostRun extends PostRun {
  stored: Stage;
  home: Stage;
  streamed: Stage;
  delivered: Stage;
  pushed: Stage;
  carded: Stage;
  /** Posts per second until stored, in bob's home, streamed and delivered. */
  fullyDonePerSecond: number | null;
  quietSeconds: number | null;
}

const nonce = () => Math.random().toString(36).slice(2, 8);

export async function postRookery(s: Seeded, followers: FollowerSetup, sinks: Sinks, options: LoadOptions, deadlineSeconds: number): Promise<RookeryPostRun> {
  await followers.sim.reset();
  followers.stream.updates.clear();
  const runNonce = nonce();
  const pushBase = sinks.pushes.get(followers.pushPath)?.count ?? 0;
  const r = await post(s, sinks, options, runNonce);
  // Every post stored counts, those wrk stopped waiting for included: alice's statuses_count.
  const n = r.stored;
  const latestId = ((await s.bob.get(`/api/v1/accounts/${s.aliceId}/statuses?limit=1`)).body as { id: string }[])[0]?.id;
  const deadline = Date.now() + deadlineSeconds * 1000;
  const since = (t: number) => (t - r.t0) / 1000;
  let home: Stage = { seconds: null, reached: 0 };
  const stage = (count: number, last: number): Stage => ({ seconds: count >= n ? since(last) : null, reached: count });
  // How many of a record's entries are this run's, and when the last came.
  const ofRun = (times: Map<string, number>, match: (key: string) => boolean) => {
    let count = 0;
    let last = 0;
    for (const [key, t] of times) if (match(key)) (count++, (last = Math.max(last, t)));
    return { count, last };
  };
  for (;;) {
    if (home.seconds === null) {
      const top = await s.bob.get("/api/v1/timelines/home?limit=1");
      if (top.body?.[0]?.id === latestId) home = { seconds: since(Date.now()), reached: n };
    }
    const sim = await followers.sim.stats();
    const pushes = sinks.pushes.get(followers.pushPath) ?? counter();
    // Streamed: only alice posts meanwhile, and the record was emptied at the start of the run.
    const streamed = ofRun(followers.stream.updates, () => true);
    const cards = ofRun(sinks.pages, (path) => path.startsWith(`/page/${runNonce}-`));
    const stages = {
      streamed: stage(streamed.count, streamed.last),
      delivered: stage(sim.deliveries, sim.last),
      pushed: stage(pushes.count - pushBase, pushes.last),
      carded: stage(cards.count, cards.last),
    };
    const all = home.seconds !== null && Object.values(stages).every((st) => st.seconds !== null);
    if (all || Date.now() > deadline) {
      const stored: Stage = { seconds: since(r.tEnd), reached: n };
      const core = [stored, home, stages.streamed, stages.delivered];
      const doneAt = core.every((st) => st.seconds !== null) ? Math.max(...core.map((st) => st.seconds!)) : null;
      const waitFrom = Date.now();
      const quietMs = await quiet(s.server.pid());
      const cpuUsPerPostAll = ((treeCpuSeconds(s.server.pid()) - r.cpu0) / n) * 1e6;
      // Busy after wrk ended, as GoToSocial's is counted.
      const quietSeconds = quietMs === null ? null : (waitFrom - r.tEnd + quietMs) / 1000;
      return { run: r.run, posts: r.posts, stored, acceptedPerSecond: r.acceptedPerSecond, cpuUsPerPostAll, home, ...stages, fullyDonePerSecond: doneAt === null ? null : n / doneAt, quietSeconds };
    }
    await Bun.sleep(50);
  }
}
