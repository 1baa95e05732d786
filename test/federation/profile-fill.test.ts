import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startThreadServer } from "../support/thread-server.ts";

// Following a remote account, or opening its profile while little of it is known, fetches its
// pinned posts (featured) and its newest public posts (outbox), bounded and once a day, so that
// the profile is not empty; none of them goes into a home timeline.

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

let a: TestServer;
let alice: TestUser;
let remote: Awaited<ReturnType<typeof startThreadServer>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  remote = await startThreadServer("127.0.0.33");
});
afterAll(async () => {
  await a?.close();
  remote?.stop();
});

const storedOf = async (actor: string) =>
  (await a.database.port.all<{ uri: string }>("SELECT s.uri FROM statuses s JOIN accounts ac ON ac.id = s.account_id WHERE ac.uri = ? ORDER BY s.uri", [actor])).map((r) => r.uri);

/**
 * An actor with an outbox of `posts` public posts (Creates with their Notes embedded, 15 a
 * page, newest first, as Mastodon pages it) among which a boost and a followers-only post, and
 * a featured collection of two pinned posts, one older than the outbox's first pages.
 */
function actorWithHistory(name: string, posts = 45) {
  const actor = `${remote.base}/actors/${name}`;
  const note = (i: number, extra: Record<string, unknown> = {}) => remote.note(`${remote.base}/${name}/posts/${i}`, actor, `${name} post ${i}`, { published: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(), ...extra });
  for (let i = 0; i < posts; i++) remote.route(`/${name}/posts/${i}`, note(i));
  const items = Array.from({ length: posts }, (_, k) => posts - 1 - k).map((i) => {
    if (i === posts - 2) return { id: `${remote.base}/${name}/boosts/1`, type: "Announce", actor, to: [PUBLIC], object: `${remote.base}/elsewhere/1` };
    const object = i === posts - 3 ? note(i, { to: [`${actor}/followers`], cc: [] }) : note(i);
    return { id: `${remote.base}/${name}/posts/${i}/activity`, type: "Create", actor, to: object.to, cc: object.cc, object };
  });
  const pages = Math.ceil(items.length / 15);
  for (let n = 0; n < pages; n++) {
    remote.route(`/${name}/outbox?page=${n}`, {
      id: `${remote.base}/${name}/outbox?page=${n}`,
      type: "OrderedCollectionPage",
      partOf: `${remote.base}/${name}/outbox`,
      orderedItems: items.slice(n * 15, n * 15 + 15),
      ...(n + 1 < pages ? { next: `${remote.base}/${name}/outbox?page=${n + 1}` } : {}),
    });
  }
  remote.route(`/${name}/outbox`, { id: `${remote.base}/${name}/outbox`, type: "OrderedCollection", totalItems: posts, first: `${remote.base}/${name}/outbox?page=0` });
  remote.route(`/${name}/featured`, { id: `${remote.base}/${name}/featured`, type: "OrderedCollection", totalItems: 2, orderedItems: [note(1), `${remote.base}/${name}/posts/${posts - 1}`] });
  remote.actor(name, { outbox: `${remote.base}/${name}/outbox`, featured: `${remote.base}/${name}/featured` });
  return { actor, post: (i: number) => `${remote.base}/${name}/posts/${i}` };
}

async function accountId(actor: string): Promise<string> {
  const res = await alice.client.get("/api/v2/search", { query: { q: actor, resolve: "true", type: "accounts" } });
  expect(res.body.accounts).toHaveLength(1);
  return res.body.accounts[0].id;
}

describe("a remote profile's history", () => {
  test("following fetches the pinned posts and the 20 newest public posts; the accepted follow brings none of them into home", async () => {
    const frank = actorWithHistory("frank");
    const id = await accountId(frank.actor);
    expect(await storedOf(frank.actor)).toEqual([]);
    const follow = await alice.client.post(`/api/v1/accounts/${id}/follow`, {});
    expect(follow.status).toBe(200);
    // The fill is set off after the follow's commit: on PostgreSQL it may not be queued yet
    // when the answer arrives, so what it keeps is awaited before the queue is drained.
    await eventually(async () => (await storedOf(frank.actor)).length >= 21, "frank's history kept", 20_000);
    await a.ctx.services.accountHistory.idle();
    const kept = await storedOf(frank.actor);
    // The newest 20 public posts of the outbox's first two pages (44 down to 22, less the
    // boost at 43 and the followers-only post at 42), and the older pinned post 1.
    const newest = [44, ...Array.from({ length: 19 }, (_, k) => 41 - k)].map(frank.post);
    expect(kept).toEqual([...newest, frank.post(1)].sort());
    // Two outbox pages at most.
    expect(remote.count("/frank/outbox?page=2")).toBe(0);
    const pinned = await alice.client.get(`/api/v1/accounts/${id}/statuses`, { query: { pinned: "true" } });
    expect(pinned.body.map((s: any) => s.uri)).toEqual([frank.post(1), frank.post(44)]);

    // frank accepts: the follow is made, and nothing fetched enters alice's home timeline.
    const sent = await eventually(() => remote.posted.find((p) => p.type === "Follow"), "the Follow to arrive");
    const accepted = await remote.post(`${a.base}/users/alice/inbox`, frank.actor, { id: `${frank.actor}#accepts/1`, type: "Accept", object: sent });
    expect(accepted.status).toBeLessThan(300);
    await eventually(async () => (await alice.client.get(`/api/v1/accounts/relationships`, { query: { id } })).body[0]?.following === true, "the follow to be accepted");
    const home = await alice.client.get("/api/v1/timelines/home");
    expect(home.body.filter((s: any) => s.account.id === id)).toEqual([]);
    // Nor was anything fetched twice, or again for the accepted follow.
    expect(remote.count("/frank/outbox?page=0")).toBe(1);
  });

  test("opening a little-known profile fills it before answering; once a day; an anonymous reader sets off nothing", async () => {
    const gina = actorWithHistory("gina", 8);
    const id = await accountId(gina.actor);
    const anonymous = await fetch(`${a.base}/api/v1/accounts/${id}/statuses`);
    expect(await anonymous.json()).toEqual([]);
    expect(remote.count("/gina/outbox")).toBe(0);

    const opened = await alice.client.get(`/api/v1/accounts/${id}/statuses`);
    expect(opened.status).toBe(200);
    // 8 posts less the boost and the followers-only one.
    expect(opened.body).toHaveLength(6);
    const asked = remote.gets.length;
    expect((await alice.client.get(`/api/v1/accounts/${id}/statuses`)).body).toHaveLength(6);
    expect(remote.gets.length).toBe(asked);
    // A day later, it is asked again.
    a.clock.set(a.clock.now() + 25 * 60 * 60 * 1000);
    await alice.client.get(`/api/v1/accounts/${id}/statuses`);
    expect(remote.gets.length).toBeGreaterThan(asked);
  });
});

describe("what a hostile profile lists is not fetched elsewhere", () => {
  test("an outbox and a featured collection naming posts on a third server: that server is asked nothing, nothing of it is kept or pinned; the account's own posts are", async () => {
    const third = await startThreadServer("127.0.0.34");
    try {
      const victim = third.actor("vic");
      // Genuine posts of the third server's account, served there: what a profile on another server names of them proves nothing.
      const foreign = Array.from({ length: 60 }, (_, i) => third.route(`/vic/posts/${i}`, third.note(`${third.base}/vic/posts/${i}`, victim, `vic ${i}`)));
      const actor = `${remote.base}/actors/hugo`;
      const own = remote.route("/hugo/posts/1", remote.note(`${remote.base}/hugo/posts/1`, actor, "hugo's own"));
      remote.route("/hugo/outbox", { id: `${remote.base}/hugo/outbox`, type: "OrderedCollection", orderedItems: [...foreign, own] });
      remote.route("/hugo/featured", { id: `${remote.base}/hugo/featured`, type: "OrderedCollection", orderedItems: [foreign[0], foreign[1], own] });
      remote.actor("hugo", { outbox: `${remote.base}/hugo/outbox`, featured: `${remote.base}/hugo/featured` });
      const id = await accountId(actor);
      const opened = await alice.client.get(`/api/v1/accounts/${id}/statuses`);
      expect(opened.status).toBe(200);
      await a.ctx.services.accountHistory.idle();
      expect(third.gets).toEqual([]);
      expect(await storedOf(victim)).toEqual([]);
      expect(await storedOf(actor)).toEqual([own]);
      const pinned = await alice.client.get(`/api/v1/accounts/${id}/statuses`, { query: { pinned: "true" } });
      expect(pinned.body.map((s: any) => s.uri)).toEqual([own]);
    } finally {
      third.stop();
    }
  });
});
