import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { Accept, Person } from "@fedify/fedify/vocab";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, startFederatedPair } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const count = async (server: TestServer, sql: string, ...params: (string | number)[]) => (await server.database.port.get<{ n: number }>(sql, params))!.n;
const relationship = async (user: TestUser, id: number) => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(id) } })).body[0];

/** A POST to an inbox signed with a local account's own key (as its server would sign it). */
async function signedBy(server: TestServer, user: TestUser, url: string, init: { method?: string; body?: string } = {}) {
  const rsa = (await server.federation!.keyPairs(user.account.id)).find((k) => k.algorithm === "RSASSA-PKCS1-v1_5")!;
  const headers: Record<string, string> = init.body ? { "content-type": AP, accept: AP } : { accept: AP };
  const request = new Request(url, { method: init.method ?? "GET", headers, body: init.body });
  return fetch(await signRequest(request, rsa.privateKey, new URL(`${server.base}/users/${user.account.username}#main-key`)));
}

describe("an admin blocks a domain (rookery domains block: Mastodon's suspend)", () => {
  test("its accounts go with their follows and statuses, nothing is taken from it or told to it, and unblocking lets it back", async () => {
    const hostB = new URL(b.base).hostname;
    const remoteBob = (await a.federation!.resolveActor(`${b.base}/users/bob`))!;
    const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    await alice.client.post(`/api/v1/accounts/${remoteBob.id}/follow`);
    await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    await eventually(async () => (await relationship(alice, remoteBob.id))?.following === true, "alice follows bob");
    await eventually(async () => (await relationship(bob, remoteAlice.id))?.following === true, "bob follows alice");
    const fromB = await postStatus(bob, { status: "hello from B", visibility: "public" });
    await eventually(async () => (await alice.client.get("/api/v1/timelines/home")).body.some((s: any) => s.uri === fromB.uri), "bob's post in alice's home");

    const blocked = await a.ctx.services.federationDomains.block(hostB);
    expect(blocked).toEqual({ domain: hostB, created: true, removedAccounts: 1 });
    // On A: bob is gone with his status and both follows; alice's counters say so.
    expect(await count(a, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL")).toBe(0);
    expect(await count(a, "SELECT count(*) AS n FROM statuses WHERE uri IS NOT NULL")).toBe(0);
    expect(await count(a, "SELECT count(*) AS n FROM follows")).toBe(0);
    expect((await alice.client.get("/api/v1/timelines/home")).body).toEqual([]);
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body).toMatchObject({ followers_count: 0, following_count: 0 });
    expect((await alice.client.get(`/api/v1/accounts/${remoteBob.id}`)).status).toBe(404);
    // Blocking again changes nothing.
    expect(await a.ctx.services.federationDomains.block(hostB)).toEqual({ domain: hostB, created: false, removedAccounts: 0 });

    // Its accounts are not fetched again: by URL, by handle, by search.
    expect(await a.federation!.resolveActor(`${b.base}/users/bob`)).toBeNull();
    const lookup = await alice.client.get("/api/v1/accounts/lookup", { query: { acct: `bob@${new URL(b.base).host}` } });
    expect(lookup.status).toBe(404);
    expect(lookup.body).toEqual({ error: "Record not found" });
    const search = await alice.client.get("/api/v2/search", { query: { q: `${b.base}/users/bob`, resolve: "true" } });
    expect(search.body).toMatchObject({ accounts: [], statuses: [] });
    const statusSearch = await alice.client.get("/api/v2/search", { query: { q: fromB.uri, resolve: "true" } });
    expect(statusSearch.body).toMatchObject({ accounts: [], statuses: [] });
    expect(await count(a, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL")).toBe(0);

    // Its signed requests are refused before their key is fetched (Mastodon's 403 and words),
    // for a POST to an inbox as for a GET; nothing is stored.
    const activity = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${b.base}/users/bob#follows/again`, type: "Follow", actor: `${b.base}/users/bob`, object: `${a.base}/users/alice` });
    for (const inbox of [`${a.base}/inbox`, `${a.base}/users/alice/inbox`]) {
      const res = await signedBy(b, bob, inbox, { method: "POST", body: activity });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: `Public key not found for key ${b.base}/users/bob#main-key` });
    }
    const mine = await postStatus(alice, { status: "not for B", visibility: "public" });
    const got = await signedBy(b, bob, `${a.base}/users/alice/statuses/${mine.id}`);
    expect(got.status).toBe(403);
    expect(await got.json()).toEqual({ error: `Public key not found for key ${b.base}/users/bob#main-key` });
    // B still delivers what it believes alice follows: refused too.
    await postStatus(bob, { status: "are you there?", visibility: "public" });
    await b.federation!.idle();
    await a.federation!.idle();
    expect(await count(a, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL")).toBe(0);
    expect(await count(a, "SELECT count(*) AS n FROM statuses WHERE uri IS NOT NULL")).toBe(0);
    expect(await count(a, "SELECT count(*) AS n FROM follows")).toBe(0);

    // Nothing was told to B: no Undo of alice's follow, no Reject of bob's (Mastodon sends those
    // on a suspension; a blocked domain here gets nothing at all).
    expect(await relationship(bob, remoteAlice.id)).toMatchObject({ following: true });
    expect((await bob.client.get(`/api/v1/accounts/${bob.id}`)).body).toMatchObject({ followers_count: 1, following_count: 1 });

    // Unblocked: B is heard again.
    expect(await a.ctx.services.federationDomains.unblock(hostB)).toEqual({ domain: hostB, removed: true });
    expect(await a.ctx.services.federationDomains.unblock(hostB)).toEqual({ domain: hostB, removed: false });
    const back = await signedBy(b, bob, `${a.base}/users/alice/inbox`, { method: "POST", body: activity });
    expect(back.status).toBe(202);
    await eventually(async () => (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count === 1, "bob follows alice again");
  });

  test("a rule covers its domain and the subdomains, not lookalikes; this server itself is never refused", async () => {
    const domains = a.ctx.services.federationDomains;
    await domains.block("Example.com");
    expect((await domains.list()).blocked.map((r) => r.domain)).toEqual(["example.com"]);
    for (const url of ["https://example.com/users/a", "https://social.example.com/inbox", "https://a.b.example.com", "example.com:8443"]) expect(domains.refuses(url)).toBe(true);
    for (const url of ["https://notexample.com/inbox", "https://example.com.evil/inbox", "https://example.org", `${b.base}/inbox`, `${a.base}/inbox`]) expect(domains.refuses(url)).toBe(false);
    await domains.unblock("example.com");
    expect(domains.refuses("https://social.example.com/inbox")).toBe(false);
  });

  test("every spelling of a blocked host is blocked: upper case, a trailing dot, a port, an IDN in Unicode", async () => {
    const domains = a.ctx.services.federationDomains;
    const stored = async () => [await count(a, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL"), await count(a, "SELECT count(*) AS n FROM follows")];
    const before = await stored();
    // An account stored from an actor whose IRI spells its host its own way: stored as rules read it.
    const eve = await a.federation!.storeActor(
      new Person({ id: new URL("https://BLOCKED.example.:8443/users/eve"), preferredUsername: "eve", inbox: new URL("https://BLOCKED.example.:8443/users/eve/inbox") }),
    );
    expect(eve?.domain).toBe("blocked.example:8443");
    expect((await alice.client.get(`/api/v1/accounts/${eve!.id}`)).body.acct).toBe("eve@blocked.example:8443");

    // The rule, typed with a trailing dot and in capitals, is the domain (Addressable's normalized_host).
    expect(await domains.block("Blocked.Example.")).toEqual({ domain: "blocked.example", created: true, removedAccounts: 1 });
    expect((await domains.list()).blocked.map((r) => r.domain)).toEqual(["blocked.example"]);
    expect(await count(a, "SELECT count(*) AS n FROM accounts WHERE uri = 'https://blocked.example.:8443/users/eve'")).toBe(0);
    for (const spelling of ["https://BLOCKED.example./inbox", "https://blocked.example..:8443/x", "https://social.Blocked.Example./x", "BLOCKED.example.", "blocked.example.:8443", "Blocked.Example:443"]) {
      expect([spelling, domains.refuses(spelling)]).toEqual([spelling, true]);
    }
    // A request signed by a key whose id spells the host otherwise is refused before anything is
    // fetched (without the rule matching, the key would be asked of blocked.example.), and nothing is stored.
    const key = (await generateCryptoKeyPair("RSASSA-PKCS1-v1_5")).privateKey;
    const follow = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: "https://blocked.example/follows/1", type: "Follow", actor: "https://blocked.example/users/mal", object: `${a.base}/users/alice` });
    for (const keyId of ["https://BLOCKED.example./users/mal#main-key", "https://blocked.example.:8443/users/mal#main-key", "http://Social.BLOCKED.example/users/mal#main-key", "acct:mal@Blocked.Example."]) {
      const request = new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP }, body: follow });
      const res = await fetch(await signRequest(request, key, new URL(keyId)));
      expect([keyId, res.status, await res.json()]).toEqual([keyId, 403, { error: `Public key not found for key ${new URL(keyId).href}` }]);
    }
    expect(await stored()).toEqual(before);
    expect(await domains.unblock("BLOCKED.EXAMPLE.")).toEqual({ domain: "blocked.example", removed: true });

    // An IDN: the rule typed in Unicode, the host spelled in Unicode or in punycode.
    expect(await domains.block("Bücher.Example")).toMatchObject({ domain: "xn--bcher-kva.example", created: true });
    for (const spelling of ["https://BÜCHER.example./x", "https://xn--bcher-kva.example:8443/x", "bücher.example.", "sub.BÜCHER.example"]) expect([spelling, domains.refuses(spelling)]).toEqual([spelling, true]);
    expect(await domains.unblock("xn--bcher-kva.example.")).toEqual({ domain: "xn--bcher-kva.example", removed: true });
    expect((await domains.list()).blocked).toEqual([]);
  });

  test("a blank or invalid domain is refused with Mastodon's validation error, and no rule is made", async () => {
    const domains = a.ctx.services.federationDomains;
    const before = await domains.list();
    expect(() => domains.block("  ")).toThrow("Validation failed: Domain can't be blank");
    expect(() => domains.block("https://example.com/")).toThrow("Validation failed: Domain is invalid");
    expect(() => domains.allow("exa mple.com")).toThrow("Validation failed: Domain is invalid");
    expect(await domains.list()).toEqual(before);
  });
});

describe("WHITELIST_MODE=true: only allow-listed domains federate (Mastodon's LIMITED_FEDERATION_MODE)", () => {
  test("other domains are refused at the inbox, not fetched and not delivered to; allowing one lets it in", async () => {
    const w = await startTestServer({ HOST: "127.0.0.4", ALLOW_PRIVATE_ADDRESSES: "true", WHITELIST_MODE: "true" });
    const receiver = await startReceiver("127.0.0.8");
    try {
      const wendy = await createUser(w, "wendy");
      const domains = w.ctx.services.federationDomains;
      // Nothing allowed yet: B's fetches are signed by its instance actor, and refused (limited
      // federation mode implies authorized fetch in Mastodon too).
      expect(await b.federation!.resolveActor(`${w.base}/users/wendy`)).toBeNull();
      // Nothing allowed yet: B's follow is refused, B's actor is not fetched.
      const follow = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${b.base}/users/bob#follows/w1`, type: "Follow", actor: `${b.base}/users/bob`, object: `${w.base}/users/wendy` });
      const refused = await signedBy(b, bob, `${w.base}/users/wendy/inbox`, { method: "POST", body: follow });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: `Public key not found for key ${b.base}/users/bob#main-key` });
      expect(await w.federation!.resolveActor(`${b.base}/users/bob`)).toBeNull();
      expect(await count(w, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL")).toBe(0);

      // An allowed domain is matched exactly, however it was typed and however a host spells it.
      expect(await domains.allow("Friendly.Example.")).toEqual({ domain: "friendly.example", created: true });
      for (const spelling of ["https://FRIENDLY.example./inbox", "friendly.example.:8443", "https://Friendly.Example:443/x"]) expect([spelling, domains.refuses(spelling)]).toEqual([spelling, false]);
      for (const other of ["https://social.friendly.example/inbox", "https://friendly.example.evil/x"]) expect([other, domains.refuses(other)]).toEqual([other, true]);
      expect(await domains.disallow("FRIENDLY.EXAMPLE.")).toEqual({ domain: "friendly.example", removed: true });
      expect(domains.refuses("https://friendly.example/inbox")).toBe(true);

      // B and the receiver's server allowed: both follow wendy.
      await domains.allow(new URL(b.base).hostname);
      await domains.allow(new URL(receiver.base).hostname);
      const remoteWendy = (await b.federation!.resolveActor(`${w.base}/users/wendy`))!;
      await bob.client.post(`/api/v1/accounts/${remoteWendy.id}/follow`);
      await receiver.follow(`${w.base}/users/wendy`, `${w.base}/users/wendy/inbox`);
      await eventually(async () => (await wendy.client.get(`/api/v1/accounts/${wendy.id}`)).body.followers_count === 2, "wendy has two followers");
      await eventually(() => receiver.received.some((x) => x instanceof Accept && x.actorId?.href === `${w.base}/users/wendy`), "the receiver has wendy's Accept");

      // The receiver's server taken off the list: its deliveries are refused, nothing goes to it.
      await domains.disallow(new URL(receiver.base).hostname);
      const postsBefore = receiver.posts.length;
      const post = await postStatus(wendy, { status: "allowed readers only", visibility: "public" });
      await eventually(async () => (await bob.client.get("/api/v1/timelines/home")).body.some((s: any) => s.uri === post.uri), "wendy's post reached B");
      await w.federation!.idle();
      expect(receiver.posts.slice(postsBefore)).toEqual([]);
      const sent = await receiver.follow(`${w.base}/users/wendy`, `${w.base}/users/wendy/inbox`).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(sent).toContain("403");
      expect(await count(w, "SELECT count(*) AS n FROM follows")).toBe(2);
    } finally {
      receiver.stop();
      await w.close();
    }
  });
});
