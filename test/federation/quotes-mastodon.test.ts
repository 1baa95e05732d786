import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, getAp } from "../support/federation.ts";
import { mastodonNote, mastodonStamp, NOTE_CONTEXT, PUBLIC, STAMP_CONTEXT } from "../support/mastodon-quotes.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Quotes with a server that speaks as Mastodon 4.5 does, its JSON written out as Mastodon's
 * serializers and FEP-044f's examples have it (test/support/mastodon-quotes.ts).
 */

let a: TestServer;
let alice: TestUser;
let m: Awaited<ReturnType<typeof startRawServer>>;
let elsewhere: Awaited<ReturnType<typeof startRawServer>>;
let zoe: string;
let yan: string;
let inbox: string;

const rowByUri = async (uri: string) => (await a.database.port.get<{ id: number; quote_approval: string | null }>("SELECT id, quote_approval FROM statuses WHERE uri = ?", [uri])) ?? null;
const quoteOf = async (statusId: number | string) => (await a.database.port.orm.select().from(a.database.port.tables.quotes).where(eq(a.database.port.tables.quotes.statusId, Number(statusId))).limit(1))[0];
const quotesCount = async (statusId: number | string) => (await a.database.port.get<{ n: number }>("SELECT quotes_count AS n FROM statuses WHERE id = ?", [Number(statusId)]))?.n;
const count = async (sql: string) => (await a.database.port.get<{ n: number }>(sql))!.n;

/** A public Note of an actor on M, as Mastodon serializes one; served at its IRI. */
const note = (actor: string, path: string, extra: Record<string, unknown> = {}) => mastodonNote(m, actor, path, extra);
/** A stamp of yan's as Mastodon's QuoteAuthorizationsController serves one, at `path` on `server`. */
const stamp = mastodonStamp;

/** zoe's Create of a Note mentioning alice (so that it concerns someone here). */
async function zoeCreates(document: Record<string, unknown>) {
  const mention = { type: "Mention", href: `${a.base}/users/alice`, name: `@alice@${new URL(a.base).host}` };
  const object = { ...document, cc: [...(document.cc as string[]), `${a.base}/users/alice`], tag: [mention] };
  const res = await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: `${document.id}/activity`, type: "Create", to: [PUBLIC], object });
  expect(res.status).toBeLessThan(300);
  return eventually(() => rowByUri(document.id as string), `${document.id} stored`);
}

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  inbox = `${a.base}/users/alice/inbox`;
  m = await startRawServer("127.0.0.6");
  elsewhere = await startRawServer("127.0.0.7");
  zoe = m.actor("zoe", "zoe", { followers: `${m.base}/actors/zoe/followers` });
  yan = m.actor("yan", "yan", { followers: `${m.base}/actors/yan/followers` });
});
afterAll(async () => {
  await a?.close();
  m?.stop();
  elsewhere?.stop();
});

describe("quotes of Mastodon posts read as Mastodon writes them", () => {
  test("a quote with its stamp: the quoted post is fetched and the stamp its server serves makes the quote accepted", async () => {
    const quoted = note(yan, "/actors/yan/statuses/1", { interactionPolicy: { canQuote: { automaticApproval: [PUBLIC, `${yan}/followers`], manualApproval: zoe } } });
    const quotingId = `${m.base}/actors/zoe/statuses/1`;
    const approval = stamp(m, "/actors/yan/quote_authorizations/1", { attributedTo: yan, interactingObject: quotingId, interactionTarget: quoted.id });
    const row = await zoeCreates(note(zoe, "/actors/zoe/statuses/1", { quote: quoted.id, _misskey_quote: quoted.id, quoteUri: quoted.id, quoteAuthorization: approval }));
    const quotedRow = (await rowByUri(quoted.id))!;
    expect(await quoteOf(row.id)).toMatchObject({ state: "accepted", quotedStatusId: quotedRow.id, quotedUri: quoted.id, approvalUri: approval, legacy: false });
    expect((await alice.client.get(`/api/v1/statuses/${row.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { id: String(quotedRow.id), uri: quoted.id } });
    // yan's policy as kept: public and followers at once, zoe (one account) as Mastodon shows what it cannot name.
    expect(JSON.parse(quotedRow.quote_approval!)).toEqual({ automatic: ["public", "followers"], manual: ["unsupported_policy"] });
  });

  test("forged stamps prove nothing: one on another server, one for another post, one issued by someone else; one its server does not have refuses the quote", async () => {
    const quoted = note(yan, "/actors/yan/statuses/2");
    const cases = [
      // Served by a server that is not yan's, naming yan as its author.
      { path: "/actors/zoe/statuses/2", approval: (id: string) => stamp(elsewhere, "/stamps/2", { attributedTo: yan, interactingObject: id, interactionTarget: quoted.id }) },
      // yan's stamp of another quote, reused.
      { path: "/actors/zoe/statuses/3", approval: () => stamp(m, "/actors/yan/quote_authorizations/3", { attributedTo: yan, interactingObject: `${m.base}/actors/zoe/statuses/other`, interactionTarget: quoted.id }) },
      // On yan's server, but issued by zoe herself.
      { path: "/actors/zoe/statuses/4", approval: (id: string) => stamp(m, "/actors/zoe/quote_authorizations/4", { attributedTo: zoe, interactingObject: id, interactionTarget: quoted.id }) },
    ];
    for (const c of cases) {
      const id = `${m.base}${c.path}`;
      const row = await zoeCreates(note(zoe, c.path, { quote: quoted.id, quoteAuthorization: c.approval(id) }));
      expect((await quoteOf(row.id))?.state).toBe("pending");
      expect((await alice.client.get(`/api/v1/statuses/${row.id}`)).body.quote).toEqual({ state: "pending", quoted_status: null });
    }
    // A stamp its own server says is not there: refused.
    const row = await zoeCreates(note(zoe, "/actors/zoe/statuses/5", { quote: quoted.id, quoteAuthorization: `${m.base}/actors/yan/quote_authorizations/gone` }));
    expect((await quoteOf(row.id))?.state).toBe("rejected");
    expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(0);
  });

  test("a legacy quote (Misskey's _misskey_quote, quoteUrl) is kept as such: shown as a link, never accepted", async () => {
    const quoted = note(yan, "/actors/yan/statuses/6");
    const misskey = await zoeCreates(note(zoe, "/actors/zoe/statuses/6", { interactionPolicy: undefined, _misskey_quote: quoted.id }));
    expect(await quoteOf(misskey.id)).toMatchObject({ state: "pending", legacy: true, quotedUri: quoted.id });
    expect((await alice.client.get(`/api/v1/statuses/${misskey.id}`)).body.quote).toBeNull();
    const fedibird = await zoeCreates(note(zoe, "/actors/zoe/statuses/7", { "@context": ["https://www.w3.org/ns/activitystreams", { quoteUrl: "as:quoteUrl" }], quoteUrl: quoted.id }));
    expect(await quoteOf(fedibird.id)).toMatchObject({ state: "pending", legacy: true });
    // A post stating no policy may be quoted by its author alone.
    expect((await rowByUri(`${m.base}/actors/zoe/statuses/6`))!.quote_approval).toBeNull();
  });
});

describe("QuoteRequests from a Mastodon server", () => {
  /** zoe's QuoteRequest for one of alice's posts, the quoting Note embedded (Mastodon's QuoteRequestWorker). */
  async function zoeAsks(n: number, quotedUri: string, id = `${m.base}/actors/zoe/quote_requests/${n}`) {
    const instrument = note(zoe, `/actors/zoe/statuses/q${n}`, { quote: quotedUri, _misskey_quote: quotedUri, quoteUri: quotedUri });
    const res = await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id, type: "QuoteRequest", object: quotedUri, instrument });
    expect(res.status).toBeLessThan(300);
    return { id, instrument };
  }
  const answersTo = (requestId: string) => m.received.filter((r) => r.body?.object?.id === requestId || r.body?.object === requestId);

  test("a post nobody may quote: Reject quoting the request, nothing stored, nothing counted", async () => {
    const posted = await postStatus(alice, { status: "mine alone", visibility: "public", quote_approval_policy: "nobody" });
    const uri = posted.uri as string;
    const before = await count("SELECT count(*) AS n FROM statuses");
    const { id, instrument } = await zoeAsks(1, uri);
    const [reject] = await eventually(() => (answersTo(id).length > 0 ? answersTo(id) : null), "the Reject");
    expect(reject!.path).toBe("/actors/zoe/inbox");
    expect(reject!.body).toMatchObject({ type: "Reject", actor: `${a.base}/users/alice`, object: { type: "QuoteRequest", id, actor: zoe, object: uri, instrument: instrument.id } });
    expect(await count("SELECT count(*) AS n FROM statuses")).toBe(before);
    expect(await count("SELECT count(*) AS n FROM quotes WHERE quoted_status_id = " + Number(posted.id))).toBe(0);
    expect((await alice.client.get(`/api/v1/statuses/${posted.id}`)).body.quotes_count).toBe(0);
  });

  test("a request whose id is on another server than its actor's, for a post not shared publicly, or whose quoting post is not the requester's, is not answered", async () => {
    const open = await postStatus(alice, { status: "open", visibility: "public" });
    const secret = await postStatus(alice, { status: "followers only", visibility: "private" });
    const forged = await zoeAsks(2, open.uri, `${elsewhere.base}/quote_requests/2`);
    const hidden = await zoeAsks(3, secret.uri);
    // The quoting post is someone else's: yan's, or one on another server.
    const notHers = `${m.base}/actors/zoe/quote_requests/yans`;
    await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: notHers, type: "QuoteRequest", object: open.uri, instrument: note(yan, "/actors/yan/statuses/q-yans", { quote: open.uri }) });
    const offsite = `${m.base}/actors/zoe/quote_requests/offsite`;
    const offsiteNote = { ...note(zoe, "/x"), id: `${elsewhere.base}/notes/offsite`, quote: open.uri };
    await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: offsite, type: "QuoteRequest", object: open.uri, instrument: offsiteNote });
    // A later request that is answered shows the ones before it were handled.
    const marker = await zoeAsks(4, open.uri);
    await eventually(() => answersTo(marker.id).length > 0, "the marker's answer");
    expect([answersTo(forged.id), answersTo(hidden.id), answersTo(notHers), answersTo(offsite)]).toEqual([[], [], [], []]);
    for (const uri of [hidden.instrument.id as string, `${m.base}/actors/yan/statuses/q-yans`, offsiteNote.id]) expect(await rowByUri(uri)).toBeNull();
    // Only the marker's quote counts.
    expect(await quotesCount(open.id)).toBe(1);
  });

  test("a public post: Accept with a stamp alice's server serves; alice revokes it and the stamp's Delete goes to zoe", async () => {
    const open = await postStatus(alice, { status: "quote away", visibility: "public" });
    const { id, instrument } = await zoeAsks(5, open.uri);
    const [accept] = await eventually(() => (answersTo(id).length > 0 ? answersTo(id) : null), "the Accept");
    expect(accept!.body).toMatchObject({ type: "Accept", actor: `${a.base}/users/alice`, object: { type: "QuoteRequest", id, instrument: instrument.id } });
    const stampUri: string = accept!.body.result;
    expect(stampUri).toStartWith(`${a.base}/users/alice/quote_authorizations/`);
    const served = await getAp(stampUri);
    expect(served.body).toMatchObject({ type: "QuoteAuthorization", attributedTo: `${a.base}/users/alice`, interactingObject: instrument.id, interactionTarget: open.uri });
    const quoting = (await rowByUri(instrument.id as string))!;
    expect(await quoteOf(quoting.id)).toMatchObject({ state: "accepted", activityUri: id });
    expect(await quotesCount(open.id)).toBe(1);

    expect((await alice.client.post(`/api/v1/statuses/${open.id}/quotes/${quoting.id}/revoke`)).status).toBe(200);
    const deleted = await eventually(() => m.received.find((r) => r.body?.type === "Delete" && r.body?.object?.id === stampUri), "the stamp's Delete");
    expect(deleted.body).toMatchObject({ actor: `${a.base}/users/alice`, object: { type: "QuoteAuthorization", interactingObject: instrument.id, interactionTarget: open.uri } });
    expect((await fetch(stampUri, { headers: { accept: AP } })).status).toBe(404);
    expect(await quotesCount(open.id)).toBe(0);
  });
});

describe("alice quotes a Mastodon post", () => {
  test("A asks yan's server; only yan's Accept with a stamp on his server accepts it, only yan's Delete of it revokes it; deleting the quote tells yan", async () => {
    const quoted = note(yan, "/actors/yan/statuses/8");
    const found = await alice.client.get("/api/v2/search", { query: { q: quoted.id, resolve: "true" } });
    expect(found.body.statuses).toHaveLength(1);
    const posted = { status: await postStatus(alice, { status: "look at this", visibility: "public", quoted_status_id: found.body.statuses[0].id }) };
    const mine = posted.status.uri as string;
    const request = await eventually(() => m.received.find((r) => r.body?.type === "QuoteRequest" && r.body?.instrument?.id === mine), "the QuoteRequest at yan's inbox");
    expect(request.path).toBe("/actors/yan/inbox");
    expect(request.body).toMatchObject({ actor: `${a.base}/users/alice`, object: quoted.id, instrument: { type: "Note", quote: quoted.id } });
    const requestId: string = request.body.id;
    expect(await quoteOf(posted.status.id)).toMatchObject({ state: "pending", activityUri: requestId });

    const echoed = { type: "QuoteRequest", id: requestId, actor: `${a.base}/users/alice`, object: quoted.id, instrument: mine };
    const accept = (actor: string, n: number, result: string) => m.post(inbox, actor, { "@context": NOTE_CONTEXT, id: `${actor}#accepts/quote_requests/${n}`, type: "Accept", object: echoed, result });
    const approval = stamp(m, "/actors/yan/quote_authorizations/8", { attributedTo: yan, interactingObject: mine, interactionTarget: quoted.id });
    // zoe is not the quoted author; yan's stamp must be on yan's server.
    await accept(zoe, 1, approval);
    await accept(yan, 2, `${elsewhere.base}/stamps/8`);
    await a.federation!.idle();
    expect((await quoteOf(posted.status.id))?.state).toBe("pending");
    await accept(yan, 3, approval);
    await eventually(async () => (await quoteOf(posted.status.id))?.state === "accepted", "accepted");
    expect((await quoteOf(posted.status.id))!.approvalUri).toBe(approval);
    expect((await getAp(mine)).body.quoteAuthorization).toBe(approval);
    expect((await alice.client.get(`/api/v1/statuses/${posted.status.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: quoted.id } });

    // A Delete of the stamp by anyone but yan changes nothing; yan's revokes the quote.
    const del = (actor: string, n: number) => m.post(inbox, actor, { "@context": STAMP_CONTEXT, id: `${approval}#delete-${n}`, type: "Delete", to: [PUBLIC], object: { type: "QuoteAuthorization", id: approval, attributedTo: yan, interactingObject: mine, interactionTarget: quoted.id } });
    await del(zoe, 1);
    await a.federation!.idle();
    expect((await quoteOf(posted.status.id))?.state).toBe("accepted");
    await del(yan, 2);
    await eventually(async () => (await quoteOf(posted.status.id))?.state === "revoked", "revoked");

    // alice deletes her post: yan's server, which follows nobody here, is told too.
    expect((await alice.client.delete(`/api/v1/statuses/${posted.status.id}`)).status).toBe(200);
    const gone = await eventually(() => m.received.find((r) => r.body?.type === "Delete" && r.body?.object?.id === mine), "the Delete at yan's inbox");
    expect(gone.path).toBe("/actors/yan/inbox");
  });
});

describe("a stamp named by more than one post", () => {
  test("a decoy naming the stamp before the genuine post neither keeps that post out nor takes its revocation: the stamp's Delete revokes the quote it approved", async () => {
    const quoted = note(yan, "/actors/yan/statuses/20");
    const genuine = `${m.base}/actors/zoe/statuses/21`;
    const approval = stamp(m, "/actors/yan/quote_authorizations/21", { attributedTo: yan, interactingObject: genuine, interactionTarget: quoted.id });
    // zoe's server sends a decoy naming the stamp first: it proves nothing for it (pending). When
    // the stamp's IRI was unique here, the decoy held it: the genuine post was refused (500), and
    // the stamp's Delete found the decoy.
    const decoy = await zoeCreates(note(zoe, "/actors/zoe/statuses/20", { quote: quoted.id, quoteAuthorization: approval }));
    expect((await quoteOf(decoy.id))?.state).toBe("pending");
    const row = await zoeCreates(note(zoe, "/actors/zoe/statuses/21", { quote: quoted.id, quoteAuthorization: approval }));
    expect((await quoteOf(row.id))?.state).toBe("accepted");

    const del = { "@context": STAMP_CONTEXT, id: `${approval}#delete`, type: "Delete", to: [PUBLIC], object: { type: "QuoteAuthorization", id: approval, attributedTo: yan, interactingObject: genuine, interactionTarget: quoted.id } };
    expect((await m.post(inbox, yan, del)).status).toBeLessThan(300);
    await eventually(async () => (await quoteOf(row.id))?.state === "revoked", "the quote revoked");
    expect((await alice.client.get(`/api/v1/statuses/${row.id}`)).body.quote).toEqual({ state: "revoked", quoted_status: null });
    expect((await quoteOf(decoy.id))?.state).toBe("pending");
    expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(0);
  });
});

describe("an answer after the answer", () => {
  test("an Accept of a request yan already refused changes nothing: the quote stays rejected, uncounted, and alice's post is not sent again", async () => {
    const quoted = note(yan, "/actors/yan/statuses/9");
    const found = await alice.client.get("/api/v2/search", { query: { q: quoted.id, resolve: "true" } });
    const posted = await postStatus(alice, { status: "asking twice", visibility: "public", quoted_status_id: found.body.statuses[0].id });
    const mine = posted.uri as string;
    const request = await eventually(() => m.received.find((r) => r.body?.type === "QuoteRequest" && r.body?.instrument?.id === mine), "the QuoteRequest");
    const echoed = { type: "QuoteRequest", id: request.body.id, actor: `${a.base}/users/alice`, object: quoted.id, instrument: mine };
    await m.post(inbox, yan, { "@context": NOTE_CONTEXT, id: `${yan}#rejects/quote_requests/9`, type: "Reject", object: echoed });
    await eventually(async () => (await quoteOf(posted.id))?.state === "rejected", "rejected");

    const approval = stamp(m, "/actors/yan/quote_authorizations/9", { attributedTo: yan, interactingObject: mine, interactionTarget: quoted.id });
    const sentBefore = m.received.length;
    const late = await m.post(inbox, yan, { "@context": NOTE_CONTEXT, id: `${yan}#accepts/quote_requests/9`, type: "Accept", object: echoed, result: approval });
    expect(late.status).toBeLessThan(300);
    await a.federation!.idle();
    expect(await quoteOf(posted.id)).toMatchObject({ state: "rejected", approvalUri: null });
    expect((await alice.client.get(`/api/v1/statuses/${posted.id}`)).body.quote).toEqual({ state: "rejected", quoted_status: null });
    expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(0);
    expect(m.received.slice(sentBefore).filter((r) => r.body?.type === "Update")).toEqual([]);
    expect((await getAp(mine)).body.quoteAuthorization).toBeUndefined();
  });
});

describe("a private quote from a Mastodon server", () => {
  test("zoe's followers-only quote of alice's post, asked and accepted: alice sees it and is told, though it neither mentions nor addresses her", async () => {
    const open = await postStatus(alice, { status: "quote me privately", visibility: "public" });
    const id = `${m.base}/actors/zoe/quote_requests/private`;
    // As Mastodon's NoteSerializer writes a quote: `quote`, and `_misskey_quote` and `quoteUri` for others.
    const instrument = note(zoe, "/actors/zoe/statuses/private-quote", { to: [`${zoe}/followers`], cc: [], quote: open.uri, _misskey_quote: open.uri, quoteUri: open.uri });
    expect((await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id, type: "QuoteRequest", object: open.uri, instrument })).status).toBeLessThan(300);
    await eventually(() => m.received.some((r) => r.body?.type === "Accept" && r.body?.object?.id === id), "the Accept");
    const quoting = (await rowByUri(instrument.id))!;
    const seen = await alice.client.get(`/api/v1/statuses/${quoting.id}`);
    expect(seen.status).toBe(200);
    expect([seen.body.visibility, seen.body.mentions]).toEqual(["private", []]);
    const told = (await alice.client.get("/api/v1/notifications", { query: { "types[]": "quote" } })).body;
    expect(told.map((n: { status: { id: string } }) => n.status.id)).toContain(String(quoting.id));
  });
});
