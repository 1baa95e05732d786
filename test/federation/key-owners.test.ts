import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateCryptoKeyPair, signJsonLd, signObject } from "@fedify/fedify";
import { Create, Note } from "@fedify/fedify/vocab";
import { exportMultibaseKey } from "@fedify/vocab-runtime";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A hostile server publishes keys of its own that claim another server's actor (carol, on the
// receiver) as their owner, and signs carol's "activities" with them: by HTTP signature, by
// Linked Data Signature, by Object Integrity Proof, the key in a document of its own or inside
// one of its actors. The claim is never confirmed by carol's own actor document: nothing is
// taken. Keys kept apart from their actor, which the actor does name, still work.

let a: TestServer;
let carol: Awaited<ReturnType<typeof startReceiver>>;
let evil: Awaited<ReturnType<typeof startRawServer>>;
let inbox: string;

const carolStatuses = async () => (await a.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE uri LIKE ?", [`${carol.base}%`]))!.n;
const notifications = async () => (await a.database.port.get<{ n: number }>("SELECT count(*) AS n FROM notifications"))!.n;

beforeAll(async () => {
  [a, carol, evil] = await Promise.all([
    startTestServer({ HOST: "127.0.0.61", ALLOW_PRIVATE_ADDRESSES: "true" }),
    startReceiver("127.0.0.62"),
    startRawServer("127.0.0.63"),
  ]);
  await createUser(a, "alice");
  inbox = `${a.base}/users/alice/inbox`;
  // carol is known here, as any remote account alice hears from.
  expect(await a.federation!.resolveActor(carol.actor)).not.toBeNull();
});
afterAll(async () => {
  await a?.close();
  carol?.stop();
  evil?.stop();
});

/** A DM from "carol" to alice, as the hostile server writes it. */
function forgedCreate(name: string) {
  const id = `${carol.base}/notes/forged-${name}`;
  return {
    "@context": MASTODON_CONTEXT,
    id: `${id}/activity`,
    type: "Create",
    actor: carol.actor,
    to: [`${a.base}/users/alice`],
    object: { id, type: "Note", attributedTo: carol.actor, to: [`${a.base}/users/alice`], content: `<p>forged ${name}</p>`, tag: [{ type: "Mention", href: `${a.base}/users/alice` }] },
  };
}

describe("a key is carol's only when carol's actor names it", () => {
  test("HTTP signatures by a key document, or an actor's key, that claims carol as its owner: refused, nothing stored", async () => {
    const keyDoc = evil.serve("/keys/1", { "@context": "https://w3id.org/security/v1", id: `${evil.base}/keys/1`, type: "CryptographicKey", owner: carol.actor, publicKeyPem: evil.publicKeyPem });
    const eve = evil.actor("eve", "eve", { publicKey: { id: `${evil.base}/actors/eve#main-key`, owner: carol.actor, publicKeyPem: evil.publicKeyPem } });
    const before = [await carolStatuses(), await notifications()];
    for (const [name, keyId] of [["keydoc", keyDoc], ["actorkey", `${eve}#main-key`]] as const) {
      const res = await evil.postSignedAs(inbox, keyId, forgedCreate(name));
      expect([name, res.status]).toEqual([name, 401]);
    }
    expect([await carolStatuses(), await notifications()]).toEqual(before);
  });

  test("a Linked Data Signature by a key claiming carol, on an activity delivered by an actor of the hostile server: refused", async () => {
    const keyId = evil.serve("/keys/ld", { "@context": "https://w3id.org/security/v1", id: `${evil.base}/keys/ld`, type: "CryptographicKey", owner: carol.actor, publicKeyPem: evil.publicKeyPem });
    const courier = evil.actor("courier", "courier");
    const before = [await carolStatuses(), await notifications()];
    const signed = await signJsonLd(forgedCreate("ld"), evil.privateKey, new URL(keyId), {});
    const res = await evil.postSignedAs(inbox, `${courier}#main-key`, signed as Record<string, unknown>);
    expect(res.status).toBe(401);
    expect([await carolStatuses(), await notifications()]).toEqual(before);
  });

  test("an Object Integrity Proof by a Multikey whose controller is said to be carol: refused", async () => {
    const ed = await generateCryptoKeyPair("Ed25519");
    const keyId = evil.serve("/keys/multi", {
      "@context": "https://w3id.org/security/multikey/v1",
      id: `${evil.base}/keys/multi`,
      type: "Multikey",
      controller: carol.actor,
      publicKeyMultibase: await exportMultibaseKey(ed.publicKey),
    });
    const courier = evil.actor("courier2", "courier2");
    const before = [await carolStatuses(), await notifications()];
    const note = new Note({ id: new URL(`${carol.base}/notes/forged-proof`), attribution: new URL(carol.actor), to: new URL(`${a.base}/users/alice`), content: "<p>forged proof</p>" });
    const create = new Create({ id: new URL(`${carol.base}/notes/forged-proof/activity`), actor: new URL(carol.actor), to: new URL(`${a.base}/users/alice`), object: note });
    const signed = await signObject(create, ed.privateKey, new URL(keyId));
    const res = await evil.postSignedAs(inbox, `${courier}#main-key`, (await signed.toJsonLd({ format: "compact" })) as Record<string, unknown>);
    expect(res.status).toBe(401);
    expect([await carolStatuses(), await notifications()]).toEqual(before);
  });

  test("keys kept apart from their actor, which the actor names (GoToSocial's /main-key, a key document of its own), verify", async () => {
    const frankId = `${evil.base}/actors/frank`;
    const frankKey = `${frankId}/main-key`;
    evil.actor("frank", "frank", { publicKey: { id: frankKey, owner: frankId, publicKeyPem: evil.publicKeyPem } });
    evil.serve("/actors/frank/main-key", { "@context": MASTODON_CONTEXT, id: frankId, type: "Person", preferredUsername: "frank", inbox: `${frankId}/inbox`, publicKey: { id: frankKey, owner: frankId, publicKeyPem: evil.publicKeyPem } });
    const ginaId = `${evil.base}/actors/gina`;
    const ginaKey = evil.serve("/keys/gina", { "@context": "https://w3id.org/security/v1", id: `${evil.base}/keys/gina`, type: "CryptographicKey", owner: ginaId, publicKeyPem: evil.publicKeyPem });
    evil.actor("gina", "gina", { publicKey: ginaKey });
    for (const [actor, keyId] of [[frankId, frankKey], [ginaId, ginaKey]] as const) {
      const id = `${actor}/notes/1`;
      const res = await evil.postSignedAs(inbox, keyId, {
        "@context": MASTODON_CONTEXT,
        id: `${id}/activity`,
        type: "Create",
        actor,
        to: [`${a.base}/users/alice`],
        object: { id, type: "Note", attributedTo: actor, to: [`${a.base}/users/alice`], content: "<p>mine</p>", tag: [{ type: "Mention", href: `${a.base}/users/alice` }] },
      });
      expect([actor, res.status]).toEqual([actor, 202]);
      await eventually(() => a.database.port.get("SELECT id FROM statuses WHERE uri = ?", [id]), `${actor}'s note stored`);
    }
  });
});
