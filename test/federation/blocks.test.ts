import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import { Accept, Block, Follow, Reject } from "@fedify/fedify/vocab";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, getAp, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let carol: TestUser;
let bob: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  carol = await createUser(a, "carol");
  bob = await createUser(b, "bob");
  receiver = await startReceiver("127.0.0.7");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  receiver?.stop();
});

const count = async (server: TestServer, sql: string, ...params: (string | number)[]) => (await server.database.port.get<{ n: number }>(sql, params))!.n;
const relationship = async (user: TestUser, id: number) => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(id) } })).body[0];

describe("a local account blocks a remote one", () => {
  test("the follows end on both servers, a new Follow is rejected, and the blocked account's posts reach neither home nor notifications", async () => {
    const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    const remoteBob = (await a.federation!.resolveActor(`${b.base}/users/bob`))!;
    // bob follows alice, alice and carol follow bob.
    await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    await alice.client.post(`/api/v1/accounts/${remoteBob.id}/follow`);
    await carol.client.post(`/api/v1/accounts/${remoteBob.id}/follow`);
    await eventually(async () => (await relationship(bob, remoteAlice.id))?.following === true, "bob follows alice");
    await eventually(async () => (await relationship(alice, remoteBob.id))?.following === true, "alice follows bob");
    await eventually(async () => (await relationship(carol, remoteBob.id))?.following === true, "carol follows bob");
    await eventually(async () => (await bob.client.get(`/api/v1/accounts/${bob.id}`)).body.followers_count === 2, "bob has two followers on B");

    const blocked = await alice.client.post(`/api/v1/accounts/${remoteBob.id}/block`);
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({ blocking: true, following: false, followed_by: false });
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE (account_id = ? AND target_account_id = ?) OR (account_id = ? AND target_account_id = ?)", alice.account.id, remoteBob.id, remoteBob.id, alice.account.id)).toBe(0);
    // B is told both ways: Reject ends bob's follow of alice, Undo ends alice's follow of bob.
    await eventually(async () => {
      const rel = await relationship(bob, remoteAlice.id);
      return rel && rel.following === false && rel.requested === false && rel.followed_by === false;
    }, "B knows no follow between bob and alice");
    expect((await bob.client.get(`/api/v1/accounts/${bob.id}`)).body).toMatchObject({ followers_count: 1, following_count: 0 });

    // B keeps the Block it was told of: bob sees blocked_by and may not follow alice (403).
    await eventually(async () => (await relationship(bob, remoteAlice.id))?.blocked_by === true, "B knows alice blocks bob");
    const refused = await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: "This action is not allowed" });

    // A server that did not keep the Block (B forgets it here) asks again: A refuses with
    // Reject, stores no follower and no notification.
    await b.database.port.run("DELETE FROM blocks WHERE account_id = ?", [remoteAlice.id]);
    const again = await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    expect(again.body).toMatchObject({ requested: true, following: false });
    await eventually(async () => (await relationship(bob, remoteAlice.id))?.requested === false, "bob's request rejected");
    expect((await relationship(bob, remoteAlice.id)).following).toBe(false);
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE target_account_id = ?", alice.account.id)).toBe(0);
    expect(await count(a, "SELECT count(*) AS n FROM follow_requests WHERE target_account_id = ?", alice.account.id)).toBe(0);
    expect((await alice.client.get("/api/v1/notifications")).body).toEqual([]);

    // bob's public post addressing alice reaches A (carol follows him), but not alice.
    const post = await postStatus(bob, { status: `@alice@${new URL(a.base).host} are you there?`, visibility: "public" });
    await eventually(async () => (await carol.client.get("/api/v1/timelines/home")).body.some((s: any) => s.uri === post.uri), "bob's post in carol's home");
    expect((await alice.client.get("/api/v1/timelines/home")).body).toEqual([]);
    expect((await alice.client.get("/api/v1/notifications")).body).toEqual([]);
    expect((await a.ctx.services.accounts.get(alice.account.id))!.followersCount).toBe(0);
  });
});

describe("what a blocked server is told", () => {
  test("a remote follower, or a remote requester of a locked account, gets Reject (quoting its Follow) and Block", async () => {
    const dora = await createUser(a, "dora", { locked: true });
    const follows = {
      alice: await receiver.follow(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`),
      dora: await receiver.follow(`${a.base}/users/dora`, `${a.base}/users/dora/inbox`),
    };
    await eventually(() => receiver.received.some((x) => x instanceof Accept && x.actorId?.href === `${a.base}/users/alice`), "alice accepted carol");
    await eventually(async () => (await dora.client.get("/api/v1/follow_requests")).body.length === 1, "dora has carol's request");
    const remoteCarol = (await a.ctx.services.remoteAccounts.byUri(receiver.actor))!;

    for (const [user, name] of [[alice, "alice"], [dora, "dora"]] as const) {
      const res = await user.client.post(`/api/v1/accounts/${remoteCarol.id}/block`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ blocking: true, followed_by: false, requested_by: false });
      const told = await eventually(() => {
        const mine = receiver.received.filter((x) => x.actorId?.href === `${a.base}/users/${name}` && (x instanceof Reject || x instanceof Block));
        return mine.length === 2 ? mine : null;
      }, `${name}'s Reject and Block`);
      const block = told.find((x) => x instanceof Block)!;
      expect(block.objectId?.href).toBe(receiver.actor);
      // The Reject quotes the Follow by its IRI, also when it had been accepted long before:
      // GoToSocial finds the follow to end by it (a Follow without id is malformed there).
      const reject = told.find((x) => x instanceof Reject)!;
      expect(reject.objectId?.href).toBe(follows[name]);
    }
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE account_id = ?", remoteCarol.id)).toBe(0);
    expect(await count(a, "SELECT count(*) AS n FROM follow_requests WHERE account_id = ?", remoteCarol.id)).toBe(0);
  });
});

describe("security: refused, and nothing changes", () => {
  test("a private status is 404 to an unsigned fetch and to a signed fetch by a server with no follower of its author", async () => {
    const status = await postStatus(alice, { status: "only my followers", visibility: "private" });
    const unsigned = await getAp(status.uri);
    expect(unsigned.status).toBe(404);
    expect(JSON.stringify(unsigned.body)).not.toContain("only my followers");

    const signed = await signRequest(new Request(status.uri, { headers: { accept: AP } }), receiver.privateKey, receiver.keyId);
    expect(signed.headers.get("signature")).toContain("main-key");
    const res = await fetch(signed);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("only my followers");
    // The status itself is untouched and still private.
    expect((await alice.client.get(`/api/v1/statuses/${status.id}`)).body).toMatchObject({ visibility: "private", content: "<p>only my followers</p>" });
  });

  test("an activity signed by one actor's key in the name of another actor is 401 and nothing is stored", async () => {
    const accounts = await count(a, "SELECT count(*) AS n FROM accounts");
    const followers = await count(a, "SELECT count(*) AS n FROM follows WHERE target_account_id = ?", carol.account.id);
    const body = JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${b.base}/users/bob#follows/impersonated`,
      type: "Follow",
      actor: `${b.base}/users/bob`,
      object: `${a.base}/users/carol`,
    });
    // A real key (the receiver's carol's), valid signature, but bob never signed it.
    const signed = await signRequest(new Request(`${a.base}/users/carol/inbox`, { method: "POST", headers: { "content-type": AP }, body }), receiver.privateKey, receiver.keyId);
    const res = await fetch(signed);
    expect(res.status).toBe(401);
    expect(await count(a, "SELECT count(*) AS n FROM accounts")).toBe(accounts);
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE target_account_id = ?", carol.account.id)).toBe(followers);
    expect(await count(a, "SELECT count(*) AS n FROM follow_requests")).toBe(0);
    expect((await carol.client.get("/api/v1/notifications")).body).toEqual([]);
  });

  test("a signed Delete of someone else's status and Update of someone else's actor are taken in (202) and change nothing", async () => {
    const status = await postStatus(alice, { status: "still here", visibility: "public" });
    const profile = (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body;
    const post = async (activity: Record<string, unknown>) => {
      const body = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", actor: receiver.actor, ...activity });
      return fetch(await signRequest(new Request(`${a.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body }), receiver.privateKey, receiver.keyId));
    };
    const deleted = await post({ id: `${receiver.base}/deletes/1`, type: "Delete", object: { id: status.uri, type: "Tombstone" } });
    expect(deleted.status).toBe(202);
    const updated = await post({
      id: `${receiver.base}/updates/1`,
      type: "Update",
      object: { id: `${a.base}/users/alice`, type: "Person", preferredUsername: "alice", name: "pwned", inbox: `${a.base}/users/alice/inbox` },
    });
    expect(updated.status).toBe(202);
    // Both were handled before their 202 (incoming activities are not queued); idle() also
    // waits for anything their handlers queued.
    await a.federation!.idle();
    expect((await alice.client.get(`/api/v1/statuses/${status.id}`)).body).toMatchObject({ content: "<p>still here</p>" });
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body).toEqual(profile);
  });
});

describe("a remote account blocks a local one, then unblocks", () => {
  test("Block ends the follows on both servers and is kept (blocked_by, follow refused); Undo Block lifts it", async () => {
    const erin = await createUser(a, "erin");
    const frank = await createUser(b, "frank");
    const remoteErin = (await b.federation!.resolveActor(`${a.base}/users/erin`))!;
    const remoteFrank = (await a.federation!.resolveActor(`${b.base}/users/frank`))!;
    await erin.client.post(`/api/v1/accounts/${remoteFrank.id}/follow`);
    await frank.client.post(`/api/v1/accounts/${remoteErin.id}/follow`);
    await eventually(async () => (await relationship(erin, remoteFrank.id))?.following === true, "erin follows frank");
    await eventually(async () => (await relationship(frank, remoteErin.id))?.following === true, "frank follows erin");

    expect((await frank.client.post(`/api/v1/accounts/${remoteErin.id}/block`)).body).toMatchObject({ blocking: true });
    const rel = await eventually(async () => {
      const r = await relationship(erin, remoteFrank.id);
      return r?.blocked_by === true ? r : null;
    }, "A knows frank blocks erin");
    expect(rel).toMatchObject({ following: false, followed_by: false, blocking: false, blocked_by: true });
    expect(await count(a, "SELECT count(*) AS n FROM follows WHERE account_id IN (?, ?) AND target_account_id IN (?, ?)", erin.account.id, remoteFrank.id, erin.account.id, remoteFrank.id)).toBe(0);
    expect((await erin.client.get(`/api/v1/accounts/${erin.id}`)).body).toMatchObject({ followers_count: 0, following_count: 0 });

    // erin may not follow whoever blocks her: Mastodon's 403, and nothing is stored or sent.
    const refused = await erin.client.post(`/api/v1/accounts/${remoteFrank.id}/follow`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: "This action is not allowed" });
    expect(await count(a, "SELECT count(*) AS n FROM follow_requests WHERE account_id = ?", erin.account.id)).toBe(0);

    expect((await frank.client.post(`/api/v1/accounts/${remoteErin.id}/unblock`)).body).toMatchObject({ blocking: false });
    await eventually(async () => (await relationship(erin, remoteFrank.id))?.blocked_by === false, "A knows the block is lifted");
    expect(await count(a, "SELECT count(*) AS n FROM blocks WHERE account_id = ?", remoteFrank.id)).toBe(0);
    // Following works again, both sides agree.
    await erin.client.post(`/api/v1/accounts/${remoteFrank.id}/follow`);
    await eventually(async () => (await relationship(erin, remoteFrank.id))?.following === true, "erin follows frank again");
    expect((await frank.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteErin.id) } })).body[0]).toMatchObject({ followed_by: true });
  });

  test("the local account's follow of the blocker ends without Undo (its server refuses it: GoToSocial answers 403)", async () => {
    const hana = await createUser(a, "hana");
    const remoteCarol = (await a.federation!.resolveActor(receiver.actor))!;
    await hana.client.post(`/api/v1/accounts/${remoteCarol.id}/follow`);
    const follow = await eventually(() => receiver.posts.find((p) => p.type === "Follow" && p.id.startsWith(`${a.base}/users/hana#`)), "hana's Follow at the receiver");
    const hanaActor = { id: `${a.base}/users/hana`, inbox: `${a.base}/users/hana/inbox` };
    await receiver.send(hanaActor, new Accept({ id: new URL(`${receiver.base}/accepts/hana`), actor: new URL(receiver.actor), object: new Follow({ id: new URL(follow.id), actor: new URL(hanaActor.id), object: new URL(receiver.actor) }) }));
    await eventually(async () => (await relationship(hana, remoteCarol.id))?.following === true, "hana follows carol");

    const before = receiver.posts.length;
    await receiver.send(hanaActor, new Block({ id: new URL(`${receiver.base}/blocks/hana`), actor: new URL(receiver.actor), object: new URL(hanaActor.id) }));
    await eventually(async () => (await relationship(hana, remoteCarol.id))?.blocked_by === true, "hana is blocked");
    expect(await relationship(hana, remoteCarol.id)).toMatchObject({ following: false, requested: false });
    await a.federation!.idle();
    expect(receiver.posts.slice(before).map((p) => p.type)).toEqual([]);
  });

  test("an Undo of a Block sent by another actor than the blocker changes nothing", async () => {
    const gina = await createUser(a, "gina");
    const remoteCarol = (await a.ctx.services.remoteAccounts.byUri(receiver.actor))!;
    // The receiver's actor blocks gina, then "someone else" (bob on B, whose key the receiver lacks) cannot undo it:
    // the receiver signs as itself an Undo whose Block names bob as the actor.
    const send = async (activity: Record<string, unknown>) => {
      const body = JSON.stringify({ "@context": "https://www.w3.org/ns/activitystreams", actor: receiver.actor, ...activity });
      return fetch(await signRequest(new Request(`${a.base}/inbox`, { method: "POST", headers: { "content-type": AP }, body }), receiver.privateKey, receiver.keyId));
    };
    const blockId = `${receiver.base}/blocks/gina`;
    expect((await send({ id: blockId, type: "Block", object: `${a.base}/users/gina` })).status).toBe(202);
    await eventually(async () => (await relationship(gina, remoteCarol.id))?.blocked_by === true, "gina is blocked");
    const bobOnA = (await a.ctx.services.remoteAccounts.byUri(`${b.base}/users/bob`))!;
    await a.ctx.services.moderation.block(bobOnA.id, gina.account.id);
    const undo = await send({ id: `${blockId}/undo`, type: "Undo", object: { id: `${b.base}/users/bob#blocks/x`, type: "Block", actor: `${b.base}/users/bob`, object: `${a.base}/users/gina` } });
    expect(undo.status).toBe(202);
    await a.federation!.idle();
    expect(await count(a, "SELECT count(*) AS n FROM blocks WHERE account_id = ? AND target_account_id = ?", bobOnA.id, gina.account.id)).toBe(1);
    expect(await count(a, "SELECT count(*) AS n FROM blocks WHERE account_id = ? AND target_account_id = ?", remoteCarol.id, gina.account.id)).toBe(1);
  });
});
