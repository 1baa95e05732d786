import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, getAp, startFederatedPair } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  await alice.client.patch("/api/v1/accounts/update_credentials", {
    form: { display_name: "Alice", note: "Hello *there*", "fields_attributes[0][name]": "Site", "fields_attributes[0][value]": "https://example.com" },
  });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe("actor document", () => {
  test("a local account is a Person at /users/:name with its collections and both keys", async () => {
    const res = await getAp(`${a.base}/users/alice`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/activity+json");
    const actor = res.body;
    expect(actor.id).toBe(`${a.base}/users/alice`);
    expect(actor.type).toBe("Person");
    expect(actor.preferredUsername).toBe("alice");
    expect(actor.name).toBe("Alice");
    expect(actor.url).toBe(`${a.base}/@alice`);
    expect(actor.inbox).toBe(`${a.base}/users/alice/inbox`);
    expect(actor.endpoints.sharedInbox).toBe(`${a.base}/inbox`);
    expect(actor.outbox).toBe(`${a.base}/users/alice/outbox`);
    expect(actor.followers).toBe(`${a.base}/users/alice/followers`);
    expect(actor.following).toBe(`${a.base}/users/alice/following`);
    expect(actor.featured).toBe(`${a.base}/users/alice/featured`);
    expect(actor.manuallyApprovesFollowers).toBe(false);
    // One field compacts to an object (JSON-LD); its value is the field's HTML, as Mastodon sends it.
    expect(actor.attachment).toMatchObject({ type: "PropertyValue", name: "Site" });
    expect(actor.attachment.value).toContain('href="https://example.com"');
    expect(actor.publicKey.id).toBe(`${a.base}/users/alice#main-key`);
    expect(actor.publicKey.owner).toBe(`${a.base}/users/alice`);
    expect(actor.publicKey.publicKeyPem).toStartWith("-----BEGIN PUBLIC KEY-----");
    expect(actor.assertionMethod).toHaveLength(2);
    expect(JSON.stringify(actor)).not.toContain("PRIVATE");
  });

  test("the key pairs are made once: a second fetch shows the same keys, and they are stored", async () => {
    const first = (await getAp(`${a.base}/users/alice`)).body;
    const second = (await getAp(`${a.base}/users/alice`)).body;
    expect(second.publicKey.publicKeyPem).toBe(first.publicKey.publicKeyPem);
    expect(second.assertionMethod).toEqual(first.assertionMethod);
    const rows = await a.database.port.all("SELECT algorithm FROM account_keys WHERE account_id = ? ORDER BY algorithm", [alice.account.id]);
    expect(rows).toEqual([{ algorithm: "Ed25519" }, { algorithm: "RSASSA-PKCS1-v1_5" }]);
  });

  test("a bot is a Service and a locked account approves its followers by hand", async () => {
    const bot = await createUser(a, "botty");
    await bot.client.patch("/api/v1/accounts/update_credentials", { form: { bot: "true", locked: "true" } });
    const actor = (await getAp(`${a.base}/users/botty`)).body;
    expect(actor.type).toBe("Service");
    expect(actor.manuallyApprovesFollowers).toBe(true);
  });

  test("an unknown account, or a name spelled in another case, is 404", async () => {
    expect((await getAp(`${a.base}/users/nobody`)).status).toBe(404);
    expect((await getAp(`${a.base}/users/ALICE`)).status).toBe(404);
  });

  test("a browser asking for HTML is handed to the web routes, not the actor document: sent to the profile page", async () => {
    const res = await fetch(`${a.base}/users/alice`, { headers: { accept: "text/html" }, redirect: "manual" });
    expect([res.status, res.headers.get("location")]).toEqual([302, `${a.base}/@alice`]);
    const page = await getAp(`${a.base}/users/alice`, "text/html");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  test("WebFinger names the actor's IRI and profile page; nodeinfo counts local accounts", async () => {
    const wf = await getAp(`${a.base}/.well-known/webfinger?resource=acct:alice@127.0.0.2:${new URL(a.base).port}`);
    expect(wf.status).toBe(200);
    const self = wf.body.links.find((l: any) => l.rel === "self");
    expect(self).toEqual({ rel: "self", type: "application/activity+json", href: `${a.base}/users/alice` });
    expect(wf.body.links.find((l: any) => l.rel === "http://webfinger.net/rel/profile-page").href).toBe((await getAp(`${a.base}/users/alice`)).body.url);
    const nodeinfo = await getAp(`${a.base}/nodeinfo/2.0`);
    expect(nodeinfo.body.protocols).toEqual(["activitypub"]);
    expect(nodeinfo.body.usage.users.total).toBe(2);
  });
});

describe("outbox and statuses", () => {
  test("the outbox lists public and unlisted statuses only, as Create activities", async () => {
    const writer = await createUser(a, "writer");
    const pub = await postStatus(writer, { status: "public one", visibility: "public" });
    const unl = await postStatus(writer, { status: "unlisted one", visibility: "unlisted" });
    await postStatus(writer, { status: "private one", visibility: "private" });
    await postStatus(writer, { status: "direct one @alice", visibility: "direct" });
    const outbox = (await getAp(`${a.base}/users/writer/outbox`)).body;
    expect(outbox.type).toBe("OrderedCollection");
    expect(outbox.totalItems).toBe(2);
    const page = (await getAp(typeof outbox.first === "string" ? outbox.first : outbox.first.id)).body;
    const notes = page.orderedItems.map((item: any) => item.object);
    expect(page.orderedItems.map((i: any) => i.type)).toEqual(["Create", "Create"]);
    expect(notes.map((n: any) => n.id)).toEqual([`${a.base}/users/writer/statuses/${unl.id}`, `${a.base}/users/writer/statuses/${pub.id}`]);
    expect(JSON.stringify(page)).not.toContain("private one");
    expect(JSON.stringify(page)).not.toContain("direct one");
    const publicNote = notes[1];
    expect(publicNote.to).toBe("as:Public");
    expect(publicNote.cc).toBe(`${a.base}/users/writer/followers`);
    expect(notes[0].to).toBe(`${a.base}/users/writer/followers`);
    expect(notes[0].cc).toBe("as:Public");
  });

  test("a public status is a Note at its URI; private and direct ones are 404", async () => {
    const poster = await createUser(a, "poster");
    const pub = await postStatus(poster, { status: "hello world", visibility: "public" });
    const priv = await postStatus(poster, { status: "secret", visibility: "private" });
    const dm = await postStatus(poster, { status: "psst @alice", visibility: "direct" });
    const note = await getAp(pub.uri);
    expect(note.status).toBe(200);
    expect(note.body).toMatchObject({ type: "Note", id: pub.uri, attributedTo: `${a.base}/users/poster`, content: pub.content, url: pub.url });
    expect((await getAp(priv.uri)).status).toBe(404);
    expect((await getAp(dm.uri)).status).toBe(404);
  });
});

describe("FEDERATION=off", () => {
  test("no actor, no inbox: today's island", async () => {
    const island = await startTestServer({ FEDERATION: "off" });
    try {
      await createUser(island, "alice");
      expect((await getAp(`${island.base}/users/alice`)).status).toBe(404);
      const inbox = await fetch(`${island.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP }, body: "{}" });
      expect(inbox.status).toBe(404);
      expect(island.federation).toBeNull();
      expect(await island.database.port.get("SELECT count(*) AS n FROM account_keys")).toEqual({ n: 0 });
    } finally {
      await island.close();
    }
  });
});

describe("content negotiation on the pages Rookery names as url", () => {
  test("/@name and /@name/:id asked for ActivityPub are the actor and the Note; unknown ones 404; other requests are not federation's", async () => {
    const server = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
    try {
      const zoe = await createUser(server, "zoe");
      const post = await postStatus(zoe, { status: "negotiated", visibility: "public" });
      const actor = await getAp(`${server.base}/@zoe`);
      expect(actor.status).toBe(200);
      expect(actor.body).toMatchObject({ id: `${server.base}/users/zoe`, type: "Person" });
      const ld = await getAp(`${server.base}/@zoe/${post.id}`, 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"');
      expect(ld.status).toBe(200);
      expect(ld.body).toMatchObject({ id: post.uri, type: "Note" });
      expect((await getAp(`${server.base}/@nobody`)).status).toBe(404);
      // A browser's request is not the actor document.
      const html = await fetch(`${server.base}/@zoe`, { headers: { accept: "text/html" } });
      expect(html.headers.get("content-type") ?? "").not.toContain("activity+json");
    } finally {
      await server.close();
    }
  });
});

describe("what other servers parse", () => {
  test("the actor, a Note and a Question read back through Fedify's vocabulary with what Mastodon's documentation expects of them", async () => {
    const { Person, Note, Question, CryptographicKey } = await import("@fedify/fedify/vocab");
    const server = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
    try {
      const yan = await createUser(server, "yan");
      await yan.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Yan", note: "hello #world", discoverable: true, indexable: false, fields_attributes: { "0": { name: "site", value: "https://example.com" } } } });
      const actor = await Person.fromJsonLd((await getAp(`${server.base}/users/yan`)).body);
      expect(actor.id?.href).toBe(`${server.base}/users/yan`);
      expect(actor.preferredUsername?.toString()).toBe("yan");
      expect(actor.name?.toString()).toBe("Yan");
      expect(actor.discoverable).toBe(true);
      expect(actor.indexable).toBe(false);
      expect(actor.manuallyApprovesFollowers).toBe(false);
      expect(actor.featuredId?.href).toBe(`${server.base}/users/yan/featured`);
      expect(actor.endpoints?.sharedInbox?.href).toBe(`${server.base}/inbox`);
      expect(actor.url?.toString()).toBe(`${server.base}/@yan`);
      const key = await actor.getPublicKey();
      expect(key).toBeInstanceOf(CryptographicKey);
      expect(key?.ownerId?.href).toBe(actor.id?.href);
      expect(actor.attachmentIds.length + (await Array.fromAsync(actor.getAttachments())).length).toBeGreaterThan(0);

      const post = await postStatus(yan, { status: "Parsed #fine", visibility: "public" });
      const note = await Note.fromJsonLd((await getAp(post.uri)).body);
      expect(note.attributionId?.href).toBe(actor.id?.href);
      expect(note.toIds.map(String)).toEqual(["https://www.w3.org/ns/activitystreams#Public"]);
      expect(note.ccIds.map(String)).toEqual([`${server.base}/users/yan/followers`]);
      expect(note.url?.toString()).toBe(post.url);

      const poll = await postStatus(yan, { status: "Parsed?", visibility: "public", poll: { options: ["yes", "no"], expires_in: 600 } });
      const question = await Question.fromJsonLd((await getAp(poll.uri)).body);
      const options = await Array.fromAsync(question.getExclusiveOptions());
      expect(options.map((o) => o.name?.toString())).toEqual(["yes", "no"]);
      expect(question.endTime?.epochMilliseconds).toBe(Date.parse(poll.poll.expires_at));
    } finally {
      await server.close();
    }
  });
});
