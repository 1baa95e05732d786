import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import generator from "megalodon";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * What the quoted author does with quotes (Mastodon 4.5): lists them, revokes one, changes who
 * may quote a post; the `quote` and `quoted_update` notifications; and real clients (masto.js,
 * megalodon) composing and reading a quote.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let anon: Client;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
  anon = new Client(server.base);
});
afterAll(() => server.close());

const NOT_ALLOWED = { error: "This action is not allowed" };
const RECORD_NOT_FOUND = { error: "Record not found" };

describe("GET /api/v1/statuses/:id/quotes", () => {
  test("the author pages the accepted quotes, newest first, with Link headers", async () => {
    const quoted = await postStatus(alice, { status: "much quoted" });
    const q1 = await postStatus(bob, { status: "one", quoted_status_id: quoted.id });
    const q2 = await postStatus(carol, { status: "two", quoted_status_id: quoted.id });
    const q3 = await postStatus(bob, { status: "three", quoted_status_id: quoted.id });
    const all = await alice.client.get(`/api/v1/statuses/${quoted.id}/quotes`);
    expect(all.status).toBe(200);
    expect(all.body.map((s: { id: string }) => s.id)).toEqual([q3.id, q2.id, q1.id]);
    expect(all.body[0].quote.quoted_status.id).toBe(quoted.id);

    const first = await alice.client.get(`/api/v1/statuses/${quoted.id}/quotes`, { query: { limit: "2" } });
    expect(first.body.map((s: { id: string }) => s.id)).toEqual([q3.id, q2.id]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1];
    expect(first.headers.get("link")).toContain('rel="prev"');
    expect(next).toStartWith(`${server.base}/api/v1/statuses/${quoted.id}/quotes?`);
    const second = await alice.client.get(next!.replace(server.base, ""));
    expect(second.body.map((s: { id: string }) => s.id)).toEqual([q1.id]);
    // A short page offers no next one.
    expect(second.headers.get("link")).not.toContain('rel="next"');
  });

  test("anyone but the author is refused: 403 if they see the status, 404 if not, 401 without a token", async () => {
    const quoted = await postStatus(alice, { status: "mine" });
    await postStatus(bob, { status: "quoting", quoted_status_id: quoted.id });
    const other = await bob.client.get(`/api/v1/statuses/${quoted.id}/quotes`);
    expect([other.status, other.body]).toEqual([403, NOT_ALLOWED]);
    const secret = await postStatus(alice, { status: "secret", visibility: "private" });
    const hidden = await bob.client.get(`/api/v1/statuses/${secret.id}/quotes`);
    expect([hidden.status, hidden.body]).toEqual([404, RECORD_NOT_FOUND]);
    const missing = await alice.client.get("/api/v1/statuses/999999/quotes");
    expect([missing.status, missing.body]).toEqual([404, RECORD_NOT_FOUND]);
    expect((await anon.get(`/api/v1/statuses/${quoted.id}/quotes`)).status).toBe(401);
  });
});

describe("POST /api/v1/statuses/:id/quotes/:quoting_status_id/revoke", () => {
  test("the quoted author takes a quote back: revoked, not shown, not counted, not listed", async () => {
    const quoted = await postStatus(alice, { status: "changed my mind" });
    const quoting = await postStatus(bob, { status: "quoting", quoted_status_id: quoted.id });
    // Only the quoted author may: nothing changes for anyone else's attempt.
    const byQuoter = await bob.client.post(`/api/v1/statuses/${quoted.id}/quotes/${quoting.id}/revoke`);
    expect([byQuoter.status, byQuoter.body]).toEqual([403, NOT_ALLOWED]);
    const unknown = await alice.client.post(`/api/v1/statuses/${quoted.id}/quotes/123456/revoke`);
    expect([unknown.status, unknown.body]).toEqual([404, RECORD_NOT_FOUND]);
    expect((await anon.get(`/api/v1/statuses/${quoting.id}`)).body.quote.state).toBe("accepted");
    expect((await anon.get(`/api/v1/statuses/${quoted.id}`)).body.quotes_count).toBe(1);

    const res = await alice.client.post(`/api/v1/statuses/${quoted.id}/quotes/${quoting.id}/revoke`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(quoting.id);
    expect(res.body.quote).toEqual({ state: "revoked", quoted_status: null });
    expect((await anon.get(`/api/v1/statuses/${quoting.id}`)).body.quote).toEqual({ state: "revoked", quoted_status: null });
    expect((await anon.get(`/api/v1/statuses/${quoted.id}`)).body.quotes_count).toBe(0);
    expect((await alice.client.get(`/api/v1/statuses/${quoted.id}/quotes`)).body).toEqual([]);
  });
});

describe("PUT /api/v1/statuses/:id/interaction_policy", () => {
  test("the author changes who may quote, without a new version", async () => {
    const status = await postStatus(alice, { status: "open for now" });
    const res = await alice.client.put(`/api/v1/statuses/${status.id}/interaction_policy`, { json: { quote_approval_policy: "followers" } });
    expect(res.status).toBe(200);
    expect(res.body.quote_approval).toEqual({ automatic: ["followers"], manual: [], current_user: "automatic" });
    expect(res.body.edited_at).toBeNull();
    expect((await bob.client.get(`/api/v1/statuses/${status.id}`)).body.quote_approval.current_user).toBe("denied");
    const refused = await bob.client.post("/api/v1/statuses", { json: { status: "no", quoted_status_id: status.id } });
    expect(refused.status).toBe(404);
  });

  test("an unknown policy, someone else's status, an invisible one: refused, nothing changed", async () => {
    const status = await postStatus(alice, { status: "public policy" });
    const path = `/api/v1/statuses/${status.id}/interaction_policy`;
    const invalid = await alice.client.put(path, { json: { quote_approval_policy: "everyone" } });
    expect([invalid.status, invalid.body]).toEqual([422, { error: "Record invalid" }]);
    const other = await bob.client.put(path, { json: { quote_approval_policy: "nobody" } });
    expect([other.status, other.body]).toEqual([403, NOT_ALLOWED]);
    const secret = await postStatus(alice, { status: "secret", visibility: "private" });
    const hidden = await bob.client.put(`/api/v1/statuses/${secret.id}/interaction_policy`, { json: { quote_approval_policy: "nobody" } });
    expect([hidden.status, hidden.body]).toEqual([404, RECORD_NOT_FOUND]);
    expect((await anon.get(`/api/v1/statuses/${status.id}`)).body.quote_approval.automatic).toEqual(["public"]);
  });

  test("PUT /api/v1/statuses/:id takes quote_approval_policy too, and keeps a quote's fallback link", async () => {
    const quoted = await postStatus(carol, { status: "quoted" });
    const status = await postStatus(alice, { status: "first words", quoted_status_id: quoted.id });
    const edited = await alice.client.put(`/api/v1/statuses/${status.id}`, { json: { status: "second words", quote_approval_policy: "nobody" } });
    expect(edited.status).toBe(200);
    expect(edited.body.quote_approval.automatic).toEqual([]);
    expect(edited.body.content).toBe(`<p class="quote-inline">RE: <a href="${server.base}/@carol/${quoted.id}">${server.base}/@carol/${quoted.id}</a></p><p>second words</p>`);
    expect(edited.body.quote.quoted_status.id).toBe(quoted.id);
    const invalid = await alice.client.put(`/api/v1/statuses/${status.id}`, { json: { status: "third words", quote_approval_policy: "all" } });
    expect([invalid.status, invalid.body]).toEqual([422, { error: "Record invalid" }]);
    expect((await anon.get(`/api/v1/statuses/${status.id}`)).body.content).toContain("second words");
  });
});

describe("notifications", () => {
  test("quote tells the quoted author; quoted_update tells the quoter of an edit; both in grouped notifications", async () => {
    const dave = await createUser(server, "dave");
    const erin = await createUser(server, "erin");
    const quoted = await postStatus(dave, { status: "original" });
    const quoting = await postStatus(erin, { status: "my take", quoted_status_id: quoted.id });
    const told = (await dave.client.get("/api/v1/notifications", { query: { "types[]": "quote" } })).body;
    expect(told.map((n: { type: string; account: { id: string }; status: { id: string } }) => [n.type, n.account.id, n.status.id])).toEqual([["quote", erin.id, quoting.id]]);

    await dave.client.put(`/api/v1/statuses/${quoted.id}`, { json: { status: "original, edited" } });
    const updates = (await erin.client.get("/api/v1/notifications")).body;
    expect(updates.map((n: { type: string; account: { id: string }; status: { id: string } }) => [n.type, n.account.id, n.status.id])).toEqual([["quoted_update", dave.id, quoting.id]]);
    expect(updates[0].status.quote.quoted_status.content).toBe("<p>original, edited</p>");

    const grouped = (await dave.client.get("/api/v2/notifications")).body;
    expect(grouped.notification_groups.map((g: { type: string; status_id: string }) => [g.type, g.status_id])).toEqual([["quote", quoting.id]]);
    expect(grouped.statuses.map((s: { id: string }) => s.id)).toEqual([quoting.id]);
  });

  test("quoting one's own post tells nobody", async () => {
    const frank = await createUser(server, "frank");
    const own = await postStatus(frank, { status: "me" });
    const again = await postStatus(frank, { status: "me again", quoted_status_id: own.id });
    expect(again.quote.state).toBe("accepted");
    expect((await frank.client.get("/api/v1/notifications")).body).toEqual([]);
  });
});

describe("real clients", () => {
  test("masto.js composes a quote and reads it back, its quotes listed", async () => {
    const a = createRestAPIClient({ url: server.base, accessToken: alice.token });
    const b = createRestAPIClient({ url: server.base, accessToken: bob.token });
    const quoted = await a.v1.statuses.create({ status: "Quote me, masto", quoteApprovalPolicy: "public" });
    expect(quoted.quoteApproval).toEqual({ automatic: ["public"], manual: [], currentUser: "automatic" });
    const quote = await b.v1.statuses.create({ status: "Quoted with masto", quotedStatusId: quoted.id });
    expect(quote.quote?.state).toBe("accepted");
    expect(quote.quote && "quotedStatus" in quote.quote ? quote.quote.quotedStatus?.id : null).toBe(quoted.id);
    const read = await a.v1.statuses.$select(quoted.id).fetch();
    expect(read.quotesCount).toBe(1);
    const listed = await a.v1.statuses.$select(quoted.id).quotes.list();
    expect(listed.map((s) => s.id)).toEqual([quote.id]);
    const instance = await a.v2.instance.fetch();
    expect(Number(instance.apiVersions?.mastodon)).toBe(7);
  });

  test("megalodon reads a quote post", async () => {
    const quoted = await postStatus(alice, { status: "Quote me, megalodon" });
    const quote = await postStatus(carol, { status: "Quoted", quoted_status_id: quoted.id });
    const client = generator("mastodon", server.base, alice.token);
    const res = await client.getStatus(quote.id);
    const q = res.data.quote as { state: string; quoted_status: { id: string } | null } | null;
    expect(q?.state).toBe("accepted");
    expect(q?.quoted_status?.id).toBe(quoted.id);
  });
});
