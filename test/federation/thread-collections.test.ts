import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, getAp, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";

// What Rookery offers others to fill its threads, as Mastodon 4.5 does: a `replies` collection
// on each Note (the public and unlisted replies known here, paged) and, for a thread begun
// here, a `context` collection (FEP-7888). Another Rookery opening the thread fills it from them.

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dan: TestUser;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  [alice, bob, carol] = await Promise.all([createUser(a, "alice"), createUser(a, "bob"), createUser(a, "carol")]);
  dan = await createUser(b, "dan");
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const noteUri = (user: string, id: string) => `${a.base}/users/${user}/statuses/${id}`;

describe("a Note's replies and context collections", () => {
  test("the Note names both; the replies are its public and unlisted ones, paged, local ones embedded; a private reply is not listed", async () => {
    const root = await postStatus(alice, { status: "a root" });
    const replies = [];
    for (let i = 0; i < 22; i++) replies.push(await postStatus(i % 2 ? bob : carol, { status: `reply ${i}`, in_reply_to_id: root.id, visibility: i === 3 ? "unlisted" : "public" }));
    const hidden = await postStatus(bob, { status: "for followers", in_reply_to_id: root.id, visibility: "private" });

    const note = await getAp(noteUri("alice", root.id));
    expect(note.body.replies).toBe(`${noteUri("alice", root.id)}/replies`);
    expect(note.body.context).toBe(`${noteUri("alice", root.id)}/context`);
    const collection = await getAp(note.body.replies);
    expect(collection.status).toBe(200);
    expect(collection.body.type).toBe("Collection");
    const items: any[] = [];
    let page = (await getAp(collection.body.first)).body;
    for (;;) {
      expect(page.type).toBe("CollectionPage");
      items.push(...page.items);
      if (!page.next) break;
      page = (await getAp(page.next)).body;
    }
    expect(items.map((n) => n.id)).toEqual(replies.map((r) => noteUri(r.account.username, r.id)));
    expect(items.map((n) => n.id)).not.toContain(noteUri("bob", hidden.id));
    expect(items[0]).toMatchObject({ type: "Note", content: "<p>reply 0</p>", inReplyTo: noteUri("alice", root.id) });

    // The context lists the thread, its top first.
    const context = await getAp(note.body.context);
    const first = (await getAp(context.body.first)).body;
    expect(first.items[0].id).toBe(noteUri("alice", root.id));
    // A reply's Note names the same context.
    expect((await getAp(noteUri(replies[0]!.account.username, replies[0]!.id))).body.context).toBe(note.body.context);
  });

  test("a private status's replies and context are not found; unknown ones neither", async () => {
    const secret = await postStatus(alice, { status: "followers only", visibility: "private" });
    await postStatus(alice, { status: "a public reply to it", in_reply_to_id: secret.id });
    expect((await getAp(`${noteUri("alice", secret.id)}/replies?cursor=`)).status).toBe(404);
    expect((await getAp(`${noteUri("alice", secret.id)}/context?cursor=`)).status).toBe(404);
    expect((await getAp(`${noteUri("alice", "999999")}/replies?cursor=`)).status).toBe(404);
    // A reply's own path names no context (the thread's is its top's).
    const reply = await postStatus(alice, { status: "a reply", in_reply_to_id: (await postStatus(alice, { status: "top" })).id });
    expect((await getAp(`${noteUri("alice", reply.id)}/context?cursor=`)).status).toBe(404);
  });

  test("another Rookery opening the thread fills it from these collections", async () => {
    const root = await postStatus(alice, { status: "a thread for elsewhere" });
    const first = await postStatus(bob, { status: "first reply", in_reply_to_id: root.id });
    const nested = await postStatus(carol, { status: "nested reply", in_reply_to_id: first.id });
    await postStatus(bob, { status: "private reply", in_reply_to_id: root.id, visibility: "private" });
    const found = await dan.client.get("/api/v2/search", { query: { q: noteUri("alice", root.id), resolve: "true", type: "statuses" } });
    const id = found.body.statuses[0].id;
    const opened = await dan.client.get(`/api/v1/statuses/${id}/context`);
    const refresh = /id="([^"]+)"/.exec(opened.headers.get("mastodon-async-refresh")!)![1];
    await eventually(async () => (await dan.client.get(`/api/v1_alpha/async_refreshes/${refresh}`)).body.async_refresh.status === "finished", "the fill to finish");
    const context = await dan.client.get(`/api/v1/statuses/${id}/context`);
    expect(context.body.descendants.map((s: any) => s.content)).toEqual(["<p>first reply</p>", "<p>nested reply</p>"]);
    expect(context.body.descendants[1].in_reply_to_id).toBe(context.body.descendants[0].id);
    expect(context.body.descendants[1].uri).toBe(noteUri("carol", nested.id));
  });
});
