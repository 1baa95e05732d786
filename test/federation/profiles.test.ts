import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Image, PropertyValue } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import sharp from "sharp";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";
import { WsClient } from "../support/streams.ts";

// A remote account as Mastodon shows it: its note, avatar, header and fields read from its
// actor document (the HTML cleaned), kept fresh by its server's Update and by a refetch when
// it is looked at a day after the last one. `a` and `b` are Rookery servers; `receiver` is a
// bare Fedify server (carol), which can say what Rookery never would (hostile HTML).

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const REL = 'rel="nofollow noopener" target="_blank"';
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  receiver = await startReceiver("127.0.0.13");
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
});
afterAll(async () => {
  receiver?.stop();
  await a?.close();
  await b?.close();
});

const png = (color: string) => sharp({ create: { width: 600, height: 400, channels: 3, background: color } }).png().toBuffer();

/** alice (on A) changes her profile through A's client API; A's own view of her comes back. */
async function aliceProfile(form: Record<string, string>, images: { avatar?: string; header?: string } = {}) {
  const body = new FormData();
  for (const [k, v] of Object.entries(form)) body.append(k, v);
  if (images.avatar) body.append("avatar", new Blob([await png(images.avatar)], { type: "image/png" }), "a.png");
  if (images.header) body.append("header", new Blob([await png(images.header)], { type: "image/png" }), "h.png");
  const res = await alice.client.patch("/api/v1/accounts/update_credentials", { multipart: body });
  expect(res.status).toBe(200);
  return res.body;
}

const shownOnB = async (id: number | string) => {
  const res = await bob.client.get(`/api/v1/accounts/${id}`);
  expect(res.status).toBe(200);
  return res.body;
};
const carolOnB = async () => (await b.ctx.services.remoteAccounts.byUri(receiver.actor))!;
const receiverHost = () => new URL(receiver.base).host;

describe("remote profiles are stored and shown as Mastodon shows them", () => {
  test("note, avatar, header and fields of an account on another server show through this server's client API", async () => {
    const onA = await aliceProfile(
      { display_name: "Alice A.", note: "Hello *there*, see https://example.com/x", "fields_attributes[0][name]": "Site", "fields_attributes[0][value]": "https://example.com", "fields_attributes[1][name]": "Pronouns", "fields_attributes[1][value]": "she/her" },
      { avatar: "#3366aa", header: "#aa6633" },
    );
    const remote = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    const shown = await shownOnB(remote.id);
    expect(shown).toMatchObject({
      username: "alice",
      acct: `alice@${new URL(a.base).host}`,
      display_name: "Alice A.",
      locked: false,
      bot: false,
      discoverable: true,
      indexable: true,
      created_at: onA.created_at,
      url: `${a.base}/@alice`,
      uri: `${a.base}/users/alice`,
      // Shown at A's addresses, not copied to B.
      avatar: onA.avatar,
      avatar_static: onA.avatar,
      header: onA.header,
      header_static: onA.header,
    });
    expect(onA.avatar).toStartWith(`${a.base}/system/avatars/`);
    expect((await fetch(shown.avatar)).headers.get("content-type")).toBe("image/webp");
    // A's HTML, cleaned again on B: Mastodon's rel on links, empty classes gone.
    expect(onA.note).toContain('rel="nofollow noopener noreferrer"');
    expect(shown.note).toBe(
      '<p>Hello *there*, see <a href="https://example.com/x" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span>example.com/x</span><span class="invisible"></span></a></p>',
    );
    expect(shown.fields).toEqual([
      {
        name: "Site",
        value: '<a href="https://example.com" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span>example.com</span><span class="invisible"></span></a>',
        verified_at: null,
      },
      { name: "Pronouns", value: "she/her", verified_at: null },
    ]);
    // The same account by its handle.
    const looked = await bob.client.get("/api/v1/accounts/lookup", { query: { acct: `alice@${new URL(a.base).host}` } });
    expect(looked.body).toEqual(shown);
  });

  test("an account without avatar or header shows this server's missing images; local accounts are as before", async () => {
    await createUser(a, "dan");
    const remote = (await b.federation!.resolveActor(`${a.base}/users/dan`))!;
    const shown = await shownOnB(remote.id);
    expect(shown).toMatchObject({
      avatar: `${b.base}/avatars/original/missing.png`,
      avatar_static: `${b.base}/avatars/original/missing.png`,
      header: `${b.base}/headers/original/missing.png`,
      header_static: `${b.base}/headers/original/missing.png`,
      note: "",
      fields: [],
    });
    const own = await shownOnB(bob.id);
    expect(own).toMatchObject({ acct: "bob", url: `${b.base}/@bob`, avatar: `${b.base}/avatars/original/missing.png`, note: "", fields: [] });
  });

  test("a hostile profile arrives cleaned: scripts, handlers, javascript: links and non-http images gone, mentions kept", async () => {
    receiver.profile = {
      name: "Carol <b>bold</b>",
      summary:
        '<p>Hi<script>alert(1)</script> <a href="javascript:alert(2)">click</a> <img src=x onerror=alert(3)> <span class="h-card"><a href="https://x.example/@bob" class="u-url mention">@<span>bob</span></a></span></p><iframe src="https://evil.example"></iframe><style>*{display:none}</style><p onmouseover="alert(4)" style="color:red">two</p>',
      attachments: [
        new PropertyValue({ name: "<b>Site</b>", value: '<a href="https://carol.example" onclick="steal()">carol.example</a>' }),
        new PropertyValue({ name: "Evil", value: '<a href="javascript:alert(5)">x</a><script>alert(6)</script>' }),
      ],
      icon: new Image({ url: new URL("javascript:alert(7)") }),
      image: new Image({ url: new URL("data:image/png;base64,AAAA") }),
      // A profile page on another host is not taken: the actor's IRI stands in.
      url: new URL("https://phishing.example/carol"),
      published: Temporal.Instant.from("2020-05-04T03:02:01Z"),
      discoverable: true,
    };
    const remote = (await b.federation!.resolveActor(receiver.actor))!;
    const shown = await shownOnB(remote.id);
    expect(shown).toMatchObject({
      acct: `carol@${receiverHost()}`,
      // The display name is text: clients escape it.
      display_name: "Carol <b>bold</b>",
      note: `<p>Hi click [🖼  x] <span class="h-card"><a href="https://x.example/@bob" class="u-url mention" ${REL}>@<span>bob</span></a></span></p><p>two</p>`,
      fields: [
        { name: "<b>Site</b>", value: `<a href="https://carol.example" ${REL}>carol.example</a>`, verified_at: null },
        { name: "Evil", value: "x", verified_at: null },
      ],
      avatar: `${b.base}/avatars/original/missing.png`,
      header: `${b.base}/headers/original/missing.png`,
      url: receiver.actor,
      created_at: "2020-05-04T00:00:00.000Z",
      discoverable: true,
      // Not said: no, as Mastodon reads it.
      indexable: false,
    });
    const stored = JSON.stringify(await carolOnB());
    for (const bad of ["<script", "javascript:", "onerror", "onclick", "onmouseover", "<iframe", "<style", "data:image", "phishing"]) expect(stored).not.toContain(bad);
  });

  test("an Update of the actor from its own server changes the name, note, avatar, header and fields shown here", async () => {
    await b.federation!.resolveActor(receiver.actor);
    receiver.profile = {
      name: "Carol Changed",
      summary: "<p>new note</p><script>alert(1)</script>",
      icon: new Image({ url: new URL("https://carol.example/avatar.png") }),
      image: new Image({ url: new URL("https://carol.example/header.jpg") }),
      attachments: [new PropertyValue({ name: "Now", value: "<p>here</p>" })],
    };
    await receiver.updateProfile(`${b.base}/users/bob`, `${b.base}/inbox`);
    await b.federation!.idle();
    expect(await shownOnB((await carolOnB()).id)).toMatchObject({
      display_name: "Carol Changed",
      note: "<p>new note</p>",
      avatar: "https://carol.example/avatar.png",
      avatar_static: "https://carol.example/avatar.png",
      header: "https://carol.example/header.jpg",
      header_static: "https://carol.example/header.jpg",
      fields: [{ name: "Now", value: "<p>here</p>", verified_at: null }],
      url: receiver.actor,
    });
  });
});

describe("remote accounts are fetched again when looked at a day after the last fetch", () => {
  test("a fresh account is not refetched; a stale one is, in the background, once however often it is shown", async () => {
    receiver.profile = { name: "Carol One", summary: "<p>one</p>" };
    // Past Fedify's five minutes of caching documents it fetched.
    b.clock.advance(10 * 60 * 1000);
    await b.federation!.resolveActor(receiver.actor);
    expect((await carolOnB()).displayName).toBe("Carol One");
    const { id, fetchedAt } = await carolOnB();
    const asked = receiver.actorGets;

    // Fresh, even 23 hours on: shown as stored, nothing fetched.
    receiver.profile = { name: "Carol Two", summary: "<p>two</p>", icon: new Image({ url: new URL("https://carol.example/two.png") }) };
    for (const advance of [0, 23 * HOUR]) {
      b.clock.advance(advance);
      expect((await shownOnB(id)).display_name).toBe("Carol One");
      expect((await bob.client.get("/api/v1/accounts/lookup", { query: { acct: `carol@${receiverHost()}` } })).body.display_name).toBe("Carol One");
      await b.federation!.idle();
      expect(receiver.actorGets).toBe(asked);
      expect((await carolOnB()).fetchedAt).toBe(fetchedAt);
    }

    // Stale: every view answers at once with what is stored while the one refetch is held up.
    b.clock.advance(2 * HOUR);
    const release = receiver.holdActor();
    for (let i = 0; i < 3; i++) expect((await shownOnB(id)).display_name).toBe("Carol One");
    await eventually(() => receiver.actorGets === asked + 1, "the refetch reaches carol's server");
    release();
    await b.federation!.idle();
    expect(receiver.actorGets).toBe(asked + 1);
    expect(await shownOnB(id)).toMatchObject({ display_name: "Carol Two", note: "<p>two</p>", avatar: "https://carol.example/two.png" });
    expect((await carolOnB()).fetchedAt!).toBeGreaterThan(fetchedAt! + DAY);

    // Looked up by its handle a day later: the same.
    b.clock.advance(DAY + HOUR);
    receiver.profile = { name: "Carol Three" };
    const looked = await bob.client.get("/api/v1/accounts/lookup", { query: { acct: `carol@${receiverHost()}` } });
    expect(looked.body.display_name).toBe("Carol Two");
    await b.federation!.idle();
    expect(receiver.actorGets).toBe(asked + 2);
    expect(await shownOnB(id)).toMatchObject({ display_name: "Carol Three", note: "", avatar: `${b.base}/avatars/original/missing.png` });
  });

  test("a refetch that fails changes nothing and fails no view; it is tried again an hour later, not on every view", async () => {
    const { id, fetchedAt } = await carolOnB();
    const before = await shownOnB(id);
    b.clock.advance(DAY + HOUR);
    receiver.actorStatus = 500;
    const asked = receiver.actorGets;
    try {
      expect(await shownOnB(id)).toEqual(before);
      await b.federation!.idle();
      // Asked (Fedify tries the document, then WebFinger for it), and nothing changed.
      const tried = receiver.actorGets;
      expect(tried).toBeGreaterThan(asked);
      expect(await shownOnB(id)).toEqual(before);
      expect((await carolOnB()).fetchedAt).toBe(fetchedAt);
      // Within the hour, views do not ask again.
      b.clock.advance(30 * 60 * 1000);
      expect(await shownOnB(id)).toEqual(before);
      await b.federation!.idle();
      expect(receiver.actorGets).toBe(tried);
    } finally {
      receiver.actorStatus = null;
    }
    b.clock.advance(31 * 60 * 1000);
    receiver.profile = { name: "Carol Back" };
    const tried = receiver.actorGets;
    await shownOnB(id);
    await b.federation!.idle();
    expect(receiver.actorGets).toBe(tried + 1);
    expect((await shownOnB(id)).display_name).toBe("Carol Back");
  });

  test("after a refresh, the account's statuses show its new profile, over HTTP and on the stream alike", async () => {
    const remote = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    await bob.client.post(`/api/v1/accounts/${remote.id}/follow`);
    await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remote.id) } })).body[0]?.following === true, "bob follows alice");
    const ws = await WsClient.open(`${b.base.replace("http", "ws")}/api/v1/streaming?stream=user`, bob.token);
    try {
      await ws.fence();
      const first = await postStatus(alice, { status: "before", visibility: "public" });
      const onStream = (uri: string) => ws.waitFor((f) => f.event === "update" && JSON.parse(f.payload).uri === uri);
      const before = await onStream(first.uri);
      const firstOnB = await bob.client.get(`/api/v1/statuses/${JSON.parse(before.payload).id}`);
      expect(before.payload).toBe(firstOnB.text);
      expect(firstOnB.body.account.display_name).toBe("Alice A.");

      const onA = await aliceProfile({ display_name: "Alice Renamed", note: "changed" }, { avatar: "#118811" });
      b.clock.advance(DAY + HOUR);
      await shownOnB(remote.id);
      await b.federation!.idle();
      const account = await shownOnB(remote.id);
      expect(account).toMatchObject({ display_name: "Alice Renamed", note: "<p>changed</p>", avatar: onA.avatar });
      expect((await bob.client.get(`/api/v1/statuses/${firstOnB.body.id}`)).body.account).toEqual(account);

      const second = await postStatus(alice, { status: "after", visibility: "public" });
      const after = await onStream(second.uri);
      const secondOnB = await bob.client.get(`/api/v1/statuses/${JSON.parse(after.payload).id}`);
      expect(after.payload).toBe(secondOnB.text);
      expect(secondOnB.body.account).toMatchObject({ display_name: "Alice Renamed", note: "<p>changed</p>", avatar: onA.avatar, statuses_count: 2 });
    } finally {
      ws.close();
    }
  });
});

describe("a local profile change goes out", () => {
  test("a remote follower's server hears of a new display name and note at once (Update of the actor), not at its next refresh", async () => {
    const dana = await createUser(a, "dana");
    const remoteDana = (await b.federation!.resolveActor(`${a.base}/users/dana`))!;
    await bob.client.post(`/api/v1/accounts/${remoteDana.id}/follow`);
    await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteDana.id) } })).body[0]?.following === true, "bob follows dana");
    // B's clock does not move in this test: no refresh of dana is due there, so only an Update
    // from A can bring the change.
    const changed = await dana.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Dana Q.", note: "Now with a bio" } });
    expect(changed.status).toBe(200);
    const shown = await eventually(async () => {
      const body = await shownOnB(remoteDana.id);
      return body.display_name === "Dana Q." ? body : null;
    }, "B shows dana's new name");
    expect(shown.note).toBe("<p>Now with a bio</p>");
  });
});
