import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { AP, eventually } from "../support/federation.ts";
import { endlessBody, tricklingBody } from "../support/hostile-bodies.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// What a hostile server, a hostile name or a hostile DNS answer can make this server fetch,
// written as the attacks: a key document that never ends or trickles, a name that resolves
// into the server's own network, a domain the server refuses. Names are resolved by a resolver
// the test injects (hostile.test and the others map to loopback addresses).

/** A hostile server: endless and trickling answers, and a count of what reached it. */
let hostile: ReturnType<typeof Bun.serve>;
let endlessBytes = 0;
let open = 0;
/** The most requests to hostile.test the server under attack had open at once (its own count, read as each arrives). */
let mostOpen = 0;
let openAtServer: () => number = () => 0;
const requests: string[] = [];

/** A listener that counts every connection made to it, TLS or not (nothing should connect). */
function connectionCounter(hostname: string, port: number) {
  const seen = { connections: 0 };
  const listener = Bun.listen<undefined>({ hostname, port, socket: { open: () => void seen.connections++, data: (s) => void s.end() } });
  return { seen, port: listener.port, stop: () => listener.stop(true) };
}

beforeAll(() => {
  hostile = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    fetch(request) {
      const path = new URL(request.url).pathname;
      requests.push(path);
      if (path.startsWith("/endless")) return new Response(endlessBody((n) => (endlessBytes += n)), { headers: { "content-type": AP } });
      if (path.startsWith("/trickle")) {
        open++;
        mostOpen = Math.max(mostOpen, openAtServer());
        // A byte every 500 ms, forever (until the client hangs up).
        return new Response(tricklingBody(500, () => void open--), { headers: { "content-type": AP } });
      }
      return new Response("<html><head><title>internal admin page</title></head></html>", { headers: { "content-type": "text/html" } });
    },
  });
});
afterAll(() => hostile.stop(true));

/** A POST to the shared inbox signed (badly: random bytes) with a keyId of the attacker's choosing. */
async function forgedPost(server: TestServer, keyId: string): Promise<number> {
  const body = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${keyId}#act-${crypto.randomUUID()}`, type: "Create", actor: keyId, object: { type: "Note", id: `${keyId}#note`, content: "x" } });
  const digest = `SHA-256=${Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body))).toString("base64")}`;
  const signature = `keyId="${keyId}",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="${Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString("base64")}"`;
  const res = await fetch(`${server.base}/inbox`, { method: "POST", headers: { "content-type": AP, date: new Date().toUTCString(), digest, signature }, body });
  await res.arrayBuffer();
  return res.status;
}

describe("key documents that never end or never finish", () => {
  let a: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true", FETCH_TIMEOUT_SECONDS: "2", FETCH_MAX_PER_HOST: "2" }, { resolve: async () => ["127.0.0.1"] });
  });
  afterAll(() => a.close());

  test("twenty forged POSTs whose keyId serves an endless document: each is refused after 1 MB of it, memory stays bounded, the server keeps answering", async () => {
    endlessBytes = 0;
    const rssBefore = process.memoryUsage().rss;
    const keyUrl = (i: number) => `http://hostile.test:${hostile.port}/endless/${i}#main-key`;
    const answers = Promise.all(Array.from({ length: 20 }, (_, i) => forgedPost(a, keyUrl(i))));
    // Meanwhile the API answers as usual.
    expect((await fetch(`${a.base}/api/v1/instance`)).status).toBe(200);
    expect(await answers).toEqual(Array(20).fill(401));
    // What the hostile server managed to push: the caps and the sockets' buffers, not 20 x 200 MB.
    expect(endlessBytes).toBeLessThan(20 * 8 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(300 * 1024 * 1024);
    // Nothing was stored from the forged activities.
    expect(await a.database.port.get("SELECT count(*) AS n FROM accounts WHERE uri LIKE '%hostile.test%'")).toEqual({ n: 0 });
  });

  test("POSTs whose keyId trickles a byte at a time are cut off at the deadline, two at a time per host", async () => {
    mostOpen = 0;
    openAtServer = () => a.ctx.services.outgoing.inFlight("hostile.test");
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => forgedPost(a, `http://hostile.test:${hostile.port}/trickle/${i}#main-key`)));
    expect(answers).toEqual(Array(6).fill(401));
    expect(mostOpen).toBe(2);
    expect(a.ctx.services.outgoing.inFlight()).toBe(0);
    // Every connection the hostile server held has been closed by this side.
    await eventually(() => open === 0, "the trickling connections closed");
  });
});

describe("names that resolve into the server's own network", () => {
  let b: TestServer;
  let bob: TestUser;
  beforeAll(async () => {
    // Private addresses refused, as on any real server; the resolver plays a hostile DNS.
    b = await startTestServer({ HOST: "127.0.0.3" }, { resolve: async (name) => (name.endsWith(".example.com") ? ["127.0.0.1"] : Promise.reject(new Error(`ENOTFOUND ${name}`))) });
    bob = await createUser(b, "bob");
  });
  afterAll(() => b.close());

  test("search with resolve=true for a URL on such a name fetches nothing and finds nothing", async () => {
    const before = requests.length;
    const url = `http://ssrf.example.com:${hostile.port}/users/admin`;
    const found = await bob.client.get("/api/v2/search", { query: { q: url, resolve: "true" } });
    expect(found.status).toBe(200);
    expect([found.body.accounts, found.body.statuses]).toEqual([[], []]);
    expect(requests.length).toBe(before);
  });

  test("a posted link to such a name gets no preview card: the internal page's title is never read", async () => {
    const before = requests.length;
    const link = `http://intranet.example.com:${hostile.port}/admin`;
    const posted = await bob.client.post("/api/v1/statuses", { json: { status: `look ${link}` } });
    expect(posted.status).toBe(200);
    await eventually(async () => (await b.database.port.get<{ n: number }>("SELECT count(*) AS n FROM preview_cards WHERE url = ? AND failed_at IS NOT NULL", [link]))!.n === 1, "tried and refused");
    expect((await bob.client.get(`/api/v1/statuses/${posted.body.id}`)).body.card).toBeNull();
    expect(requests.length).toBe(before);
  });
});

describe("a domain the server does not federate with is never contacted", () => {
  test("search for a handle or a URL on a blocked domain sends nothing there, not even WebFinger", async () => {
    // blocked.test resolves to a loopback address where every connection is counted (443 for WebFinger, which Fedify asks over https).
    const https = connectionCounter("127.0.0.77", 443);
    const http = connectionCounter("127.0.0.77", 0);
    const c = await startTestServer({ HOST: "127.0.0.4", ALLOW_PRIVATE_ADDRESSES: "true" }, { resolve: async () => ["127.0.0.77"] });
    try {
      await c.ctx.services.federationDomains.block("blocked.test");
      const carl = await createUser(c, "carl");
      for (const q of ["@someone@blocked.test", "someone@blocked.test", `http://blocked.test:${http.port}/users/someone`, `https://blocked.test/@someone`, "@someone@sub.blocked.test", "@someone@BLOCKED.test."]) {
        const found = await carl.client.get("/api/v2/search", { query: { q, resolve: "true" } });
        expect([q, found.status, found.body.accounts]).toEqual([q, 200, []]);
      }
      expect([https.seen.connections, http.seen.connections]).toEqual([0, 0]);
    } finally {
      https.stop();
      http.stop();
      await c.close();
    }
  });
});
