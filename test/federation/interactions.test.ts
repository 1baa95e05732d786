import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Announce, Like, Note, PUBLIC_COLLECTION, Undo } from "@fedify/fedify/vocab";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let eve: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let remoteAliceOnB: { id: number };
let bobHandle: string;

const statusByUri = (server: TestServer, uri: string) => server.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri]);
const count = async (server: TestServer, sql: string, ...params: (string | number)[]) => (await server.database.port.get<{ n: number }>(sql, params))!.n;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  eve = await createUser(b, "eve");
  receiver = await startReceiver("127.0.0.7");
  // bob and eve follow alice, so her posts reach B.
  remoteAliceOnB = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
  for (const user of [bob, eve]) {
    await user.client.post(`/api/v1/accounts/${remoteAliceOnB.id}/follow`);
    await eventually(async () => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteAliceOnB.id) } })).body[0]?.following === true, "following alice");
  }
  bobHandle = `bob@${new URL(b.base).host}`;
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  receiver?.stop();
});

/** alice posts; the status id on B once it has arrived. */
async function aliceTells(text: string) {
  const post = await postStatus(alice, { status: text, visibility: "public" });
  const onB = await eventually(() => statusByUri(b, post.uri), "the post on B");
  return { post, onB: String(onB.id) };
}

describe("favourites travel as Like", () => {
  test("bob's favourite counts on A and notifies alice; unfavouriting takes both back", async () => {
    const { post, onB } = await aliceTells("Like this one");
    expect((await bob.client.post(`/api/v1/statuses/${onB}/favourite`)).body.favourited).toBe(true);
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${post.id}`)).body.favourites_count === 1, "counted on A");
    const notification = (await alice.client.get("/api/v1/notifications", { query: { "types[]": "favourite" } })).body;
    expect(notification.map((n: any) => [n.account.acct, n.status.id])).toEqual([[bobHandle, post.id]]);
    const favouritedBy = (await alice.client.get(`/api/v1/statuses/${post.id}/favourited_by`)).body;
    expect(favouritedBy.map((x: any) => x.acct)).toEqual([bobHandle]);

    expect((await bob.client.post(`/api/v1/statuses/${onB}/unfavourite`)).body.favourited).toBe(false);
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${post.id}`)).body.favourites_count === 0, "uncounted on A");
    expect((await alice.client.get("/api/v1/notifications", { query: { "types[]": "favourite" } })).body).toEqual([]);
  });

  test("a Like repeated is counted once; an Undo of bob's Like sent by someone else changes nothing", async () => {
    const { post } = await aliceTells("Count me once");
    const ctx = receiver;
    const like = new Like({ id: new URL(`${receiver.base}/likes/1`), actor: new URL(receiver.actor), object: new URL(post.uri) });
    const inbox = { id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` };
    await ctx.send(inbox, like);
    await ctx.send(inbox, new Like({ id: new URL(`${receiver.base}/likes/2`), actor: new URL(receiver.actor), object: new URL(post.uri) }));
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${post.id}`)).body.favourites_count === 1, "carol's like counted");
    // carol sends an Undo of a Like that claims to be bob's: not hers to take back.
    const bobsLike = new Like({ id: new URL(`${b.base}/users/bob#likes/forged`), actor: new URL(`${b.base}/users/bob`), object: new URL(post.uri) });
    await ctx.send(inbox, new Undo({ id: new URL(`${receiver.base}/undo/1`), actor: new URL(receiver.actor), object: bobsLike }));
    await a.federation!.idle();
    expect((await alice.client.get(`/api/v1/statuses/${post.id}`)).body.favourites_count).toBe(1);
    await ctx.send(inbox, new Undo({ id: new URL(`${receiver.base}/undo/2`), actor: new URL(receiver.actor), object: like }));
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${post.id}`)).body.favourites_count === 0, "carol's like undone");
  });
});

describe("boosts travel as Announce", () => {
  test("bob's boost counts on A, notifies alice and shows who boosted; unboosting takes it back", async () => {
    const { post, onB } = await aliceTells("Boost this");
    const boosted = await bob.client.post(`/api/v1/statuses/${onB}/reblog`);
    expect(boosted.status).toBe(200);
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${post.id}`)).body.reblogs_count === 1, "counted on A");
    const notification = (await alice.client.get("/api/v1/notifications", { query: { "types[]": "reblog" } })).body;
    expect(notification.map((n: any) => [n.account.acct, n.status.id])).toEqual([[bobHandle, post.id]]);
    expect((await alice.client.get(`/api/v1/statuses/${post.id}/reblogged_by`)).body.map((x: any) => x.acct)).toEqual([bobHandle]);

    expect((await bob.client.post(`/api/v1/statuses/${onB}/unreblog`)).status).toBe(200);
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${post.id}`)).body.reblogs_count === 0, "uncounted on A");
    expect((await alice.client.get("/api/v1/notifications", { query: { "types[]": "reblog" } })).body).toEqual([]);
    expect(await count(a, "SELECT count(*) AS n FROM statuses WHERE reblog_of_id = ?", Number(post.id))).toBe(0);
  });

  test("alice boosts a note of a third server: B fetches it from there and shows the boost in bob's home", async () => {
    const { Temporal } = await import("@js-temporal/polyfill");
    const noteUri = receiver.serveNote("boosted", (id) => new Note({ id, attribution: new URL(receiver.actor), content: "<p>carol's words</p>", to: PUBLIC_COLLECTION, published: Temporal.Now.instant() }));
    const found = await alice.client.get("/api/v2/search", { query: { q: noteUri, resolve: "true" } });
    expect(found.body.statuses).toHaveLength(1);
    const boost = await alice.client.post(`/api/v1/statuses/${found.body.statuses[0].id}/reblog`);
    expect(boost.status).toBe(200);
    const shown = await eventually(async () => (await bob.client.get("/api/v1/timelines/home")).body.find((s: any) => s.reblog?.uri === noteUri), "the boost in bob's home");
    expect(shown.account.acct).toBe(`alice@${new URL(a.base).host}`);
    expect(shown.reblog.account.acct).toBe(`carol@${new URL(receiver.base).host}`);
    expect(shown.reblog.content).toBe("<p>carol's words</p>");
    // carol's server heard of it too: the boosted author gets the Announce.
    await a.federation!.idle();
    expect(receiver.received.some((x) => x instanceof Announce)).toBe(true);

    // alice takes it back: the boost leaves bob's home.
    await alice.client.post(`/api/v1/statuses/${found.body.statuses[0].id}/unreblog`);
    await eventually(async () => !(await bob.client.get("/api/v1/timelines/home")).body.some((s: any) => s.reblog?.uri === noteUri), "the boost gone from bob's home");
  });

  test("an Announce whose id is on another server than its actor, or of a status it may not see, stores nothing", async () => {
    const secret = await postStatus(alice, { status: "followers only", visibility: "private" });
    const inbox = { id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` };
    const before = await count(a, "SELECT count(*) AS n FROM statuses");
    await receiver.send(inbox, new Announce({ id: new URL(`${b.base}/forged/announce`), actor: new URL(receiver.actor), object: new URL(secret.uri), to: PUBLIC_COLLECTION }));
    await receiver.send(inbox, new Announce({ id: new URL(`${receiver.base}/announces/1`), actor: new URL(receiver.actor), object: new URL(secret.uri), to: PUBLIC_COLLECTION }));
    // A later Like (which does count) proves both Announces were handled before it.
    const pub = await postStatus(alice, { status: "public one", visibility: "public" });
    await receiver.send(inbox, new Like({ id: new URL(`${receiver.base}/likes/marker`), actor: new URL(receiver.actor), object: new URL(pub.uri) }));
    await eventually(async () => (await alice.client.get(`/api/v1/statuses/${pub.id}`)).body.favourites_count === 1, "the marker Like");
    expect(await count(a, "SELECT count(*) AS n FROM statuses")).toBe(before + 1);
    expect((await alice.client.get(`/api/v1/statuses/${secret.id}`)).body.reblogs_count).toBe(0);
  });
});

describe("pins travel as Add and Remove", () => {
  test("alice pins a post and B shows it pinned on her profile; unpinning takes it off; carol cannot pin alice's post there", async () => {
    const { post, onB } = await aliceTells("Pin me");
    const pinnedOnB = async () => (await bob.client.get(`/api/v1/accounts/${remoteAliceOnB.id}/statuses`, { query: { pinned: "true" } })).body.map((s: any) => s.uri);
    expect((await alice.client.post(`/api/v1/statuses/${post.id}/pin`)).status).toBe(200);
    await eventually(async () => (await pinnedOnB()).includes(post.uri), "pinned on B");
    expect((await bob.client.get(`/api/v1/statuses/${onB}`)).body.uri).toBe(post.uri);

    expect((await alice.client.post(`/api/v1/statuses/${post.id}/unpin`)).status).toBe(200);
    await eventually(async () => (await pinnedOnB()).length === 0, "unpinned on B");

    // carol claims alice's featured collection for alice's post: not hers to change.
    const { Add } = await import("@fedify/fedify/vocab");
    await receiver.send({ id: `${b.base}/users/bob`, inbox: `${b.base}/users/bob/inbox` }, new Add({ id: new URL(`${receiver.base}/adds/1`), actor: new URL(receiver.actor), object: new URL(post.uri), target: new URL(`${a.base}/users/alice/featured`) }));
    await b.federation!.idle();
    // A later pin by alice arriving proves carol's Add was handled first.
    const { post: later } = await aliceTells("Pin me instead");
    await alice.client.post(`/api/v1/statuses/${later.id}/pin`);
    await eventually(async () => (await pinnedOnB()).includes(later.uri), "the later pin on B");
    expect(await pinnedOnB()).toEqual([later.uri]);
  });
});
