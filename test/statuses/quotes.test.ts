import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Quoting over the client API (Mastodon 4.5's "Implementing quote posts"): POST with
 * quoted_status_id and quote_approval_policy, the Status's `quote` (a Quote holding the quoted
 * status, whose own quote is a ShallowQuote), `quote_approval` and `quotes_count`, and every
 * refusal with Mastodon's status, error and nothing written.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let anon: Client;

const QUOTED_NOT_FOUND = { error: "The post you are trying to quote does not appear to exist." };

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
  anon = new Client(server.base);
});
afterAll(() => server.close());

/** What bob's timeline of his own posts holds: that a refused post left nothing. */
const postsOf = async (user: TestUser) => (await anon.get(`/api/v1/accounts/${user.id}/statuses`, { query: { limit: "40" } })).body.length as number;

describe("quoting a status", () => {
  test("a quote post shows the quoted status in full, and the quoted status its quote count", async () => {
    const quoted = await postStatus(alice, { status: "Worth quoting" });
    const res = await bob.client.post("/api/v1/statuses", { json: { status: "Agreed", quoted_status_id: quoted.id } });
    expect(res.status).toBe(200);
    expect(res.body.quote.state).toBe("accepted");
    expect(Object.keys(res.body.quote)).toEqual(["state", "quoted_status"]);
    expect(res.body.quote.quoted_status).toMatchObject({ id: quoted.id, content: "<p>Worth quoting</p>", quote: null, quotes_count: 1 });
    expect(res.body.quote.quoted_status.account.id).toBe(alice.id);
    // Mastodon's fallback for clients that do not show quotes, which those that do hide.
    expect(res.body.content).toBe(`<p class="quote-inline">RE: <a href="${server.base}/@alice/${quoted.id}">${server.base}/@alice/${quoted.id}</a></p><p>Agreed</p>`);
    const again = await anon.get(`/api/v1/statuses/${quoted.id}`);
    expect(again.body.quotes_count).toBe(1);
    // A text that links the quoted post already needs no fallback.
    const linked = await postStatus(carol, { status: `See ${server.base}/@alice/${quoted.id}`, quoted_status_id: quoted.id });
    expect(linked.content).not.toContain("quote-inline");
  });

  test("one level down the quote is shallow: its state and the quoted id", async () => {
    const first = await postStatus(alice, { status: "first" });
    const second = await postStatus(bob, { status: "second", quoted_status_id: first.id });
    const third = await postStatus(carol, { status: "third", quoted_status_id: second.id });
    expect(third.quote.quoted_status.id).toBe(second.id);
    expect(third.quote.quoted_status.quote).toEqual({ state: "accepted", quoted_status_id: first.id });
    // Read by anyone, anonymously too (the render cache must not keep a quote it cannot know).
    const read = await anon.get(`/api/v1/statuses/${third.id}`);
    expect(read.body.quote.quoted_status.quote).toEqual({ state: "accepted", quoted_status_id: first.id });
    const again = await anon.get(`/api/v1/statuses/${third.id}`);
    expect(again.text).toBe(read.text);
  });

  test("quote_approval: who may quote, and how it applies to the reader", async () => {
    const open = await postStatus(alice, { status: "open", quote_approval_policy: "public" });
    const followers = await postStatus(alice, { status: "followers", quote_approval_policy: "followers" });
    const nobody = await postStatus(alice, { status: "nobody", quote_approval_policy: "nobody" });
    const secret = await postStatus(alice, { status: "secret", visibility: "private", quote_approval_policy: "public" });
    expect(open.quote_approval).toEqual({ automatic: ["public"], manual: [], current_user: "automatic" });
    expect(followers.quote_approval).toEqual({ automatic: ["followers"], manual: [], current_user: "automatic" });
    expect(nobody.quote_approval).toEqual({ automatic: [], manual: [], current_user: "automatic" });
    // A private post's policy is nobody's, whatever was asked.
    expect(secret.quote_approval).toEqual({ automatic: [], manual: [], current_user: "automatic" });
    const asBob = async (id: string) => (await bob.client.get(`/api/v1/statuses/${id}`)).body.quote_approval.current_user;
    expect([await asBob(open.id), await asBob(followers.id), await asBob(nobody.id)]).toEqual(["automatic", "denied", "denied"]);
    await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
    expect(await asBob(followers.id)).toBe("automatic");
    // Nobody signed in may quote anything; a timeline says the same as the status itself.
    expect((await anon.get(`/api/v1/statuses/${open.id}`)).body.quote_approval.current_user).toBe("denied");
    const timeline = (await bob.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body as { id: string; quote_approval: unknown }[];
    expect(timeline.find((s) => s.id === followers.id)?.quote_approval).toEqual({ automatic: ["followers"], manual: [], current_user: "automatic" });
    await bob.client.post(`/api/v1/accounts/${alice.id}/unfollow`);
  });

  test("the user's default policy applies when none is given", async () => {
    await carol.client.patch("/api/v1/accounts/update_credentials", { json: { source: { quote_policy: "nobody" } } });
    const posted = await postStatus(carol, { status: "mine alone" });
    expect(posted.quote_approval.automatic).toEqual([]);
    expect((await bob.client.post("/api/v1/statuses", { json: { status: "no", quoted_status_id: posted.id } })).body).toEqual(QUOTED_NOT_FOUND);
    await carol.client.patch("/api/v1/accounts/update_credentials", { json: { source: { quote_policy: "public" } } });
  });

  test("a private post is quoted by its author alone, and only privately", async () => {
    const secret = await postStatus(alice, { status: "between us", visibility: "private" });
    const own = await postStatus(alice, { status: "me again", visibility: "public", quoted_status_id: secret.id });
    expect(own.visibility).toBe("private");
    expect(own.quote.state).toBe("accepted");
    // A follower who sees it may still not quote it.
    await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
    const before = await postsOf(bob);
    const res = await bob.client.post("/api/v1/statuses", { json: { status: "me too", visibility: "private", quoted_status_id: secret.id } });
    expect([res.status, res.body]).toEqual([404, QUOTED_NOT_FOUND]);
    expect(await postsOf(bob)).toBe(before);
    await bob.client.post(`/api/v1/accounts/${alice.id}/unfollow`);
  });

  test("what a reader may not see of the quoted status is not shown: unauthorized, blocked, muted", async () => {
    const secret = await postStatus(alice, { status: "followers only", visibility: "private" });
    const quoting = await postStatus(alice, { status: "quoting myself", visibility: "private", quoted_status_id: secret.id });
    await carol.client.post(`/api/v1/accounts/${alice.id}/follow`);
    // A mention would let bob see the quoting post; the quoted one stays out of his sight.
    const mentioning = await postStatus(alice, { status: "@bob look", visibility: "direct", quoted_status_id: secret.id });
    const seen = await bob.client.get(`/api/v1/statuses/${mentioning.id}`);
    expect(seen.body.quote).toEqual({ state: "unauthorized", quoted_status: null });
    expect((await carol.client.get(`/api/v1/statuses/${quoting.id}`)).body.quote.state).toBe("accepted");

    const open = await postStatus(alice, { status: "open" });
    const quoted = await postStatus(carol, { status: "quoting alice", quoted_status_id: open.id });
    await bob.client.post(`/api/v1/accounts/${alice.id}/mute`);
    const muted = (await bob.client.get(`/api/v1/statuses/${quoted.id}`)).body.quote;
    expect(muted.state).toBe("muted_account");
    expect(muted.quoted_status.id).toBe(open.id);
    await bob.client.post(`/api/v1/accounts/${alice.id}/unmute`);
    await bob.client.post(`/api/v1/accounts/${alice.id}/block`);
    expect((await bob.client.get(`/api/v1/statuses/${quoted.id}`)).body.quote.state).toBe("blocked_account");
    await bob.client.post(`/api/v1/accounts/${alice.id}/unblock`);
    await carol.client.post(`/api/v1/accounts/${alice.id}/unfollow`);
  });

  test("a boost of a quote post, in a home timeline, carries the quote; the page renders as the status does", async () => {
    const dave = await createUser(server, "dave");
    await dave.client.post(`/api/v1/accounts/${carol.id}/follow`);
    const quoted = await postStatus(alice, { status: "boosted along" });
    const quoting = await postStatus(bob, { status: "quote to boost", quoted_status_id: quoted.id });
    const boost = (await carol.client.post(`/api/v1/statuses/${quoting.id}/reblog`)).body;
    expect(boost.quote).toBeNull();
    expect(boost.reblog.quote.quoted_status.id).toBe(quoted.id);
    // A boost tells its original's policy.
    expect(boost.quote_approval).toEqual(boost.reblog.quote_approval);
    const home = (await dave.client.get("/api/v1/timelines/home")).body;
    const seen = home.find((s: { id: string }) => s.id === boost.id);
    expect(seen.reblog.quote).toEqual((await dave.client.get(`/api/v1/statuses/${quoting.id}`)).body.quote);
    expect(seen.reblog.quote.quoted_status.content).toBe("<p>boosted along</p>");
  });

  test("a deleted quoted status is shown as such", async () => {
    const quoted = await postStatus(alice, { status: "soon gone" });
    const quoting = await postStatus(bob, { status: "quoting", quoted_status_id: quoted.id });
    expect((await alice.client.delete(`/api/v1/statuses/${quoted.id}`)).status).toBe(200);
    expect((await anon.get(`/api/v1/statuses/${quoting.id}`)).body.quote).toEqual({ state: "deleted", quoted_status: null });
  });
});

describe("refused quotes", () => {
  test("unknown, invisible, direct, a boost, a policy that refuses, a block either way: 404, nothing posted", async () => {
    const open = await postStatus(alice, { status: "open" });
    const nobody = await postStatus(alice, { status: "nobody", quote_approval_policy: "nobody" });
    const followers = await postStatus(alice, { status: "followers", quote_approval_policy: "followers" });
    const direct = await postStatus(alice, { status: "@bob hi", visibility: "direct" });
    const boost = (await carol.client.post(`/api/v1/statuses/${open.id}/reblog`)).body;
    const before = await postsOf(bob);
    for (const id of ["12345", "not-an-id", nobody.id, followers.id, direct.id, boost.id]) {
      const res = await bob.client.post("/api/v1/statuses", { json: { status: "no", quoted_status_id: id } });
      expect([id, res.status, res.body]).toEqual([id, 404, QUOTED_NOT_FOUND]);
    }
    await alice.client.post(`/api/v1/accounts/${bob.id}/block`);
    const blockedBy = await bob.client.post("/api/v1/statuses", { json: { status: "no", quoted_status_id: open.id } });
    expect([blockedBy.status, blockedBy.body]).toEqual([404, QUOTED_NOT_FOUND]);
    await alice.client.post(`/api/v1/accounts/${bob.id}/unblock`);
    await bob.client.post(`/api/v1/accounts/${alice.id}/block`);
    const blocking = await bob.client.post("/api/v1/statuses", { json: { status: "no", quoted_status_id: open.id } });
    expect([blocking.status, blocking.body]).toEqual([404, QUOTED_NOT_FOUND]);
    await bob.client.post(`/api/v1/accounts/${alice.id}/unblock`);
    expect(await postsOf(bob)).toBe(before);
    expect((await anon.get(`/api/v1/statuses/${open.id}`)).body.quotes_count).toBe(0);
  });

  test("an unknown quote_approval_policy: 422, nothing posted", async () => {
    const before = await postsOf(bob);
    const res = await bob.client.post("/api/v1/statuses", { json: { status: "hm", quote_approval_policy: "everyone" } });
    expect([res.status, res.body]).toEqual([422, { error: "Record invalid" }]);
    expect(await postsOf(bob)).toBe(before);
  });

  test("a private mention quotes only someone it mentions: 422, nothing posted", async () => {
    const open = await postStatus(alice, { status: "open" });
    const before = (await bob.client.get("/api/v1/conversations")).body.length;
    const res = await bob.client.post("/api/v1/statuses", { json: { status: "@carol look", visibility: "direct", quoted_status_id: open.id } });
    expect([res.status, res.body]).toEqual([422, { error: "Validation failed: Cannot quote a non-mentioned user in a Private Mention post." }]);
    expect((await bob.client.get("/api/v1/conversations")).body.length).toBe(before);
    const ok = await bob.client.post("/api/v1/statuses", { json: { status: "@alice look", visibility: "direct", quoted_status_id: open.id } });
    expect(ok.body.quote.state).toBe("accepted");
  });

  test("an unknown source[quote_policy]: 422, the default unchanged", async () => {
    const res = await carol.client.patch("/api/v1/accounts/update_credentials", { json: { source: { quote_policy: "friends" } } });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("Validation failed: Quote policy is not included in the list");
    expect((await carol.client.get("/api/v1/preferences")).body["posting:default:quote_policy"]).toBe("public");
  });
});
