import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import { AP, eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { makeCertificate, startTlsPeer, type TlsPeer } from "../support/federation-tls.ts";

let cert: ReturnType<typeof makeCertificate>;
let a: TlsPeer;
let b: TlsPeer;
let alice: { client: import("../support/http.ts").Client; id: string };

beforeAll(async () => {
  cert = makeCertificate();
  [a, b] = await Promise.all([startTlsPeer("127.0.0.2", cert), startTlsPeer("127.0.0.3", cert)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  cert?.cleanup();
});

// The test's own requests to the proxies open a connection each (`keepalive: false`): on a busy
// run a pooled one could be closed by the proxy as it was reused (ECONNRESET in CI).
describe("two servers behind TLS proxies, PUBLIC_URL https with an IP host", () => {
  test("WebFinger over https: acct:alice@127.0.0.2:port names the actor at the https PUBLIC_URL", async () => {
    alice = await a.user("alice");
    const ca = await Bun.file(cert.cert).text();
    const res = await fetch(`${a.base}/.well-known/webfinger?resource=acct:alice@${a.domain}`, { tls: { ca }, keepalive: false } as RequestInit);
    expect(res.status).toBe(200);
    const jrd = await res.json();
    expect(jrd.subject).toBe(`acct:alice@${a.domain}`);
    expect(jrd.links.find((l: any) => l.rel === "self").href).toBe(`${a.base}/users/alice`);
    const actor = await (await fetch(`${a.base}/users/alice`, { headers: { accept: "application/activity+json" }, tls: { ca }, keepalive: false } as RequestInit)).json();
    expect(actor.id).toBe(`${a.base}/users/alice`);
    expect(actor.inbox).toBe(`${a.base}/users/alice/inbox`);
  });

  test("bob looks alice up by handle (resolved through WebFinger), follows her, and both sides agree", async () => {
    const bob = await b.user("bob");
    const found = await bob.client.get("/api/v1/accounts/lookup", { query: { acct: `alice@${a.domain}` } });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ username: "alice", acct: `alice@${a.domain}`, uri: `${a.base}/users/alice`, url: `${a.base}/@alice` });

    expect((await bob.client.post(`/api/v1/accounts/${found.body.id}/follow`)).body.requested).toBe(true);
    await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": found.body.id } })).body[0]?.following === true, "bob follows alice", 20_000);
    const followers = await alice.client.get(`/api/v1/accounts/${alice.id}/followers`);
    expect(followers.body.map((f: any) => f.acct)).toEqual([`bob@${b.domain}`]);

    // Without a domain, or with this server's own, a lookup is local: no remote alice on B.
    expect((await bob.client.get("/api/v1/accounts/lookup", { query: { acct: "alice" } })).status).toBe(404);
    expect((await bob.client.get("/api/v1/accounts/lookup", { query: { acct: `nobody@${a.domain}` } })).status).toBe(404);
  });

  test("a mention of a handle A has never seen is resolved through WebFinger while posting, linked, and delivered", async () => {
    const carl = await b.user("carl");
    const post = await alice.client.post("/api/v1/statuses", { json: { status: `@carl@${b.domain} have you met Rookery?`, visibility: "direct" } });
    expect(post.status).toBe(200);
    expect(post.body.mentions).toEqual([{ id: expect.any(String), username: "carl", acct: `carl@${b.domain}`, url: `${b.base}/@carl` }]);
    expect(post.body.content).toContain(`href="${b.base}/@carl" class="u-url mention"`);
    // A private mention from someone carl does not follow: held back by the default policy, listed with include_filtered.
    const mention = await eventually(async () => (await carl.client.get("/api/v1/notifications?include_filtered=true")).body.find((n: any) => n.type === "mention"), "carl notified", 20_000);
    expect(mention).toMatchObject({ account: { acct: `alice@${a.domain}` }, status: { uri: post.body.uri, visibility: "direct" } });
  });

  test("search: a handle never seen is found with resolve=true only (WebFinger), by v2 search and the accounts search alike", async () => {
    await a.user("dave");
    await a.user("dora");
    const erin = await b.user("erin");
    expect((await erin.client.get("/api/v2/search", { query: { q: `@dave@${a.domain}` } })).body.accounts).toEqual([]);
    const found = await erin.client.get("/api/v2/search", { query: { q: `@dave@${a.domain}`, resolve: "true" } });
    expect(found.body.accounts.map((x: any) => [x.acct, x.uri])).toEqual([[`dave@${a.domain}`, `${a.base}/users/dave`]]);
    const v1 = await erin.client.get("/api/v1/accounts/search", { query: { q: `dora@${a.domain}`, resolve: "true" } });
    expect(v1.body.map((x: any) => x.acct)).toEqual([`dora@${a.domain}`]);
  });

  test("an activity signed with RFC 9421 for the https PUBLIC_URL verifies behind the proxy (the signed target is the public one)", async () => {
    const receiver = await startReceiver("127.0.0.10");
    try {
      const ca = await Bun.file(cert.cert).text();
      for (const spec of ["rfc9421", "draft-cavage-http-signatures-12"] as const) {
        const body = JSON.stringify({
          "@context": "https://www.w3.org/ns/activitystreams",
          id: `${receiver.base}/follows/${spec}`,
          type: "Follow",
          actor: receiver.actor,
          object: `${a.base}/users/alice`,
        });
        const request = new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
        const signed = await signRequest(request, receiver.privateKey, receiver.keyId, { spec });
        const res = await fetch(signed, { tls: { ca }, keepalive: false } as RequestInit);
        expect([spec, res.status]).toEqual([spec, 202]);
      }
      const followers = await eventually(async () => {
        const list = (await alice.client.get(`/api/v1/accounts/${alice.id}/followers`)).body;
        return list.length === 2 ? list : null;
      }, "carol follows alice");
      expect(followers.map((f: any) => f.acct).sort()).toEqual([`bob@${b.domain}`, `carol@${new URL(receiver.base).host}`]);
    } finally {
      receiver.stop();
    }
  });
});
