import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Create, Mention, Note, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, getAp } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// GoToSocial answers 401 to every unsigned GET of an actor or a status (Mastodon does with
// AUTHORIZED_FETCH): Rookery signs what it fetches with its instance actor's key.

let a: TestServer;
let alice: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let instanceActor: string;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.30");
  receiver.authorizedFetch = true;
  instanceActor = `${a.base}/users/127.0.0.2`;
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
});

describe("the instance actor", () => {
  test("is an Application at /users/<hostname> with the server's key, found by WebFinger", async () => {
    const actor = await getAp(instanceActor);
    expect(actor.status).toBe(200);
    expect(actor.body).toMatchObject({ id: instanceActor, type: "Application", preferredUsername: "127.0.0.2", inbox: `${instanceActor}/inbox`, manuallyApprovesFollowers: true });
    expect(actor.body.publicKey).toMatchObject({ id: `${instanceActor}#main-key`, owner: instanceActor });
    expect(actor.body.publicKey.publicKeyPem).toContain("BEGIN PUBLIC KEY");
    // The same key on every fetch: made once and kept.
    expect((await getAp(instanceActor)).body.publicKey.publicKeyPem).toBe(actor.body.publicKey.publicKeyPem);

    const host = new URL(a.base).host;
    const jrd = await fetch(`${a.base}/.well-known/webfinger?resource=acct:127.0.0.2@${host}`);
    expect(jrd.status).toBe(200);
    const body = await jrd.json();
    expect(body.subject).toBe(`acct:127.0.0.2@${host}`);
    expect(body.links.find((l: any) => l.rel === "self")).toEqual({ rel: "self", type: AP, href: instanceActor });
  });
});

describe("fetches from a server that refuses unsigned GETs", () => {
  test("an activity at the shared inbox from an actor not seen before: the actor is fetched, signed, and the mention arrives", async () => {
    const id = new URL(`${receiver.base}/notes/shared-inbox`);
    const note = new Note({ id, attribution: new URL(receiver.actor), content: "<p>hi alice</p>", to: PUBLIC_COLLECTION, ccs: [new URL(`${a.base}/users/alice`)], tags: [new Mention({ href: new URL(`${a.base}/users/alice`) })] });
    await receiver.send({ id: `${a.base}/users/alice`, inbox: `${a.base}/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: PUBLIC_COLLECTION }));
    const mention = await eventually(async () => (await alice.client.get("/api/v1/notifications")).body.find((n: any) => n.type === "mention"), "alice's mention");
    expect(mention.status.uri).toBe(id.href);
    expect(mention.account.acct).toBe(`carol@${new URL(receiver.base).host}`);
    expect(receiver.signers).toContain(`${instanceActor}#main-key`);
  });

  test("search with resolve=true finds a status there, asking for it signed", async () => {
    const noteUrl = receiver.serveNote("searched", (iri) => new Note({ id: iri, attribution: new URL(receiver.actor), content: "<p>find me</p>", to: PUBLIC_COLLECTION }));
    receiver.signers.length = 0;
    const found = await alice.client.get("/api/v2/search", { query: { q: noteUrl, resolve: "true" } });
    expect(found.status).toBe(200);
    expect(found.body.statuses.map((s: any) => s.uri)).toEqual([noteUrl]);
    expect(receiver.signers.length).toBeGreaterThan(0);
    expect(new Set(receiver.signers)).toEqual(new Set([`${instanceActor}#main-key`]));

    const unsigned = await fetch(noteUrl, { headers: { accept: AP } });
    expect(unsigned.status).toBe(401);
  });
});
