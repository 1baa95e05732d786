import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startThreadServer } from "../support/thread-server.ts";

// Quotes another server makes up to have this one fetch without end: a chain of quotes a
// hundred deep, and two posts quoting each other. A post is stored with the posts it quotes
// fetched two deep at most (Mastodon's VerifyQuoteService::MAX_SYNCHRONOUS_DEPTH); what lies
// deeper is named by its IRI.

const CONTEXT = ["https://www.w3.org/ns/activitystreams", { quote: "https://w3id.org/fep/044f#quote", Hashtag: "as:Hashtag" }];

let a: TestServer;
let alice: TestUser;
let remote: Awaited<ReturnType<typeof startThreadServer>>;
let quin: string;

const stored = async (uri: string) => (await a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri])) ?? null;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.155", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  remote = await startThreadServer("127.0.0.156");
  quin = remote.actor("quin");
});
afterAll(async () => {
  await a?.close();
  remote?.stop();
});

/** quin's post at `path` quoting `quoted`, served there. */
function quoting(path: string, quoted: string): string {
  const id = `${remote.base}${path}`;
  remote.route(path, { "@context": CONTEXT, ...remote.note(id, quin, path), quote: quoted });
  return id;
}

/** quin's Create of `id` (its Note as served), mentioning alice so that it concerns someone here. */
async function delivered(path: string) {
  const note: Record<string, unknown> = { ...remote.documentAt(path), tag: [{ type: "Mention", href: `${a.base}/users/alice` }] };
  const res = await remote.post(`${a.base}/users/alice/inbox`, quin, { "@context": CONTEXT, id: `${String(note.id)}/activity`, type: "Create", object: note });
  expect(res.status).toBe(202);
}

describe("quotes made up to be fetched without end", () => {
  test("a chain of quotes a hundred deep: two posts below the one delivered are fetched, the third is not asked for", async () => {
    const chain = Array.from({ length: 100 }, (_, i) => `/chain/${i}`);
    chain.forEach((path, i) => quoting(path, `${remote.base}${chain[i + 1] ?? "/chain/end"}`));
    await delivered(chain[0]!);
    expect(await stored(`${remote.base}/chain/0`)).not.toBeNull();
    expect(remote.gets.filter((g) => g.startsWith("/chain/"))).toEqual(["/chain/1", "/chain/2"]);
    expect(await stored(`${remote.base}/chain/2`)).not.toBeNull();
    expect(await stored(`${remote.base}/chain/3`)).toBeNull();
    const shown = await alice.client.get(`/api/v1/statuses/${(await stored(`${remote.base}/chain/0`))!.id}`);
    expect(shown.body.quote).toMatchObject({ state: "accepted", quoted_status: { uri: `${remote.base}/chain/1` } });
  });

  test("two posts quoting each other: each is fetched once at most and stored once; the delivery is answered", async () => {
    quoting("/cycle/1", `${remote.base}/cycle/2`);
    quoting("/cycle/2", `${remote.base}/cycle/1`);
    await delivered("/cycle/1");
    expect(remote.gets.filter((g) => g.startsWith("/cycle/")).length).toBeLessThanOrEqual(2);
    const rows = await a.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE uri LIKE ?", [`${remote.base}/cycle/%`]);
    expect(rows?.n).toBe(2);
    // The cycle is cut where the depth runs out: 2 shows 1 (stored while 2 was), 1 its quote of a post not yet stored then.
    const two = await alice.client.get(`/api/v1/statuses/${(await stored(`${remote.base}/cycle/2`))!.id}`);
    expect(two.body.quote.quoted_status.uri).toBe(`${remote.base}/cycle/1`);
    const one = await alice.client.get(`/api/v1/statuses/${(await stored(`${remote.base}/cycle/1`))!.id}`);
    expect(one.body.quote).toEqual({ state: "pending", quoted_status: null });
  });
});
