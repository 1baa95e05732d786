import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { mastodonNote, mastodonStamp, NOTE_CONTEXT, PUBLIC } from "../support/mastodon-quotes.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { delivered, SseClient } from "../support/streams.ts";

/**
 * A remote post's Update and its quote, as Mastodon's ProcessStatusUpdateService takes it: an
 * edit (an `updated` newer than the last) that drops the quote removes it, one that quotes
 * another post replaces it (checked anew, an accepted quote of a post here revoked first); an
 * Update that is no edit changes neither. Counts follow, and streams show the post again.
 */
let a: TestServer;
let alice: TestUser;
let m: Awaited<ReturnType<typeof startRawServer>>;
let zoe: string;
let yan: string;
let inbox: string;

const rowByUri = async (uri: string) => (await a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri])) ?? null;
const quoteOf = async (statusId: number) => (await a.database.port.orm.select().from(a.database.port.tables.quotes).where(eq(a.database.port.tables.quotes.statusId, statusId)).limit(1))[0];
const quotesCount = async (statusId: number) => (await a.database.port.get<{ n: number }>("SELECT quotes_count AS n FROM statuses WHERE id = ?", [statusId]))?.n;
const mention = () => ({ type: "Mention", href: `${a.base}/users/alice`, name: `@alice@${new URL(a.base).host}` });

/** A Note as the test writes it out. */
type Note = Record<string, unknown> & { id: string };

/** zoe's Note quoting `quotedUri` (with a stamp of yan's, when given), mentioning alice so that it concerns someone here. */
function zoesNote(n: string, quotedUri: string | null, stampUri: string | null, extra: Record<string, unknown> = {}): Note {
  const document = mastodonNote(m, zoe, `/actors/zoe/statuses/${n}`, { ...(quotedUri ? { quote: quotedUri } : {}), ...(stampUri ? { quoteAuthorization: stampUri } : {}), ...extra });
  return { ...document, cc: [...document.cc, `${a.base}/users/alice`], tag: [mention()] };
}

async function zoeCreates(object: Note) {
  expect((await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: `${object.id}/activity`, type: "Create", to: [PUBLIC], object })).status).toBeLessThan(300);
  return (await eventually(() => rowByUri(object.id), `${object.id} stored`)).id;
}

/** zoe's Update of her Note: an edit when `updated` is given (later than anything before). */
async function zoeUpdates(object: Note, n: number) {
  expect((await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: `${object.id}#updates/${n}`, type: "Update", to: [PUBLIC], object })).status).toBeLessThan(300);
  await a.federation!.idle();
}

const yansPost = (n: string) => mastodonNote(m, yan, `/actors/yan/statuses/${n}`);
const yansStamp = (n: string, quotingUri: string, quotedUri: string) => mastodonStamp(m, `/actors/yan/quote_authorizations/${n}`, { attributedTo: yan, interactingObject: quotingUri, interactionTarget: quotedUri });
const edited = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.83", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  inbox = `${a.base}/users/alice/inbox`;
  m = await startRawServer("127.0.0.84");
  zoe = m.actor("zoe", "zoe", { followers: `${m.base}/actors/zoe/followers` });
  yan = m.actor("yan", "yan", { followers: `${m.base}/actors/yan/followers` });
});
afterAll(async () => {
  await a?.close();
  m?.stop();
});

describe("an Update dropping the quote", () => {
  test("an edit without the quote removes it: counted back, shown without it, and streamed again", async () => {
    const quoted = yansPost("1");
    const quotingUri = `${m.base}/actors/zoe/statuses/1`;
    const note = zoesNote("1", quoted.id, yansStamp("1", quotingUri, quoted.id));
    const id = await zoeCreates(note);
    const quotedId = (await rowByUri(quoted.id))!.id;
    expect((await quoteOf(id))?.state).toBe("accepted");
    expect(await quotesCount(quotedId)).toBe(1);

    const stream = await SseClient.open(`${a.base}/api/v1/streaming/public`);
    try {
      const { quote: _q, quoteAuthorization: _s, ...without } = note;
      await zoeUpdates({ ...without, id: note.id, updated: edited(1) }, 1);
      expect(await quoteOf(id)).toBeUndefined();
      expect(await quotesCount(quotedId)).toBe(0);
      expect((await alice.client.get(`/api/v1/statuses/${id}`)).body.quote).toBeNull();
      await delivered(a, stream);
      const updates = stream.events.filter((e) => e.event === "status.update").map((e) => JSON.parse(e.data!));
      expect(updates.map((s) => [s.id, s.quote])).toEqual([[String(id), null]]);
    } finally {
      stream.close();
    }
  });

  test("an Update that is no edit (no newer `updated`) leaves the quote as it is", async () => {
    const quoted = yansPost("2");
    const quotingUri = `${m.base}/actors/zoe/statuses/2`;
    const note = zoesNote("2", quoted.id, yansStamp("2", quotingUri, quoted.id));
    const id = await zoeCreates(note);
    const { quote: _q, quoteAuthorization: _s, ...without } = note;
    await zoeUpdates({ ...without, id: note.id }, 1);
    expect(await quoteOf(id)).toMatchObject({ state: "accepted", quotedStatusId: (await rowByUri(quoted.id))!.id });
    // Nor does one quoting another post.
    const other = yansPost("2b");
    await zoeUpdates({ ...note, quote: other.id }, 2);
    expect((await quoteOf(id))?.quotedUri).toBe(quoted.id);
    expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(1);
  });
});

describe("an edit quoting another post", () => {
  test("replaces the quote, checked anew: the new one accepted on its stamp, counted there and not on the old one; without a proving stamp, pending", async () => {
    const first = yansPost("3");
    const second = yansPost("4");
    const quotingUri = `${m.base}/actors/zoe/statuses/3`;
    const note = zoesNote("3", first.id, yansStamp("3", quotingUri, first.id));
    const id = await zoeCreates(note);
    const before = (await quoteOf(id))!;
    expect(before.state).toBe("accepted");

    await zoeUpdates({ ...note, quote: second.id, quoteAuthorization: yansStamp("4", quotingUri, second.id), updated: edited(1) }, 1);
    const after = (await quoteOf(id))!;
    expect(after.id).not.toBe(before.id);
    expect(after).toMatchObject({ state: "accepted", quotedStatusId: (await rowByUri(second.id))!.id, quotedUri: second.id });
    expect([(await quotesCount((await rowByUri(first.id))!.id)), (await quotesCount((await rowByUri(second.id))!.id))]).toEqual([0, 1]);
    expect((await alice.client.get(`/api/v1/statuses/${id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: second.id } });

    // Back to the first post, naming the second's stamp: proves nothing, pending, uncounted.
    await zoeUpdates({ ...note, quoteAuthorization: `${m.base}/actors/yan/quote_authorizations/4`, updated: edited(2) }, 2);
    expect(await quoteOf(id)).toMatchObject({ state: "pending", quotedUri: first.id });
    expect([(await quotesCount((await rowByUri(first.id))!.id)), (await quotesCount((await rowByUri(second.id))!.id))]).toEqual([0, 0]);
  });

  test("a quote of alice's post accepted here, edited to quote another: alice's stamp is revoked and its Delete sent, her count goes back", async () => {
    const posted = await postStatus(alice, { status: "quote me, Mastodon", visibility: "public" });
    const instrument = zoesNote("5", posted.uri, null);
    const requestId = `${m.base}/actors/zoe/quote_requests/5`;
    expect((await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: requestId, type: "QuoteRequest", object: posted.uri, instrument })).status).toBeLessThan(300);
    const accept = await eventually(() => m.received.find((r) => r.body?.type === "Accept" && r.body?.object?.id === requestId), "alice's Accept");
    const stampUri: string = accept.body.result;
    const id = (await rowByUri(instrument.id))!.id;
    expect((await quoteOf(id))?.state).toBe("accepted");
    expect(await quotesCount(Number(posted.id))).toBe(1);

    const other = yansPost("5");
    await zoeUpdates({ ...instrument, quote: other.id, quoteAuthorization: yansStamp("5", instrument.id, other.id), updated: edited(1) }, 1);
    const deleted = await eventually(() => m.received.find((r) => r.body?.type === "Delete" && r.body?.object?.id === stampUri), "the Delete of alice's stamp");
    expect(deleted.path).toBe("/actors/zoe/inbox");
    expect(await quotesCount(Number(posted.id))).toBe(0);
    expect((await fetch(stampUri)).status).toBe(404);
    expect(await quoteOf(id)).toMatchObject({ state: "accepted", quotedUri: other.id });
    expect((await alice.client.get(`/api/v1/statuses/${posted.id}/quotes`)).body).toEqual([]);
  });
});
