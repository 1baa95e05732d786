import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, startFederatedPair } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

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

describe("a remote account follows a local one", () => {
  test("signed Follow -> follower stored on A, Accept back to B, relationship following on both sides; Undo removes it", async () => {
    const remoteAlice = await b.federation!.resolveActor(`${a.base}/users/alice`);
    expect(remoteAlice).toMatchObject({ username: "alice", domain: new URL(a.base).host, uri: `${a.base}/users/alice`, inboxUrl: `${a.base}/users/alice/inbox` });
    const shown = await bob.client.get(`/api/v1/accounts/${remoteAlice!.id}`);
    expect(shown.body).toMatchObject({ acct: `alice@${new URL(a.base).host}`, username: "alice", url: `${a.base}/@alice`, uri: `${a.base}/users/alice` });

    const followed = await bob.client.post(`/api/v1/accounts/${remoteAlice!.id}/follow`);
    expect(followed.status).toBe(200);
    expect(followed.body).toMatchObject({ following: false, requested: true });

    // A stores bob as a remote account following alice, and B turns the request into a follow on Accept.
    await eventually(async () => (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count === 1, "alice has a follower");
    const followers = await alice.client.get(`/api/v1/accounts/${alice.id}/followers`);
    expect(followers.body.map((f: any) => f.acct)).toEqual([`bob@${new URL(b.base).host}`]);
    expect(followers.body[0].uri).toBe(`${b.base}/users/bob`);
    await eventually(async () => (await bob.client.get(`/api/v1/accounts/relationships`, { query: { "id[]": String(remoteAlice!.id) } })).body[0]?.following === true, "bob follows alice");
    expect((await bob.client.get(`/api/v1/accounts/${bob.id}`)).body.following_count).toBe(1);
    // alice gets a follow notification from the remote account.
    const notes = await alice.client.get("/api/v1/notifications");
    expect(notes.body.map((n: any) => [n.type, n.account.acct])).toEqual([["follow", `bob@${new URL(b.base).host}`]]);

    // The remote bob is not a local bob: a lookup of "bob" on A does not find him, and search
    // shows him by his full handle (stored remote accounts are searchable, as in Mastodon).
    expect((await alice.client.get("/api/v1/accounts/lookup", { query: { acct: "bob" } })).status).toBe(404);
    expect((await alice.client.get("/api/v1/accounts/search", { query: { q: "bob" } })).body.map((x: any) => x.acct)).toEqual([`bob@${new URL(b.base).host}`]);

    const unfollowed = await bob.client.post(`/api/v1/accounts/${remoteAlice!.id}/unfollow`);
    expect(unfollowed.body).toMatchObject({ following: false, requested: false });
    await eventually(async () => (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count === 0, "alice lost her follower");
    expect(await count(a, "SELECT count(*) AS n FROM follows")).toBe(0);
  });

  test("a locked account gets a follow request; authorizing it sends Accept", async () => {
    carol = await createUser(a, "carol", { locked: true });
    const dave = await createUser(b, "dave");
    const remoteCarol = await b.federation!.resolveActor(`${a.base}/users/carol`);
    expect(remoteCarol!.locked).toBe(true);
    expect((await dave.client.post(`/api/v1/accounts/${remoteCarol!.id}/follow`)).body.requested).toBe(true);
    const requests = await eventually(async () => {
      const res = await carol.client.get("/api/v1/follow_requests");
      return res.body.length === 1 ? res.body : null;
    }, "carol has a follow request");
    expect(requests[0].acct).toBe(`dave@${new URL(b.base).host}`);
    expect((await carol.client.get(`/api/v1/accounts/${carol.id}`)).body.followers_count).toBe(0);

    const authorized = await carol.client.post(`/api/v1/follow_requests/${requests[0].id}/authorize`);
    expect(authorized.status).toBe(200);
    await eventually(async () => (await dave.client.get(`/api/v1/accounts/relationships`, { query: { "id[]": String(remoteCarol!.id) } })).body[0]?.following === true, "dave follows carol");
  });

  test("rejecting a remote follow request sends Reject: the requester is left neither following nor requested", async () => {
    const erin = await createUser(b, "erin");
    const remoteCarol = (await b.federation!.resolveActor(`${a.base}/users/carol`))!;
    expect((await erin.client.post(`/api/v1/accounts/${remoteCarol.id}/follow`)).body.requested).toBe(true);
    const request = await eventually(async () => {
      const res = await carol.client.get("/api/v1/follow_requests");
      return (res.body as { id: string; acct: string }[]).find((r) => r.acct.startsWith("erin@")) ?? null;
    }, "carol has erin's request");
    const rejected = await carol.client.post(`/api/v1/follow_requests/${request.id}/reject`);
    expect(rejected.status).toBe(200);
    await eventually(async () => {
      const rel = (await erin.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteCarol.id) } })).body[0];
      return rel && rel.requested === false && rel.following === false;
    }, "erin's request withdrawn on B");
  });
});

describe("inbox security", () => {
  const follow = () => ({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${b.base}/users/bob#follows/forged`,
    type: "Follow",
    actor: `${b.base}/users/bob`,
    object: `${a.base}/users/alice`,
  });

  test("an unsigned Follow is 401 and nothing is stored", async () => {
    const before = await count(a, "SELECT count(*) AS n FROM accounts");
    const res = await fetch(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP }, body: JSON.stringify(follow()) });
    expect(res.status).toBe(401);
    expect(await count(a, "SELECT count(*) AS n FROM accounts")).toBe(before);
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE target_account_id = ?", alice.account.id)).toBe(0);
  });

  test("a Follow with a forged signature (right key id, wrong key) is 401 and nothing is stored", async () => {
    const before = await count(a, "SELECT count(*) AS n FROM accounts");
    const { generateCryptoKeyPair, signRequest } = await import("@fedify/fedify");
    const forger = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
    const request = new Request(`${a.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body: JSON.stringify(follow()) });
    const signed = await signRequest(request, forger.privateKey, new URL(`${b.base}/users/bob#main-key`));
    expect(signed.headers.get("signature")).toContain("main-key");
    const res = await fetch(signed);
    expect(res.status).toBe(401);
    expect(await count(a, "SELECT count(*) AS n FROM accounts")).toBe(before);
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE target_account_id = ?", alice.account.id)).toBe(0);
  });
  test("an inbox body past the cap is 413, with or without a Content-Length, and nothing is stored", async () => {
    const before = await count(a, "SELECT count(*) AS n FROM accounts");
    // Sent in chunks with no declared length: Fedify would read it whole, so the edge counts it.
    const chunk = new TextEncoder().encode("x".repeat(100_000));
    const chunked = new ReadableStream({
      start(c) {
        for (let i = 0; i < 50; i++) c.enqueue(chunk);
        c.close();
      },
    });
    for (const body of [chunked, "x".repeat(2_000_000)]) {
      const res = await fetch(`${a.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: "Request body is too large" });
    }
    expect(await count(a, "SELECT count(*) AS n FROM accounts")).toBe(before);
  });
});

describe("ALLOW_PRIVATE_ADDRESSES=false (the default)", () => {
  test("the server refuses to fetch actors on loopback addresses (SSRF), and stores nothing", async () => {
    const guarded = await startTestServer({ HOST: "127.0.0.4" });
    try {
      expect(guarded.ctx.config.allowPrivateAddresses).toBe(false);
      const resolved = await guarded.federation!.resolveActor(`${a.base}/users/alice`).catch(() => null);
      expect(resolved).toBeNull();
      expect(await count(guarded, "SELECT count(*) AS n FROM accounts WHERE domain IS NOT NULL")).toBe(0);
    } finally {
      await guarded.close();
    }
  });

  test("a remote follower whose actor names an inbox on a loopback address gets no delivery (SSRF by inbox URL)", async () => {
    const guarded = await startTestServer({ HOST: "127.0.0.4" });
    const receiver = await startReceiver("127.0.0.11");
    try {
      const kim = await createUser(guarded, "kim");
      // As if its actor document had been fetched from a public address: only its inbox is private.
      const { Endpoints, Person } = await import("@fedify/fedify/vocab");
      const follower = (await guarded.federation!.storeActor(
        new Person({ id: new URL("https://public.example/users/mal"), preferredUsername: "mal", inbox: new URL(`${receiver.base}/actors/carol/inbox`), endpoints: new Endpoints({ sharedInbox: new URL(`${receiver.base}/inbox`) }) }),
      ))!;
      await guarded.ctx.services.follows.follow(follower.id, kim.account.id, {});
      await postStatus(kim, { status: "not for loopback", visibility: "public" });
      await guarded.federation!.idle();
      expect(await guarded.federation!.queue.pending()).toBe(0);
      expect(receiver.posts).toEqual([]);
    } finally {
      receiver.stop();
      await guarded.close();
    }
  });
});
