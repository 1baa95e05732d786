import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser, postStatus } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let anon: Client;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const post = postStatus;

const NOT_FOUND = { error: "Record not found" };

describe("favourite and unfavourite", () => {
  test("favourited flips, the count follows, and both are idempotent", async () => {
    const s = await post(alice, { status: "like me" });
    const fav = await bob.client.post(`/api/v1/statuses/${s.id}/favourite`);
    expect(fav.status).toBe(200);
    expect(fav.body).toMatchObject({ id: s.id, favourited: true, favourites_count: 1 });
    const again = await bob.client.post(`/api/v1/statuses/${s.id}/favourite`);
    expect(again.body).toMatchObject({ favourited: true, favourites_count: 1 });
    expect((await alice.client.get(`/api/v1/statuses/${s.id}`)).body.favourited).toBe(false);
    const unfav = await bob.client.post(`/api/v1/statuses/${s.id}/unfavourite`);
    expect(unfav.body).toMatchObject({ favourited: false, favourites_count: 0 });
    const unfavAgain = await bob.client.post(`/api/v1/statuses/${s.id}/unfavourite`);
    expect(unfavAgain.status).toBe(200);
    expect(unfavAgain.body).toMatchObject({ favourited: false, favourites_count: 0 });
  });
});

describe("reblog and unreblog", () => {
  test("a boost wrapper with its own id; the original inside; unreblog returns the original", async () => {
    const s = await post(alice, { status: "boost me" });
    const res = await bob.client.post(`/api/v1/statuses/${s.id}/reblog`);
    expect(res.status).toBe(200);
    expect(res.body.id).not.toBe(s.id);
    expect(res.body.reblog.id).toBe(s.id);
    expect(res.body.reblog.reblogs_count).toBe(1);
    expect(res.body.reblog.reblogged).toBe(true);
    expect(res.body.reblogged).toBe(true);
    expect(res.body.account.id).toBe(bob.id);
    expect(res.body.content).toBe("");
    expect(res.body.visibility).toBe("public");
    expect(res.body.uri).toBe(`${server.base}/users/bob/statuses/${res.body.id}/activity`);
    const again = await bob.client.post(`/api/v1/statuses/${s.id}/reblog`);
    expect(again.body.id).toBe(res.body.id);
    const viaWrapper = await bob.client.post(`/api/v1/statuses/${res.body.id}/reblog`);
    expect(viaWrapper.body.id).toBe(res.body.id);
    expect((await anon.get(`/api/v1/statuses/${res.body.id}`)).body.reblog.id).toBe(s.id);

    const undo = await bob.client.post(`/api/v1/statuses/${s.id}/unreblog`);
    expect(undo.status).toBe(200);
    expect(undo.body).toMatchObject({ id: s.id, reblogged: false, reblogs_count: 0 });
    expect((await anon.get(`/api/v1/statuses/${res.body.id}`)).status).toBe(404);
    const none = await bob.client.post(`/api/v1/statuses/${s.id}/unreblog`);
    expect(none.status).toBe(404);
    expect(none.body).toEqual(NOT_FOUND);
  });

  test("visibility parameter: public, unlisted, private; never direct or limited", async () => {
    const s = await post(alice, { status: "boost with visibility" });
    const users = await Promise.all(["v1", "v2", "v3"].map((n) => createUser(server, n)));
    for (const [user, visibility] of [[users[0]!, "unlisted"], [users[1]!, "private"]] as const) {
      const res = await user.client.post(`/api/v1/statuses/${s.id}/reblog`, { form: { visibility } });
      expect(res.body.visibility).toBe(visibility);
    }
    for (const [visibility, message] of [["direct", "Validation failed: Visibility is reserved"], ["limited", "Validation failed: Visibility is reserved"], ["bogus", "Validation failed: Visibility is not included in the list"]]) {
      const res = await users[2]!.client.post(`/api/v1/statuses/${s.id}/reblog`, { json: { visibility } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: message });
    }
  });

  test("others' private and direct statuses cannot be boosted; one's own private one can, staying private", async () => {
    await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
    const priv = await post(alice, { status: "followers only", visibility: "private" });
    const forbidden = await bob.client.post(`/api/v1/statuses/${priv.id}/reblog`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: "This action is not allowed" });
    const dm = await post(alice, { status: "@bob psst", visibility: "direct" });
    expect((await bob.client.post(`/api/v1/statuses/${dm.id}/reblog`)).status).toBe(403);
    expect((await alice.client.post(`/api/v1/statuses/${dm.id}/reblog`)).status).toBe(403);
    const own = await alice.client.post(`/api/v1/statuses/${priv.id}/reblog`, { json: { visibility: "public" } });
    expect(own.status).toBe(200);
    expect(own.body.visibility).toBe("private");
    const hidden = await post(alice, { status: "@bob secret", visibility: "direct" });
    const stranger = await createUser(server, "stranger_rb");
    expect((await stranger.client.post(`/api/v1/statuses/${hidden.id}/reblog`)).status).toBe(404);
  });
});

describe("bookmark and unbookmark", () => {
  test("bookmarked flips; unbookmark of what is not bookmarked is 404", async () => {
    const s = await post(alice, { status: "save me" });
    const res = await bob.client.post(`/api/v1/statuses/${s.id}/bookmark`);
    expect(res.body.bookmarked).toBe(true);
    expect((await bob.client.post(`/api/v1/statuses/${s.id}/bookmark`)).body.bookmarked).toBe(true);
    const undo = await bob.client.post(`/api/v1/statuses/${s.id}/unbookmark`);
    expect(undo.status).toBe(200);
    expect(undo.body.bookmarked).toBe(false);
    const again = await bob.client.post(`/api/v1/statuses/${s.id}/unbookmark`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual(NOT_FOUND);
  });
});

describe("mute and unmute a thread", () => {
  test("participants mute (idempotent); notifications from the thread stop; unmute resumes them", async () => {
    const root = await post(alice, { status: "thread start" });
    const mute = await alice.client.post(`/api/v1/statuses/${root.id}/mute`);
    expect(mute.status).toBe(200);
    expect(mute.body.muted).toBe(true);
    expect((await alice.client.post(`/api/v1/statuses/${root.id}/mute`)).body.muted).toBe(true);

    const reply = await post(bob, { status: "@alice replying", in_reply_to_id: root.id });
    await bob.client.post(`/api/v1/statuses/${root.id}/favourite`);
    const notes = await alice.client.get("/api/v1/notifications");
    expect(notes.body.filter((n: any) => n.status?.id === reply.id || n.status?.id === root.id)).toEqual([]);
    expect((await alice.client.get(`/api/v1/statuses/${reply.id}`)).body.muted).toBe(true);

    const unmute = await alice.client.post(`/api/v1/statuses/${reply.id}/unmute`);
    expect(unmute.body.muted).toBe(false);
    expect((await alice.client.post(`/api/v1/statuses/${reply.id}/unmute`)).status).toBe(200);
    await post(bob, { status: "@alice again", in_reply_to_id: root.id });
    const after = await alice.client.get("/api/v1/notifications", { query: { "types[]": "mention" } });
    expect(after.body[0].status.content).toContain("again");

    // Mentioned accounts take part too.
    const mention = await post(alice, { status: "hey @bob" });
    expect((await bob.client.post(`/api/v1/statuses/${mention.id}/mute`)).status).toBe(200);
  });

  test("someone outside the thread may not mute it", async () => {
    const root = await post(alice, { status: "not yours" });
    const outsider = await createUser(server, "outsider");
    const res = await outsider.client.post(`/api/v1/statuses/${root.id}/mute`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is not allowed" });
  });
});

describe("pin and unpin", () => {
  test("own public statuses pin; the rest get the spec's 422 messages", async () => {
    const s = await post(alice, { status: "pin me" });
    const pin = await alice.client.post(`/api/v1/statuses/${s.id}/pin`);
    expect(pin.status).toBe(200);
    expect(pin.body.pinned).toBe(true);
    expect((await alice.client.get(`/api/v1/statuses/${s.id}`)).body.pinned).toBe(true);
    const dup = await alice.client.post(`/api/v1/statuses/${s.id}/pin`);
    expect(dup.status).toBe(422);
    expect(dup.body).toEqual({ error: "Duplicate record" });

    const others = await bob.client.post(`/api/v1/statuses/${s.id}/pin`);
    expect(others.status).toBe(422);
    expect(others.body).toEqual({ error: "Validation failed: Someone else's toot cannot be pinned" });
    const priv = await post(alice, { status: "private", visibility: "private" });
    const nonPublic = await alice.client.post(`/api/v1/statuses/${priv.id}/pin`);
    expect(nonPublic.status).toBe(422);
    expect(nonPublic.body).toEqual({ error: "Validation failed: Non-public toot cannot be pinned" });
    const boost = (await alice.client.post(`/api/v1/statuses/${(await post(bob, { status: "b" })).id}/reblog`)).body;
    const boostPin = await alice.client.post(`/api/v1/statuses/${boost.id}/pin`);
    expect(boostPin.status).toBe(422);
    expect(boostPin.body.error).toStartWith("Validation failed: A boost cannot be pinned");

    const unpin = await alice.client.post(`/api/v1/statuses/${s.id}/unpin`);
    expect(unpin.body.pinned).toBe(false);
    expect((await alice.client.post(`/api/v1/statuses/${s.id}/unpin`)).status).toBe(200);
  });

  test("at most five pins", async () => {
    const user = await createUser(server, "pinner");
    for (let i = 0; i < 5; i++) {
      const s = await post(user, { status: `pin ${i}` });
      expect((await user.client.post(`/api/v1/statuses/${s.id}/pin`)).status).toBe(200);
    }
    const sixth = await post(user, { status: "one too many" });
    const res = await user.client.post(`/api/v1/statuses/${sixth.id}/pin`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation failed: Maximum number of pinned toots already reached" });
    const pinned = await anon.get(`/api/v1/accounts/${user.id}/statuses`, { query: { pinned: "true" } });
    expect(pinned.body.map((s: { content: string }) => s.content)).toEqual(["<p>pin 4</p>", "<p>pin 3</p>", "<p>pin 2</p>", "<p>pin 1</p>", "<p>pin 0</p>"]);
  });
});

describe("errors shared by every action", () => {
  const actions = ["favourite", "unfavourite", "reblog", "unreblog", "bookmark", "unbookmark", "mute", "unmute", "pin", "unpin"];
  const scopes: Record<string, string> = {
    favourite: "write:favourites",
    unfavourite: "write:favourites",
    reblog: "write:statuses",
    unreblog: "write:statuses",
    bookmark: "write:bookmarks",
    unbookmark: "write:bookmarks",
    mute: "write:mutes",
    unmute: "write:mutes",
    pin: "write:accounts",
    unpin: "write:accounts",
  };

  test("401 without a token, 404 for missing or invisible statuses", async () => {
    const hidden = await post(alice, { status: "private thing", visibility: "private" });
    const stranger = await createUser(server, "nosy");
    for (const action of actions) {
      const unauthenticated = await anon.post(`/api/v1/statuses/${hidden.id}/${action}`);
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.body).toEqual({ error: "The access token is invalid" });
      for (const id of ["123456789", hidden.id]) {
        const res = await stranger.client.post(`/api/v1/statuses/${id}/${action}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    }
  });

  test("each action needs its scope (or its parent)", async () => {
    const s = await post(alice, { status: "scopes" });
    const readOnly = await createUser(server, "readonly", { scopes: "read" });
    for (const action of actions) {
      const res = await readOnly.client.post(`/api/v1/statuses/${s.id}/${action}`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
    }
    for (const action of ["favourite", "bookmark", "reblog"]) {
      const scoped = await createUser(server, `only_${action}`, { scopes: scopes[action]! });
      expect((await scoped.client.post(`/api/v1/statuses/${s.id}/${action}`)).status).toBe(200);
    }
  });
});
