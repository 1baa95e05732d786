import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { heapSize } from "bun:jsc";
import { loadConfig } from "../../src/config.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { parseScopes } from "../../src/auth/scopes.ts";
import { readEndpoints, seedReads } from "./reads-seed.ts";

/** A server in-process with a counting query hook, two users and their tokens. */
async function countingServer(): Promise<{ server: RunningServer; base: string; counted: string[]; users: { author: { id: string; token: string }; reader: { id: string; token: string } }; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-queries-"));
  const counted: string[] = [];
  const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off" }), {
    derivePublicUrl: true,
    onQuery: (sql) => void counted.push(sql),
  });
  const { services } = server.ctx;
  const author = await services.accounts.create({ username: "author", email: "a@q.test", password: "query counting" }, { api: false });
  const reader = await services.accounts.create({ username: "reader", email: "r@q.test", password: "query counting" }, { api: false });
  const { app } = await services.applications.register({ name: "q", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow" });
  const token = async (id: number) => (await services.tokens.issue(app.id, id, parseScopes("read write follow"))).accessToken;
  return {
    server,
    base: server.ctx.config.publicUrl,
    counted,
    users: { author: { id: String(author.id), token: await token(author.id) }, reader: { id: String(reader.id), token: await token(reader.id) } },
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts a server in-process with a counting query hook and counts one request of each kind. */
export async function countQueries(): Promise<[string, number][]> {
  const { base, counted, users, stop } = await countingServer();
  try {
    const h = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    const state = await seedReads(base, users.author, users.reader, 25);
    const measure = async (label: string, url: string, init: RequestInit = {}): Promise<[string, number]> => {
      await fetch(url, init); // warm caches (token lookup, app names)
      counted.length = 0;
      const res = await fetch(url, init);
      await res.arrayBuffer();
      return [label, counted.length];
    };
    return [
      await measure("GET /api/v1/statuses/:id (anon)", `${base}/api/v1/statuses/${state.statusId}`),
      await measure("GET /api/v1/statuses/:id (signed in)", `${base}/api/v1/statuses/${state.statusId}`, { headers: h(users.reader.token) }),
      await measure("GET /api/v1/timelines/home?limit=20", `${base}/api/v1/timelines/home?limit=20`, { headers: h(users.reader.token) }),
      await measure("POST /api/v1/statuses", `${base}/api/v1/statuses`, { method: "POST", headers: h(users.author.token), body: JSON.stringify({ status: "counted" }) }),
    ];
  } finally {
    await stop();
  }
}

export interface ReadCount {
  label: string;
  /** SQL statements the second request of the kind ran (the first warms the caches). */
  statements: number;
  /** Their text, for `--sql`. */
  sql: string[];
  /**
   * Bytes of JavaScript heap one request adds between collections: the median over 15 batches
   * of 10 sequential requests, each batch after a full collection, less what a request to the
   * health route adds (the in-process client's own share). A collection within a batch makes
   * that batch read low; the median keeps it out.
   */
  heapBytes: number;
}

/** Counts statements and heap per request for each read of reads-seed.ts, in-process. */
export async function countReads(only?: string): Promise<ReadCount[]> {
  const { base, counted, users, stop } = await countingServer();
  try {
    const state = await seedReads(base, users.author, users.reader, 60);
    const get = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, { headers });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      await res.arrayBuffer();
    };
    const heapPerRequest = async (path: string, headers: Record<string, string>) => {
      for (let i = 0; i < 50; i++) await get(path, headers);
      const samples: number[] = [];
      for (let b = 0; b < 15; b++) {
        Bun.gc(true);
        const before = heapSize();
        for (let i = 0; i < 10; i++) await get(path, headers);
        samples.push((heapSize() - before) / 10);
      }
      return samples.sort((a, b) => a - b)[7]!;
    };
    const floor = await heapPerRequest("/api/v1/streaming/health", {});
    const out: ReadCount[] = [];
    for (const e of readEndpoints(state)) {
      if (only !== undefined && !e.label.includes(only)) continue;
      await get(e.path, e.headers);
      counted.length = 0;
      await get(e.path, e.headers);
      const sql = [...counted];
      out.push({ label: e.label, statements: sql.length, sql, heapBytes: Math.max(0, (await heapPerRequest(e.path, e.headers)) - floor) });
    }
    return out;
  } finally {
    await stop();
  }
}

/**
 * The statements of one post with what it sets off here: a follower with the bell on (a
 * `status` notification), a Web Push subscription to a sink on loopback, the follower's user
 * stream open, a link whose card is already kept. `request`: those run before the response;
 * `after`: those of the work after it (streams, card, push), counted until it has all happened.
 */
export async function countPostStatements(): Promise<{ request: string[]; after: string[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-queries-"));
  let log: string[] | null = null;
  const sink = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (r) => (await r.arrayBuffer(), new Response(null, { status: 201 })) });
  const page = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(`<html><head><meta property="og:title" content="A page"></head></html>`, { headers: { "content-type": "text/html" } }) });
  const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off", ALLOW_PRIVATE_ADDRESSES: "true" }), {
    derivePublicUrl: true,
    onQuery: (sql) => log?.push(sql.replace(/\s+/g, " ").trim()),
  });
  const base = server.ctx.config.publicUrl;
  const { services } = server.ctx;
  const sse = new AbortController();
  try {
    const author = await services.accounts.create({ username: "author", email: "a@q.test", password: "query counting" }, { api: false });
    const reader = await services.accounts.create({ username: "reader", email: "r@q.test", password: "query counting" }, { api: false });
    const { app } = await services.applications.register({ name: "q", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow push" });
    const authorToken = (await services.tokens.issue(app.id, author.id, parseScopes("read write follow push"))).accessToken;
    const readerToken = (await services.tokens.issue(app.id, reader.id, parseScopes("read write follow push"))).accessToken;
    const h = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    await fetch(`${base}/api/v1/accounts/${author.id}/follow`, { method: "POST", headers: h(readerToken), body: JSON.stringify({ notify: true }) });
    const keys = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
    const subscribed = await fetch(`${base}/api/v1/push/subscription`, {
      method: "POST",
      headers: h(readerToken),
      body: JSON.stringify({
        subscription: { endpoint: `http://127.0.0.1:${sink.port}/p`, keys: { p256dh: Buffer.from(await crypto.subtle.exportKey("raw", keys.publicKey)).toString("base64url"), auth: Buffer.from(new Uint8Array(16).fill(7)).toString("base64url") } },
        data: { alerts: { status: true }, policy: "all" },
      }),
    });
    if (subscribed.status !== 200) throw new Error(`push subscription: ${subscribed.status}`);
    const stream = await fetch(`${base}/api/v1/streaming/user`, { headers: { authorization: `Bearer ${readerToken}` }, signal: sse.signal });
    let updates = 0;
    void (async () => {
      try {
        for (const body = stream.body!.getReader(); ; ) {
          const { value, done } = await body.read();
          if (done) break;
          updates += (new TextDecoder().decode(value).match(/event: update/g) ?? []).length;
        }
      } catch {}
    })();
    const body = JSON.stringify({ status: `counted, with http://127.0.0.1:${page.port}/page` });
    const settled = async (n: number) => {
      const deadline = Date.now() + 10_000;
      const pushed = () => (server.database.sqlite!.query("SELECT count(*) AS n FROM push_deliveries").get() as { n: number }).n === 0;
      const carded = () => (server.database.sqlite!.query("SELECT count(*) AS n FROM statuses WHERE card IS NULL").get() as { n: number }).n === 0;
      while (!(updates >= n && pushed() && carded())) {
        if (Date.now() > deadline) throw new Error("the post's after-work did not finish");
        await Bun.sleep(5);
      }
    };
    // Warm: the card fetched and kept, the statement caches full.
    for (let i = 0; i < 3; i++) await fetch(`${base}/api/v1/statuses`, { method: "POST", headers: h(authorToken), body });
    await settled(3);
    const request: string[] = [];
    log = request;
    const res = await fetch(`${base}/api/v1/statuses`, { method: "POST", headers: h(authorToken), body });
    await res.arrayBuffer();
    const after: string[] = [];
    log = after;
    await settled(4);
    log = null;
    // The polls of `settled` itself are not the post's.
    return { request, after: after.filter((s) => !/^SELECT count\(\*\) AS n FROM (push_deliveries|statuses WHERE card IS NULL)$/.test(s)) };
  } finally {
    sse.abort();
    await server.stop();
    sink.stop(true);
    page.stop(true);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { request, after } = await countPostStatements();
  console.log(`POST /api/v1/statuses: ${request.length} statements before the response, ${after.length} after it`);
  for (const s of request) console.log(`  request  ${s.slice(0, 150)}`);
  for (const s of after) console.log(`  after    ${s.slice(0, 150)}`);
}
