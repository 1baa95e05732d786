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
const accountAt = (uri: string) => a.database.sqlite.query<{ id: number }, [string]>("SELECT id FROM accounts WHERE uri = ?").get(uri);

/** A remote account that follows alice and wrote her a note; its status id here. */
async function befriend(receiver: Awaited<ReturnType<typeof startReceiver>>) {
  await receiver.follow(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`);
  const id = new URL(`${receiver.base}/notes/hello`);
  const note = new Note({ id, attribution: new URL(receiver.actor), content: "<p>hi alice</p>", to: new URL(`${a.base}/users/alice`), tags: [new Mention({ href: new URL(`${a.base}/users/alice`) })] });
  await receiver.send(aliceInbox(), new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL(`${a.base}/users/alice`) }));
  const status = await eventually(() => a.database.sqlite.query<{ id: number }, [string]>("SELECT id FROM statuses WHERE uri = ?").get(id.href), "the note arrived");
  await eventually(async () => (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count >= 1, "followed");
  return status.id;
}

/** A Delete of the receiver's actor, signed by hand with `key` (the receiver's own unless given). */
function deleteOfActor(receiver: Awaited<ReturnType<typeof startReceiver>>, signer = receiver) {
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
      await eventually(() => !accountAt(carol.actor), "carol gone");
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
      a.database.sqlite.run("DELETE FROM fedify_kv WHERE key LIKE '%127.0.0.22%' OR key LIKE '%127.0.0.23%'");

      const forged = await fetch(await deleteOfActor(dave, mallory));
      expect(forged.status).toBe(401);
      expect(accountAt(dave.actor)).not.toBeNull();

      const own = await fetch(await deleteOfActor(dave));
      expect(own.status).toBe(202);
      expect(accountAt(dave.actor)).toBeNull();
      expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(0);
    } finally {
      dave.stop();
      mallory.stop();
    }
  });

  test("a refresh that finds the actor answering 404 or 410 removes the account; a server error (500) removes nothing", async () => {
    const DAY = 24 * 60 * 60 * 1000;
    for (const [host, status, removed] of [["127.0.0.28", 500, false], ["127.0.0.29", 410, true], ["127.0.0.31", 404, true]] as const) {
      const dora = await startReceiver(host);
      try {
        const statusId = await befriend(dora);
        const account = accountAt(dora.actor)!;
        dora.actorStatus = status;
        // A day later the account is stale: a view of it sets off the refresh.
        a.clock.advance(DAY + 60 * 60 * 1000);
        const asked = dora.actorGets;
        expect((await alice.client.get(`/api/v1/accounts/${account.id}`)).status).toBe(200);
        await a.federation!.idle();
        expect([status, dora.actorGets > asked]).toEqual([status, true]);
        expect([status, accountAt(dora.actor) === null]).toEqual([status, removed]);
        expect([status, (await alice.client.get(`/api/v1/statuses/${statusId}`)).status]).toEqual([status, removed ? 404 : 200]);
      } finally {
        dora.stop();
      }
    }
  });
});
