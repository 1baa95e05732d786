import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { parseScopes } from "../../src/auth/scopes.ts";

/** Starts a server in-process with a counting query hook and counts one request of each kind. */
export async function countQueries(): Promise<[string, number][]> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-queries-"));
  let count = 0;
  const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off" }), {
    derivePublicUrl: true,
    onQuery: () => count++,
  });
  const base = server.ctx.config.publicUrl;
  const { services } = server.ctx;
  try {
    const author = await services.accounts.create({ username: "author", email: "a@q.test", password: "query counting" }, { api: false });
    const reader = await services.accounts.create({ username: "reader", email: "r@q.test", password: "query counting" }, { api: false });
    const { app } = services.applications.register({ name: "q", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow" });
    const authorToken = services.tokens.issue(app.id, author.id, parseScopes("read write follow")).accessToken;
    const readerToken = services.tokens.issue(app.id, reader.id, parseScopes("read write follow")).accessToken;
    const h = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    await fetch(`${base}/api/v1/accounts/${author.id}/follow`, { method: "POST", headers: h(readerToken) });
    let id = "";
    for (let i = 0; i < 25; i++) {
      const res = await fetch(`${base}/api/v1/statuses`, { method: "POST", headers: h(authorToken), body: JSON.stringify({ status: `status ${i} #tag` }) });
      id = ((await res.json()) as { id: string }).id;
    }
    const measure = async (label: string, url: string, init: RequestInit = {}): Promise<[string, number]> => {
      await fetch(url, init); // warm caches (token lookup, app names)
      count = 0;
      const res = await fetch(url, init);
      await res.arrayBuffer();
      return [label, count];
    };
    return [
      await measure("GET /api/v1/statuses/:id (anon)", `${base}/api/v1/statuses/${id}`),
      await measure("GET /api/v1/statuses/:id (signed in)", `${base}/api/v1/statuses/${id}`, { headers: h(readerToken) }),
      await measure("GET /api/v1/timelines/home?limit=20", `${base}/api/v1/timelines/home?limit=20`, { headers: h(readerToken) }),
      await measure("POST /api/v1/statuses", `${base}/api/v1/statuses`, { method: "POST", headers: h(authorToken), body: JSON.stringify({ status: "counted" }) }),
    ];
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
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
    const { app } = services.applications.register({ name: "q", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow push" });
    const authorToken = services.tokens.issue(app.id, author.id, parseScopes("read write follow push")).accessToken;
    const readerToken = services.tokens.issue(app.id, reader.id, parseScopes("read write follow push")).accessToken;
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
      const pushed = () => (server.database.sqlite.query("SELECT count(*) AS n FROM push_deliveries").get() as { n: number }).n === 0;
      const carded = () => (server.database.sqlite.query("SELECT count(*) AS n FROM statuses WHERE card IS NULL").get() as { n: number }).n === 0;
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
