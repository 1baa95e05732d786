import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import { Create, Mention, Note } from "@fedify/fedify/vocab";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { AP, eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// An account on another server deletes itself (Delete of its actor): here it goes, with its
// statuses and follows. Its key may already be gone when the Delete arrives (410): that
// Delete is believed only when the key it names is the actor's own.

let a: TestServer;
let alice: TestUser;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
});
afterAll(async () => {
  await a?.close();
});

const aliceInbox = () => ({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` });
// null when there is none, as the assertions below say it.
const accountAt = async (uri: string) => (await a.database.port.get<{ id: number }>("SELECT id FROM accounts WHERE uri = ?", [uri])) ?? null;

/** A remote account that follows alice and wrote her a note; its status id here. */
async function befriend(receiver: Awaited<ReturnType<typeof startReceiver>>) {
  await receiver.follow(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`);
  const id = new URL(`${receiver.base}/notes/hello`);
  const note = new Note({ id, attribution: new URL(receiver.actor), content: "<p>hi alice</p>", to: new URL(`${a.base}/users/alice`), tags: [new Mention({ href: new URL(`${a.base}/users/alice`) })] });
  await receiver.send(aliceInbox(), new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL(`${a.base}/users/alice`) }));
  const status = await eventually(() => a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [id.href]), "the note arrived");
  await eventually(async () => (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count >= 1, "followed");
  return status.id;
}

/** A Delete of the receiver's actor, signed by hand with `key` (the receiver's own unless given). */
function deleteOfActor(receiver: Awaited<ReturnType<typeof startReceiver>>, signer: { privateKey: CryptoKey; keyId: URL } = receiver) {
  const body = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${receiver.actor}#delete`, type: "Delete", actor: receiver.actor, object: receiver.actor, to: ["https://www.w3.org/ns/activitystreams#Public"] });
  return signRequest(new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body }), signer.privateKey, signer.keyId);
}

describe("an account deleted on its server is deleted here", () => {
  test("a signed Delete of the actor removes the account, its statuses, its follow and its notification", async () => {
    const carol = await startReceiver("127.0.0.21");
    try {
      const statusId = await befriend(carol);
      expect((await alice.client.get("/api/v1/notifications")).body.length).toBeGreaterThan(0);
      const res = await fetch(await deleteOfActor(carol));
      expect(res.status).toBe(202);
      await eventually(async () => !(await accountAt(carol.actor)), "carol gone");
      expect((await alice.client.get(`/api/v1/statuses/${statusId}`)).status).toBe(404);
      expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(0);
      expect((await alice.client.get("/api/v1/notifications")).body).toEqual([]);
    } finally {
      carol.stop();
    }
  });

  test("when its key already answers 410, the Delete is believed for the actor's own key only; a stranger's gone key deletes nobody", async () => {
    const dave = await startReceiver("127.0.0.22");
    const mallory = await startReceiver("127.0.0.23");
    try {
      await befriend(dave);
      // Both servers now answer 410 for their actors (and keys), and A has forgotten the keys it cached.
      dave.actorStatus = 410;
      mallory.actorStatus = 410;
      await a.database.port.run("DELETE FROM fedify_kv WHERE key LIKE '%127.0.0.22%' OR key LIKE '%127.0.0.23%'");

      // Signed by a key the account never named (mallory's, gone too): accepted, and nothing changes.
      const forged = await fetch(await deleteOfActor(dave, mallory));
      expect(forged.status).toBe(202);
      expect(await accountAt(dave.actor)).not.toBeNull();

      const own = await fetch(await deleteOfActor(dave));
      expect(own.status).toBe(202);
      expect(await accountAt(dave.actor)).toBeNull();
      expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(0);
    } finally {
      dave.stop();
      mallory.stop();
    }
  });

  test("the attack: a Delete of a live account with a keyId of the sender's choosing that 404s and random bytes for a signature deletes nothing", async () => {
    const erin = await startReceiver("127.0.0.24");
    try {
      const statusId = await befriend(erin);
      const asked = erin.actorGets;
      for (const keyId of [`${erin.actor}/no-such-key`, `${erin.actor}#no-such-key`, `${erin.base}/nowhere`]) {
        const body = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", id: `${erin.actor}#delete-${crypto.randomUUID()}`, type: "Delete", actor: erin.actor, object: erin.actor });
        const date = new Date().toUTCString();
        const digest = `SHA-256=${Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body))).toString("base64")}`;
        const signature = `keyId="${keyId}",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="${Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString("base64")}"`;
        const res = await fetch(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, date, digest, signature }, body });
        expect([keyId, res.status]).toEqual([keyId, 202]);
      }
      expect(await accountAt(erin.actor)).not.toBeNull();
      expect((await alice.client.get(`/api/v1/statuses/${statusId}`)).status).toBe(200);
      expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(1);
      // The key named by "#no-such-key" is in the actor's document: fetched; the account was not refetched as gone.
      expect(erin.actorGets).toBeGreaterThanOrEqual(asked);
    } finally {
      erin.stop();
    }
  });

  test("a Delete that names the account's own key but is signed with another deletes nothing", async () => {
    const fay = await startReceiver("127.0.0.25");
    const mallory = await startReceiver("127.0.0.26");
    try {
      await befriend(fay);
      const forged = await fetch(await deleteOfActor(fay, { privateKey: mallory.privateKey, keyId: fay.keyId }));
      expect(forged.status).toBe(202);
      expect(await accountAt(fay.actor)).not.toBeNull();
    } finally {
      fay.stop();
      mallory.stop();
    }
  });

  test("a refresh that finds the actor answering 404 or 410 removes the account; a server error (500) removes nothing", async () => {
    const DAY = 24 * 60 * 60 * 1000;
    for (const [host, status, removed] of [["127.0.0.28", 500, false], ["127.0.0.29", 410, true], ["127.0.0.31", 404, true]] as const) {
      const dora = await startReceiver(host);
      try {
        const statusId = await befriend(dora);
        const account = (await accountAt(dora.actor))!;
        dora.actorStatus = status;
        // A day later the account is stale: a view of it sets off the refresh.
        a.clock.advance(DAY + 60 * 60 * 1000);
        const asked = dora.actorGets;
        expect((await alice.client.get(`/api/v1/accounts/${account.id}`)).status).toBe(200);
        await a.federation!.idle();
        expect([status, dora.actorGets > asked]).toEqual([status, true]);
        expect([status, (await accountAt(dora.actor)) === null]).toEqual([status, removed]);
        expect([status, (await alice.client.get(`/api/v1/statuses/${statusId}`)).status]).toEqual([status, removed ? 404 : 200]);
      } finally {
        dora.stop();
      }
    }
  });
});
