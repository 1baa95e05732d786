import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { mastodonNote, mastodonStamp, NOTE_CONTEXT, PUBLIC } from "../support/mastodon-quotes.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { delivered, SseClient } from "../support/streams.ts";
import { drain } from "../support/wait.ts";

/**
 * Remote quotes that could not be settled for want of an answer are checked again later, as
 * Mastodon's RefetchAndVerifyQuoteWorker does: a stamp whose server answers 503, a quoted post
 * that could not be fetched. Four checks at most after the first, 30 s to 10 min later, then 15 s,
 * 25-35 s and 175-335 s apart; then the quote stays pending. A stamped quote unchecked for a week
 * is checked again when a signed-in reader opens it (Quote#schedule_refresh_if_stale!).
 */
let a: TestServer;
let alice: TestUser;
let m: Awaited<ReturnType<typeof startRawServer>>;
let zoe: string;
let yan: string;
let inbox: string;

const SECOND = 1000;
const rowByUri = async (uri: string) => (await a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri])) ?? null;
const quoteOf = async (statusId: number) => (await a.database.port.orm.select().from(a.database.port.tables.quotes).where(eq(a.database.port.tables.quotes.statusId, statusId)).limit(1))[0];
const waiting = (quoteId: number) => a.ctx.services.quoteChecks.waiting(quoteId);
const quotesCount = async (statusId: number) => (await a.database.port.get<{ n: number }>("SELECT quotes_count AS n FROM statuses WHERE id = ?", [statusId]))?.n;
const asked = (path: string) => m.asked.filter((p) => p === path).length;

/** Moves A's clock and lets what came due (the checks, their fetches) finish. */
async function later(ms: number) {
  a.clock.advance(ms);
  await drain(a);
}

/** zoe's public Create of a Note quoting `quotedUri` with the stamp at `stampUri`, mentioning alice so that it concerns someone here. */
async function zoeQuotes(n: string, quotedUri: string, stampUri: string | null) {
  const document = mastodonNote(m, zoe, `/actors/zoe/statuses/${n}`, { quote: quotedUri, ...(stampUri ? { quoteAuthorization: stampUri } : {}) });
  const mention = { type: "Mention", href: `${a.base}/users/alice`, name: `@alice@${new URL(a.base).host}` };
  const object = { ...document, cc: [...document.cc, `${a.base}/users/alice`], tag: [mention] };
  expect((await m.post(inbox, zoe, { "@context": NOTE_CONTEXT, id: `${document.id}/activity`, type: "Create", to: [PUBLIC], object })).status).toBeLessThan(300);
  const row = await eventually(() => rowByUri(document.id), `${document.id} stored`);
  return { id: row.id, uri: document.id, quote: await eventually(() => quoteOf(row.id), "its quote") };
}

const stampOf = (n: string, quotingUri: string, quotedUri: string) => mastodonStamp(m, `/actors/yan/quote_authorizations/${n}`, { attributedTo: yan, interactingObject: quotingUri, interactionTarget: quotedUri });

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.81", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  inbox = `${a.base}/users/alice/inbox`;
  m = await startRawServer("127.0.0.82");
  zoe = m.actor("zoe", "zoe", { followers: `${m.base}/actors/zoe/followers` });
  yan = m.actor("yan", "yan", { followers: `${m.base}/actors/yan/followers` });
});
afterAll(async () => {
  await a?.close();
  m?.stop();
});

describe("a quote checked again when its stamp's server did not answer", () => {
  test("503 for the stamp: pending and asked again 30 s to 10 min later; still down, again 15 s later; once served, accepted, counted, and streamed again", async () => {
    const quoted = mastodonNote(m, yan, "/actors/yan/statuses/1");
    const stampPath = "/actors/yan/quote_authorizations/1";
    const stampUri = m.unavailable(stampPath);
    const before = a.clock.now();
    const quoting = await zoeQuotes("1", quoted.id, stampUri);
    expect(quoting.quote).toMatchObject({ state: "pending", approvalUri: stampUri });
    const first = (await waiting(quoting.quote.id))!;
    expect(first.attempts).toBe(0);
    expect(first.dueAt).toBeGreaterThanOrEqual(before + 30 * SECOND);
    expect(first.dueAt).toBeLessThanOrEqual(a.clock.now() + 600 * SECOND);
    // One check is one fetch (which Fedify may knock twice with, in two signature formats).
    const perCheck = asked(stampPath);
    expect(perCheck).toBeGreaterThanOrEqual(1);

    await later(601 * SECOND);
    expect(asked(stampPath)).toBe(2 * perCheck);
    expect((await quoteOf(quoting.id))?.state).toBe("pending");
    expect((await waiting(quoting.quote.id))?.attempts).toBe(1);

    const stream = await SseClient.open(`${a.base}/api/v1/streaming/public`);
    try {
      stampOf("1", quoting.uri, quoted.id);
      await later(16 * SECOND);
      expect((await quoteOf(quoting.id))?.state).toBe("accepted");
      expect(await waiting(quoting.quote.id)).toBeUndefined();
      expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(1);
      expect((await alice.client.get(`/api/v1/statuses/${quoting.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: quoted.id } });
      await delivered(a, stream);
      const updates = stream.events.filter((e) => e.event === "status.update").map((e) => JSON.parse(e.data!));
      expect(updates.map((s) => [s.id, s.quote?.state])).toEqual([[String(quoting.id), "accepted"]]);
    } finally {
      stream.close();
    }
  });

  test("bounded: a stamp never served is asked for four times after the first, then the quote stays pending and nothing more is asked", async () => {
    const quoted = mastodonNote(m, yan, "/actors/yan/statuses/2");
    const stampPath = "/actors/yan/quote_authorizations/2";
    const quoting = await zoeQuotes("2", quoted.id, m.unavailable(stampPath));
    const perCheck = asked(stampPath);
    for (const [wait, attempts] of [[601, 1], [16, 2], [36, 3]] as const) {
      await later(wait * SECOND);
      expect((await waiting(quoting.quote.id))?.attempts).toBe(attempts);
    }
    await later(336 * SECOND);
    expect(await waiting(quoting.quote.id)).toBeUndefined();
    expect(asked(stampPath)).toBe(5 * perCheck);
    expect((await quoteOf(quoting.id))?.state).toBe("pending");
    await later(3600 * SECOND);
    expect(asked(stampPath)).toBe(5 * perCheck);
  });

  test("a stamp whose server then says it is not there (404) refuses the quote; one that answered 404 at first is not asked again", async () => {
    const quoted = mastodonNote(m, yan, "/actors/yan/statuses/3");
    const stampPath = "/actors/yan/quote_authorizations/3";
    const quoting = await zoeQuotes("3", quoted.id, m.unavailable(stampPath));
    m.forget(stampPath);
    await later(601 * SECOND);
    expect((await quoteOf(quoting.id))?.state).toBe("rejected");
    expect(await waiting(quoting.quote.id)).toBeUndefined();

    const gone = await zoeQuotes("3b", quoted.id, `${m.base}/actors/yan/quote_authorizations/never`);
    expect(gone.quote.state).toBe("rejected");
    expect(await waiting(gone.quote.id)).toBeUndefined();
  });
});

describe("a quote checked again when its quoted post could not be fetched", () => {
  test("the quoted post's server down: pending with its IRI only; fetched on the check again, and its stamp then accepts the quote", async () => {
    const quotedPath = "/actors/yan/statuses/4";
    const quotedUri = m.unavailable(quotedPath);
    const quotingUri = `${m.base}/actors/zoe/statuses/4`;
    const stampUri = stampOf("4", quotingUri, quotedUri);
    const quoting = await zoeQuotes("4", quotedUri, stampUri);
    expect(quoting.quote).toMatchObject({ state: "pending", quotedStatusId: null, quotedUri });
    expect(await rowByUri(quotedUri)).toBeNull();
    expect((await waiting(quoting.quote.id))?.attempts).toBe(0);

    mastodonNote(m, yan, quotedPath);
    await later(601 * SECOND);
    const quotedRow = (await rowByUri(quotedUri))!;
    expect(await quoteOf(quoting.id)).toMatchObject({ state: "accepted", quotedStatusId: quotedRow.id, approvalUri: stampUri });
    expect(await waiting(quoting.quote.id)).toBeUndefined();
    expect((await alice.client.get(`/api/v1/statuses/${quoting.id}`)).body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: quotedUri } });
  });

});

describe("a stamped quote unchecked for a week", () => {
  test("is checked again within six hours of a signed-in reader opening it (not of an anonymous one); its stamp gone, the accepted quote is revoked", async () => {
    const quoted = mastodonNote(m, yan, "/actors/yan/statuses/6");
    const quotingUri = `${m.base}/actors/zoe/statuses/6`;
    const stampPath = "/actors/yan/quote_authorizations/6";
    const quoting = await zoeQuotes("6", quoted.id, stampOf("6", quotingUri, quoted.id));
    expect(quoting.quote.state).toBe("accepted");
    expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(1);

    // Read within the week: nothing to check.
    await alice.client.get(`/api/v1/statuses/${quoting.id}`);
    expect(await waiting(quoting.quote.id)).toBeUndefined();
    await later(8 * 24 * 3600 * SECOND);
    expect((await fetch(`${a.base}/api/v1/statuses/${quoting.id}`)).status).toBe(200);
    expect(await waiting(quoting.quote.id)).toBeUndefined();
    await alice.client.get(`/api/v1/statuses/${quoting.id}`);
    const due = (await waiting(quoting.quote.id))!;
    expect(due.dueAt).toBeLessThanOrEqual(a.clock.now() + 6 * 3600 * SECOND);

    m.forget(stampPath);
    await later(6 * 3600 * SECOND + SECOND);
    expect((await quoteOf(quoting.id))?.state).toBe("revoked");
    expect(await quotesCount((await rowByUri(quoted.id))!.id)).toBe(0);
    // Checked now: another read asks for nothing more.
    await alice.client.get(`/api/v1/statuses/${quoting.id}`);
    expect(await waiting(quoting.quote.id)).toBeUndefined();
  });
});

describe("a restart", () => {
  test("a check waiting when the server stops is made after it starts again", async () => {
    const quoted = mastodonNote(m, yan, "/actors/yan/statuses/5");
    const stampPath = "/actors/yan/quote_authorizations/5";
    const quoting = await zoeQuotes("5", quoted.id, m.unavailable(stampPath));
    // The last test: the restarted server listens elsewhere, which the others' clients do not know.
    a = await a.restart();
    stampOf("5", quoting.uri, quoted.id);
    await later(601 * SECOND);
    expect((await quoteOf(quoting.id))?.state).toBe("accepted");
  });
});
