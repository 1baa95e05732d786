import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Create, Mention, Note } from "@fedify/fedify/vocab";
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
/** The handles as each side writes the other's accounts. */
let bobHandle: string;
let aliceHandle: string;

// null when there is none, as the assertions below say it.
const statusByUri = async (server: TestServer, uri: string) => (await server.database.port.get<{ id: number; visibility: string }>("SELECT id, visibility FROM statuses WHERE uri = ?", [uri])) ?? null;
const count = async (server: TestServer, table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  eve = await createUser(b, "eve");
  receiver = await startReceiver("127.0.0.5");
  // Plain-http servers cannot answer WebFinger (always https): each side stores the other's
  // actor by its IRI first, and mentions then resolve to the stored accounts. The https path
  // (a handle never seen, resolved through WebFinger) is in tls.test.ts.
  await a.federation!.resolveActor(`${b.base}/users/bob`);
  await b.federation!.resolveActor(`${a.base}/users/alice`);
  bobHandle = `bob@${new URL(b.base).host}`;
  aliceHandle = `alice@${new URL(a.base).host}`;
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  receiver?.stop();
});

describe("mentions of remote accounts", () => {
  test("a public post mentioning bob@B links to his profile, reaches B though bob follows nobody, and notifies him there", async () => {
    const post = await postStatus(alice, { status: `Hello @${bobHandle}, welcome!`, visibility: "public" });
    expect(post.mentions).toEqual([{ id: expect.any(String), username: "bob", acct: bobHandle, url: `${b.base}/@bob` }]);
    expect(post.content).toContain(`<span class="h-card" translate="no"><a href="${b.base}/@bob" class="u-url mention">@<span>bob</span></a></span>`);

    const notification = await eventually(async () => (await bob.client.get("/api/v1/notifications")).body.find((n: any) => n.type === "mention"), "bob notified");
    expect(notification.account.acct).toBe(aliceHandle);
    expect(notification.status.uri).toBe(post.uri);
    expect(notification.status.visibility).toBe("public");
    expect(notification.status.mentions).toEqual([{ id: bob.id, username: "bob", acct: "bob", url: `${b.base}/@bob` }]);
    expect(notification.status.content).toContain(`href="${b.base}/@bob" class="u-url mention"`);
    // eve on B is nobody's addressee but the post is public: she may read it, and is not notified.
    expect((await eve.client.get(`/api/v1/statuses/${notification.status.id}`)).status).toBe(200);
    expect((await eve.client.get("/api/v1/notifications")).body).toEqual([]);
  });

  test("a direct message reaches only the mentioned: B shows it to bob (notification, conversation), to nobody else", async () => {
    const dm = await postStatus(alice, { status: `@${bobHandle} just between us`, visibility: "direct" });
    const stored = await eventually(() => statusByUri(b, dm.uri), "the DM arrived on B");
    expect(stored.visibility).toBe("direct");
    const seen = await bob.client.get(`/api/v1/statuses/${stored.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ visibility: "direct", uri: dm.uri, account: { acct: aliceHandle } });
    expect((await eve.client.get(`/api/v1/statuses/${stored.id}`)).status).toBe(404);
    expect((await fetch(`${b.base}/api/v1/statuses/${stored.id}`)).status).toBe(404);
    const conversations = await eventually(async () => {
      const list = (await bob.client.get("/api/v1/conversations")).body;
      return list.length > 0 ? list : null;
    }, "bob's conversation");
    expect(conversations[0]).toMatchObject({ unread: true, last_status: { uri: dm.uri }, accounts: [{ acct: aliceHandle }] });
    // From someone bob does not follow, a private mention is held back by the default policy (Mastodon 4.3).
    const notifications = (await bob.client.get("/api/v1/notifications", { query: { "types[]": "mention", include_filtered: "true" } })).body;
    expect(notifications.map((n: any) => n.status.uri)).toContain(dm.uri);
    expect(((await (await fetch(`${b.base}/api/v1/timelines/public`)).json()) as any[]).map((s) => s.uri)).not.toContain(dm.uri);
    expect((await eve.client.get("/api/v1/conversations")).body).toEqual([]);
  });

  test("bob's reply with a mention lands in alice's thread on A, counted, with her notification", async () => {
    const root = await postStatus(alice, { status: `Who wants to chat, @${bobHandle}?`, visibility: "public" });
    const onB = await eventually(() => statusByUri(b, root.uri), "not yet on B");
    const reply = await postStatus(bob, { status: `@${aliceHandle} me!`, visibility: "public", in_reply_to_id: String(onB.id) });
    expect(reply.in_reply_to_id).toBe(String(onB.id));
    expect(reply.mentions.map((m: any) => m.acct)).toEqual([aliceHandle]);

    const replyOnA = await eventually(() => statusByUri(a, reply.uri), "bob's reply on A");
    const shown = (await alice.client.get(`/api/v1/statuses/${replyOnA.id}`)).body;
    expect(shown).toMatchObject({ in_reply_to_id: root.id, in_reply_to_account_id: alice.id, account: { acct: bobHandle } });
    expect(shown.mentions).toEqual([{ id: alice.id, username: "alice", acct: "alice", url: `${a.base}/@alice` }]);
    expect((await alice.client.get(`/api/v1/statuses/${root.id}`)).body.replies_count).toBe(1);
    const context = (await alice.client.get(`/api/v1/statuses/${root.id}/context`)).body;
    expect(context.descendants.map((s: any) => s.uri)).toEqual([reply.uri]);
    const mention = await eventually(async () => (await alice.client.get("/api/v1/notifications")).body.find((n: any) => n.status?.uri === reply.uri), "alice notified");
    expect(mention.type).toBe("mention");
  });

  test("a reply to a local status is stored even without mention or follower; a stranger's post that concerns nobody here is not", async () => {
    await a.federation!.resolveActor(`${b.base}/users/eve`);
    const root = await postStatus(alice, { status: `An open question, @eve@${new URL(b.base).host}`, visibility: "public" });
    const onB = await eventually(() => statusByUri(b, root.uri), "not yet on B");
    // eve follows nobody on A and nobody on A follows her; her reply does not mention alice:
    // it goes to A as the answer to alice's post, and that alone makes it A's business.
    const reply = await postStatus(eve, { status: "a quiet answer", visibility: "public", in_reply_to_id: String(onB.id) });
    const unrelated = await postStatus(eve, { status: "nothing to do with A", visibility: "public" });
    void unrelated;
    const stored = await eventually(() => statusByUri(a, reply.uri), "eve's reply on A");
    expect((await alice.client.get(`/api/v1/statuses/${stored.id}`)).body.in_reply_to_id).toBe(root.id);
    // Eve's unrelated post was never delivered to A (no follower, no mention): nothing of it here.
    await b.federation!.idle();
    expect(await statusByUri(a, unrelated.uri)).toBeNull();
  });

  test("bob answers with a direct message to alice: A keeps it hers, and an edit mentioning him keeps the mention", async () => {
    const dm = await postStatus(bob, { status: `@${aliceHandle} our secret`, visibility: "direct" });
    const stored = await eventually(() => statusByUri(a, dm.uri), "bob's DM on A");
    expect(stored.visibility).toBe("direct");
    const conversations = await eventually(async () => {
      const list = (await alice.client.get("/api/v1/conversations")).body;
      return list.find((c: any) => c.last_status?.uri === dm.uri);
    }, "alice's conversation");
    expect(conversations.accounts.map((x: any) => x.acct)).toEqual([bobHandle]);

    const post = await postStatus(alice, { status: `to be edited, @${bobHandle}`, visibility: "public" });
    await eventually(() => statusByUri(b, post.uri), "the post on B");
    const edited = await alice.client.put(`/api/v1/statuses/${post.id}`, { json: { status: `edited, hi @${bobHandle}` } });
    expect(edited.status).toBe(200);
    expect(edited.body.mentions.map((m: any) => m.acct)).toEqual([bobHandle]);
    const onB = await eventually(async () => {
      const row = await statusByUri(b, post.uri);
      if (!row) return null;
      const shown = (await bob.client.get(`/api/v1/statuses/${row.id}`)).body;
      return shown.edited_at ? shown : null;
    }, "the edit on B");
    expect(onB.content).toContain("edited, hi");
  });

  test("an unknown handle stays text and the post goes through; a handle of this server is a local mention", async () => {
    const post = await postStatus(alice, { status: `hello @nobody@${new URL(b.base).host} and @alice@${new URL(a.base).host}`, visibility: "public" });
    expect(post.mentions.map((m: any) => m.acct)).toEqual(["alice"]);
    expect(post.content).toContain(`@nobody@${new URL(b.base).host}`);
  });
});

describe("delivery of mentions", () => {
  test("a direct message goes to the mentioned account's own inbox, a public mention to the shared one; the Note carries Mention tags and addressing", async () => {
    const carol = (await a.federation!.resolveActor(receiver.actor))!;
    const carolHandle = `carol@${new URL(receiver.base).host}`;
    const before = receiver.posts.length;
    const pub = await postStatus(alice, { status: `public hello @${carolHandle}`, visibility: "public" });
    const dm = await postStatus(alice, { status: `@${carolHandle} private word`, visibility: "direct" });
    await a.federation!.idle();
    const creates = receiver.posts.slice(before).filter((p) => p.type === "Create");
    expect(creates.map((p) => [p.id, p.inbox]).sort()).toEqual([
      [`${dm.uri}/activity`, "/actors/carol/inbox"],
      [`${pub.uri}/activity`, "/inbox"],
    ].sort());
    const notes = new Map<string, Note>();
    for (const create of receiver.received.filter((x): x is Create => x instanceof Create)) {
      const note = (await create.getObject()) as Note;
      notes.set(note.id!.href, note);
    }
    const dmNote = notes.get(dm.uri)!;
    expect(dmNote.toIds.map(String)).toEqual([receiver.actor]);
    expect(dmNote.ccIds).toEqual([]);
    const pubNote = notes.get(pub.uri)!;
    expect(pubNote.toIds.map(String)).toEqual(["https://www.w3.org/ns/activitystreams#Public"]);
    expect(pubNote.ccIds.map(String)).toEqual([`${a.base}/users/alice/followers`, receiver.actor]);
    const tags = [];
    for await (const tag of pubNote.getTags()) tags.push(tag);
    expect(tags.filter((t) => t instanceof Mention).map((t) => [t.href?.href, t.name?.toString()])).toEqual([[receiver.actor, `@${carolHandle}`]]);
    void carol;
  });
});

describe("what arrives is sanitized", () => {
  test("a remote note's HTML keeps its links, mentions and hashtags and loses scripts, handlers and javascript: links; hashtags come from its tags", async () => {
    const { Hashtag } = await import("@fedify/fedify/vocab");
    const id = new URL(`${receiver.base}/notes/hostile`);
    const content =
      `<p>hi <script>alert(1)</script><a href="javascript:alert(1)">click</a> <img src=x onerror="alert(2)">` +
      `<span class="h-card"><a href="${a.base}/@alice" class="u-url mention" onclick="steal()">@<span>alice</span></a></span> ` +
      `<a href="${receiver.base}/tags/Cats" class="mention hashtag" rel="tag">#<span>Cats</span></a> <b style="color:red">bold</b></p>`;
    const note = new Note({
      id,
      attribution: new URL(receiver.actor),
      content,
      to: new URL(`${a.base}/users/alice`),
      tags: [new Mention({ href: new URL(`${a.base}/users/alice`), name: `@${aliceHandle}` }), new Hashtag({ href: new URL(`${receiver.base}/tags/Cats`), name: "#Cats" })],
    });
    await receiver.send({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL(`${a.base}/users/alice`) }));
    const stored = await eventually(() => statusByUri(a, id.href), "carol's note on A");
    const shown = (await alice.client.get(`/api/v1/statuses/${stored.id}`)).body;
    expect(shown.visibility).toBe("direct");
    expect(shown.content).toBe(
      // An image is shown as a link reading "[🖼  x]" (Mastodon's); its src here is no URL, so text.
      `<p>hi click [🖼  x]` +
        `<span class="h-card"><a href="${a.base}/@alice" class="u-url mention" rel="nofollow noopener" target="_blank">@<span>alice</span></a></span> ` +
        `<a href="${receiver.base}/tags/Cats" class="mention hashtag" rel="tag nofollow noopener" target="_blank">#<span>Cats</span></a> <b>bold</b></p>`,
    );
    expect(shown.tags.map((t: any) => t.name)).toEqual(["cats"]);
    expect(shown.mentions.map((m: any) => m.acct)).toEqual(["alice"]);
  });
});

describe("hashtags from other servers", () => {
  test("a tag name past 500 characters is dropped, not stored; the note and its other tags are kept", async () => {
    const { Hashtag } = await import("@fedify/fedify/vocab");
    const id = new URL(`${receiver.base}/notes/long-tag`);
    const long = "x".repeat(10_000);
    const edge = "y".repeat(500);
    const note = new Note({
      id,
      attribution: new URL(receiver.actor),
      content: "<p>tags</p>",
      to: new URL(`${a.base}/users/alice`),
      tags: [new Mention({ href: new URL(`${a.base}/users/alice`) }), new Hashtag({ name: `#${long}` }), new Hashtag({ name: `#${edge}` }), new Hashtag({ name: "#Kept" })],
    });
    await receiver.send({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL(`${a.base}/users/alice`) }));
    const stored = await eventually(() => statusByUri(a, id.href), "the note with a long tag");
    const shown = (await alice.client.get(`/api/v1/statuses/${stored.id}`)).body;
    expect(shown.tags.map((t: { name: string }) => t.name).sort()).toEqual(["kept", edge]);
    expect(await a.database.port.get("SELECT count(*) AS n FROM tags WHERE length(name) > 500")).toEqual({ n: 0 });
  });
});

describe("dates", () => {
  test("a note written an hour ago takes an id of that time (it sorts where it was written); one dated in the future is dated now", async () => {
    const { Temporal } = await import("@js-temporal/polyfill");
    const { timeOfId } = await import("../../src/ids.ts");
    const sentAt = a.clock.now();
    const hourAgo = sentAt - 3_600_000;
    const sent: [string, number][] = [["old", hourAgo], ["future", a.clock.now() + 86_400_000]];
    for (const [name, at] of sent) {
      const id = new URL(`${receiver.base}/notes/${name}`);
      const note = new Note({ id, attribution: new URL(receiver.actor), content: `<p>${name}</p>`, to: new URL(`${a.base}/users/alice`), published: Temporal.Instant.fromEpochMilliseconds(at), tags: [new Mention({ href: new URL(`${a.base}/users/alice`) })] });
      await receiver.send({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL(`${a.base}/users/alice`) }));
    }
    const old = await eventually(() => statusByUri(a, `${receiver.base}/notes/old`), "the old note on A");
    const future = await eventually(() => statusByUri(a, `${receiver.base}/notes/future`), "the future note on A");
    expect(Math.abs(timeOfId(old.id) - hourAgo)).toBeLessThan(1);
    expect((await alice.client.get(`/api/v1/statuses/${old.id}`)).body.created_at).toBe(new Date(hourAgo).toISOString());
    const futureAt = Date.parse((await alice.client.get(`/api/v1/statuses/${future.id}`)).body.created_at);
    expect(futureAt >= sentAt && futureAt <= a.clock.now()).toBe(true);
  });
});

describe("blocks", () => {
  test("a mention from an account alice blocks is dropped: no status, no notification, and later mentions of others still arrive", async () => {
    const carl = await createUser(a, "carl");
    await b.federation!.resolveActor(`${a.base}/users/carl`);
    const remoteBob = await eventually(() => a.database.port.get<{ id: number }>("SELECT id FROM accounts WHERE uri = ?", [`${b.base}/users/bob`]), "bob stored on A");
    expect((await alice.client.post(`/api/v1/accounts/${remoteBob.id}/block`)).status).toBe(200);
    const notificationsBefore = await count(a, "notifications");
    const blockedPost = await postStatus(bob, { status: `@${aliceHandle} hear me out`, visibility: "direct" });
    // A later mention of carl, sent after, proves that the first was handled before it.
    const marker = await postStatus(bob, { status: `@carl@${new URL(a.base).host} hi carl`, visibility: "direct" });
    await eventually(() => statusByUri(a, marker.uri), "the mention of carl arrived");
    expect(await statusByUri(a, blockedPost.uri)).toBeNull();
    expect(await count(a, "notifications")).toBe(notificationsBefore + 1);
    expect((await carl.client.get("/api/v1/notifications?include_filtered=true")).body.map((n: any) => n.status.uri)).toEqual([marker.uri]);
  });
});
