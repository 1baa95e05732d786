import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { QuoteRow } from "../../src/db/schema.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, getAp, startFederatedPair } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Quote posts between Rookery servers (FEP-044f, as Mastodon 4.5 does it): bob on B quotes
 * alice's post on A; B asks A (QuoteRequest), A's policy answers (Accept with a stamp A serves),
 * and a third server C, which hears of bob's post from bob, believes the quote only once the
 * stamp A serves says so. Revocation goes both ways.
 */
let a: TestServer;
let b: TestServer;
let c: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

const rowByUri = async (server: TestServer, uri: string) => (await server.database.port.get<{ id: number; quotes_count: number }>("SELECT id, quotes_count FROM statuses WHERE uri = ?", [uri])) ?? null;
const quoteOf = async (server: TestServer, statusId: number | string) => (await server.database.port.orm.select().from(server.database.port.tables.quotes).where(eq(server.database.port.tables.quotes.statusId, Number(statusId))).limit(1))[0];
const quotesCount = async (server: TestServer, statusId: number | string) => (await server.database.port.get<{ n: number }>("SELECT quotes_count AS n FROM statuses WHERE id = ?", [Number(statusId)]))?.n;

/** A status quoting another, through the client API (Mastodon 4.5's quoted_status_id). */
async function quote(_server: TestServer, user: TestUser, text: string, quotedId: number | string, visibility = "public") {
  const posted = await postStatus(user, { status: text, visibility, quoted_status_id: String(quotedId) });
  return { id: Number(posted.id), uri: posted.uri as string, entity: posted };
}

/** `follower` follows the account at `actorUri` from `server`, and the follow is accepted. */
async function follows(server: TestServer, follower: TestUser, actorUri: string) {
  const remote = (await server.federation!.resolveActor(actorUri))!;
  await follower.client.post(`/api/v1/accounts/${remote.id}/follow`);
  await eventually(async () => (await follower.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remote.id) } })).body[0]?.following === true, `following ${actorUri}`);
  return remote;
}

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  c = await startTestServer({ HOST: "127.0.0.4", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  carol = await createUser(c, "carol");
  await follows(b, bob, `${a.base}/users/alice`);
  await follows(c, carol, `${b.base}/users/bob`);
  await follows(a, alice, `${b.base}/users/bob`);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

/** alice posts; her post as B has it. */
async function alicePosts(text: string, extra: Record<string, unknown> = {}) {
  const post = await postStatus(alice, { status: text, visibility: "public", ...extra });
  const onB = await eventually(() => rowByUri(b, post.uri), "alice's post on B");
  return { post, onB };
}

describe("a remote post quoted, asked and approved (Rookery to Rookery)", () => {
  let post: { id: string; [key: string]: any };
  let bobsQuote: { id: number; uri: string };
  let accepted: QuoteRow;

  test("bob quotes alice's post: A accepts by alice's policy, counts it and tells her; B holds the stamp A issued", async () => {
    const posted = await alicePosts("Quote me if you like");
    post = posted.post;
    const status = await quote(b, bob, "Well said", posted.onB.id);
    // B asks first: pending until A answers, and its client shows it so (the quoted post not yet shown in it).
    expect(status.entity.quote).toEqual({ state: "pending", quoted_status: null });
    expect(await quoteOf(b, status.id)).toMatchObject({ state: "pending", quotedStatusId: posted.onB.id });
    const activityUri = (await quoteOf(b, status.id))!.activityUri!;
    expect(activityUri).toStartWith(`${b.base}/users/bob/quote_requests/`);
    accepted = await eventually(async () => {
      const q = await quoteOf(b, status.id);
      return q?.state === "accepted" ? q : null;
    }, "B's quote accepted");
    const bobsUri = `${b.base}/users/bob/statuses/${status.id}`;
    bobsQuote = { id: status.id, uri: bobsUri };
    expect((await bob.client.get(`/api/v1/statuses/${status.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: post.uri } });

    // On A: bob's post is stored (from the request's instrument), its quote accepted, counted, told.
    const onA = await eventually(() => rowByUri(a, bobsUri), "bob's post on A");
    const quoteOnA = (await quoteOf(a, onA.id))!;
    expect(quoteOnA).toMatchObject({ state: "accepted", quotedStatusId: Number(post.id), activityUri });
    expect(await quotesCount(a, post.id)).toBe(1);
    // alice's client shows bob's quote of her post, and her post quoted once.
    expect((await alice.client.get(`/api/v1/statuses/${onA.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { id: post.id } });
    expect((await alice.client.get(`/api/v1/statuses/${post.id}`)).body.quotes_count).toBe(1);
    const notifications = (await alice.client.get("/api/v1/notifications")).body;
    expect(notifications.some((n: any) => n.type === "quote" && n.account.acct === `bob@${new URL(b.base).host}`)).toBe(true);

    // B's stamp is the one A serves, for exactly this quote.
    expect(accepted.approvalUri).toBe(`${a.base}/users/alice/quote_authorizations/${quoteOnA.id}`);
    const stamp = await getAp(accepted.approvalUri!);
    expect(stamp.status).toBe(200);
    expect(stamp.body).toMatchObject({ id: accepted.approvalUri, type: "QuoteAuthorization", attributedTo: `${a.base}/users/alice`, interactingObject: bobsUri, interactionTarget: post.uri });
  });

  test("bob's Note names the quote as Mastodon does, with the stamp, and alice's names who may quote it", async () => {
    const note = await getAp(bobsQuote.uri);
    expect(note.status).toBe(200);
    expect(note.body).toMatchObject({ quote: post.uri, _misskey_quote: post.uri, quoteUri: post.uri, quoteAuthorization: accepted.approvalUri });
    expect(note.body.interactionPolicy.canQuote.automaticApproval).toContain("as:Public");
    const nobody = await postStatus(alice, { status: "mine alone", visibility: "public", quote_approval_policy: "nobody" });
    const quoted = await getAp(nobody.uri);
    expect([quoted.body.interactionPolicy.canQuote.automaticApproval].flat()).toEqual([`${a.base}/users/alice`]);
  });

  test("C hears bob's post and believes the quote only through the stamp A serves", async () => {
    const onC = await eventually(() => rowByUri(c, bobsQuote.uri), "bob's post on C");
    // C fetched alice's post from A to show it, and the stamp from A to believe it.
    const quotedOnC = await eventually(() => rowByUri(c, post.uri), "alice's post fetched by C");
    const q = await eventually(async () => ((await quoteOf(c, onC.id))?.state === "accepted" ? (await quoteOf(c, onC.id)) : null), "the quote accepted on C");
    expect(q).toMatchObject({ quotedStatusId: quotedOnC.id, approvalUri: accepted.approvalUri });
    expect((await carol.client.get(`/api/v1/statuses/${onC.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: post.uri, content: "<p>Quote me if you like</p>" } });
  });

  test("alice revokes the quote on A: the stamp goes (404), B and C are told with its Delete and revoke it too", async () => {
    const onA = (await rowByUri(a, bobsQuote.uri))!;
    expect((await alice.client.post(`/api/v1/statuses/${post.id}/quotes/${onA.id}/revoke`)).status).toBe(200);
    expect((await quoteOf(a, onA.id))?.state).toBe("revoked");
    expect(await quotesCount(a, post.id)).toBe(0);
    expect((await getAp(accepted.approvalUri!)).status).toBe(404);
    await eventually(async () => (await quoteOf(b, bobsQuote.id))?.state === "revoked", "revoked on B");
    const onC = (await rowByUri(c, bobsQuote.uri))!;
    await eventually(async () => (await quoteOf(c, onC.id))?.state === "revoked", "revoked on C");
    expect((await bob.client.get(`/api/v1/statuses/${bobsQuote.id}`)).body.quote.state).toBe("revoked");
  });
});

describe("who may quote a post travels with it", () => {
  test("alice lets nobody quote her post any more: B hears it (Update) and refuses bob's quote of it, with nothing stored", async () => {
    const { post, onB } = await alicePosts("Open for now");
    const onBView = async () => (await bob.client.get(`/api/v1/statuses/${onB.id}`)).body.quote_approval;
    expect(await onBView()).toEqual({ automatic: ["public"], manual: [], current_user: "automatic" });
    expect((await alice.client.put(`/api/v1/statuses/${post.id}/interaction_policy`, { json: { quote_approval_policy: "nobody" } })).status).toBe(200);
    await eventually(async () => (await onBView()).current_user === "denied", "the new policy on B");
    expect(await onBView()).toEqual({ automatic: [], manual: [], current_user: "denied" });
    const before = (await b.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n;
    const refused = await bob.client.post("/api/v1/statuses", { json: { status: "too late", quoted_status_id: String(onB.id) } });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: expect.any(String) });
    expect((await b.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n).toBe(before);
  });
});

describe("a local post quoted from here, and taken back there", () => {
  test("alice quotes bob's post: A asks B, B accepts; bob revokes it on B and A's quote is revoked", async () => {
    const bobs = await postStatus(bob, { status: "Bob's thought", visibility: "public" });
    const onA = await eventually(() => rowByUri(a, bobs.uri), "bob's post on A");
    const status = await quote(a, alice, "Indeed", onA.id);
    await eventually(async () => (await quoteOf(a, status.id))?.state === "accepted", "accepted on A");
    expect((await alice.client.get(`/api/v1/statuses/${status.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: bobs.uri } });
    expect((await quoteOf(a, status.id))!.approvalUri).toStartWith(`${b.base}/users/bob/quote_authorizations/`);
    expect(await quotesCount(b, bobs.id)).toBe(1);

    const aliceUri = `${a.base}/users/alice/statuses/${status.id}`;
    const onB = (await rowByUri(b, aliceUri))!;
    expect((await bob.client.post(`/api/v1/statuses/${bobs.id}/quotes/${onB.id}/revoke`)).status).toBe(200);
    await eventually(async () => (await quoteOf(a, status.id))?.state === "revoked", "revoked on A");
    expect((await alice.client.get(`/api/v1/statuses/${status.id}`)).body.quote.state).toBe("revoked");
    expect(await quotesCount(b, bobs.id)).toBe(0);
  });

  test("a stamp is served only while the quote stands, to readers who may see the quoted post", async () => {
    const secret = await postStatus(alice, { status: "followers only", visibility: "private" });
    // A quote of her own private post: accepted (an author may quote herself), its stamp not shown to anyone else.
    const own = await quote(a, alice, "me again", secret.id, "private");
    const q = (await quoteOf(a, own.id))!;
    expect(q.state).toBe("accepted");
    const res = await fetch(`${a.base}/users/alice/quote_authorizations/${q.id}`, { headers: { accept: AP } });
    expect(res.status).toBe(404);
    // Not a stamp of this account's, or no such quote: 404.
    expect((await fetch(`${a.base}/users/bob/quote_authorizations/${q.id}`, { headers: { accept: AP } })).status).toBe(404);
    expect((await fetch(`${a.base}/users/alice/quote_authorizations/12345`, { headers: { accept: AP } })).status).toBe(404);
  });
});
