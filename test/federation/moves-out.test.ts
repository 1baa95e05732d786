import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createUser, PASSWORD, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, getAp, startFederatedPair } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A Rookery account moves to another Rookery server, and back the other way: the old server
// sends Move to its followers' servers, and their followers (on a third server, and on the old
// one) follow the new account. Three real servers on loopback addresses.

let a: TestServer;
let b: TestServer;
let c: TestServer;
let alice: TestUser; // on A, moves to alice2 on B
let alice2: TestUser;
let neighbour: TestUser; // on A, follows alice
let fan: TestUser; // on C, follows alice

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  c = await startTestServer({ HOST: "127.0.0.4", ALLOW_PRIVATE_ADDRESSES: "true" });
  [alice, neighbour, alice2, fan] = await Promise.all([createUser(a, "alice"), createUser(a, "neighbour"), createUser(b, "alice2"), createUser(c, "fan")]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

const relationship = async (user: TestUser, id: number | string) => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(id) } })).body[0];
const follows = async (user: TestUser, server: TestServer, uri: string) => {
  const row = (await server.ctx.services.remoteAccounts.byUri(uri)) ?? (await server.federation!.resolveActor(uri));
  return row ? (await relationship(user, row.id)).following === true : false;
};
const row = async (server: TestServer, id: string) => {
  const { orm, tables } = server.database.port;
  return (await orm.select().from(tables.accounts).where(eq(tables.accounts.id, Number(id))).limit(1))[0]!;
};
/** Everything A sent is delivered and handled by C. */
const settled = async () => {
  await a.federation!.idle();
  await c.federation!.idle();
};

describe("aliases: POST /api/v1/accounts/alias", () => {
  test("sets the accounts this one comes from: shown in source and in the actor document; an empty list clears them", async () => {
    const aliceUri = `${a.base}/users/alice`;
    const set = await alice2.client.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [aliceUri, aliceUri, `${b.base}/users/alice2`] } });
    expect(set.status).toBe(200);
    // Once each, and never the account itself (as GoToSocial).
    expect(set.body.source.also_known_as_uris).toEqual([aliceUri]);
    expect((await alice2.client.get("/api/v1/accounts/verify_credentials")).body.source.also_known_as_uris).toEqual([aliceUri]);
    const actor = await getAp(`${b.base}/users/alice2`);
    expect([actor.body.alsoKnownAs].flat()).toEqual([aliceUri]);

    const cleared = await alice2.client.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [] } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.source.also_known_as_uris).toBeUndefined();
    expect((await getAp(`${b.base}/users/alice2`)).body.alsoKnownAs).toBeUndefined();
    // Set again, by form (as GoToSocial's clients send it), for the moves below.
    expect((await alice2.client.post("/api/v1/accounts/alias", { form: { "also_known_as_uris[]": aliceUri } })).body.source.also_known_as_uris).toEqual([aliceUri]);
  });

  test("bad entries are refused with GoToSocial's words and change nothing", async () => {
    const before = (await row(b, alice2.id)).alsoKnownAs;
    const cases: [unknown, number, string][] = [
      [{}, 400, "no also_known_as_uris provided in account alias request"],
      [{ also_known_as_uris: ["javascript:alert(1)"] }, 400, "invalid also_known_as_uri (javascript:alert(1)) provided in account alias request: uri must not be empty and scheme must be http or https"],
      [{ also_known_as_uris: [`${a.base}/users/alice`, "ftp://x.example/u"] }, 400, "invalid also_known_as_uri (ftp://x.example/u) provided in account alias request: uri must not be empty and scheme must be http or https"],
      [{ also_known_as_uris: [`${a.base}/users/nobody`] }, 422, `error dereferencing also_known_as_uri (${a.base}/users/nobody) account: no account could be fetched there`],
      [{ also_known_as_uris: Array.from({ length: 21 }, (_, i) => `${a.base}/users/u${i}`) }, 422, "too many also_known_as_uris: at most 20"],
    ];
    for (const [json, status, error] of cases) {
      const res = await alice2.client.post("/api/v1/accounts/alias", { json });
      expect([res.status, res.body]).toEqual([status, { error }]);
    }
    expect((await row(b, alice2.id)).alsoKnownAs).toBe(before);
    // Without the scope, or without a user.
    const readOnly = await createUser(b, "reader", { scopes: "read" });
    const refused = await readOnly.client.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [] } });
    expect([refused.status, refused.body]).toEqual([403, { error: "This action is outside the authorized scopes" }]);
  });
});

describe("moving out: POST /api/v1/accounts/move", () => {
  test("before the move: alice has a follower on C and one on A", async () => {
    const aliceOnC = (await c.federation!.resolveActor(`${a.base}/users/alice`))!;
    expect((await fan.client.post(`/api/v1/accounts/${aliceOnC.id}/follow`)).status).toBe(200);
    expect((await neighbour.client.post(`/api/v1/accounts/${alice.id}/follow`)).body.following).toBe(true);
    await eventually(() => follows(fan, c, `${a.base}/users/alice`), "fan follows alice");
  });

  test("refusals change nothing and send nothing: missing or wrong fields, a wrong password, a target that does not name alice, one that cannot be fetched", async () => {
    // An account on B that names nobody among its aliases.
    await createUser(b, "stranger");
    const target = `${b.base}/users/alice2`;
    const cases: [Record<string, string>, number, string][] = [
      [{ password: PASSWORD }, 400, "no moved_to_uri provided in account Move request"],
      [{ password: PASSWORD, moved_to_uri: "mailto:alice@example.com" }, 400, "invalid moved_to_uri provided in account Move request: uri scheme must be http or https"],
      [{ moved_to_uri: target }, 400, "no password provided in account Move request"],
      [{ moved_to_uri: target, password: "not the password" }, 400, "invalid password provided in account Move request"],
      [
        { moved_to_uri: `${b.base}/users/stranger`, password: PASSWORD },
        422,
        `target account ${b.base}/users/stranger is not aliased to this account via alsoKnownAs; to Move to the target account from this one, you must log in to the target account and set alsoKnownAs to ${a.base}/users/alice`,
      ],
      [{ moved_to_uri: `${b.base}/users/nobody`, password: PASSWORD }, 422, "error dereferencing moved_to_uri account: no account could be fetched there"],
      [{ moved_to_uri: `${a.base}/users/alice`, password: PASSWORD }, 422, "invalid moved_to_uri provided in account Move request: an account cannot move to itself"],
    ];
    for (const [form, status, error] of cases) {
      const res = await alice.client.post("/api/v1/accounts/move", { form });
      expect([res.status, res.body]).toEqual([status, { error }]);
    }
    expect((await row(a, alice.id)).movedToAccountId).toBeNull();
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.moved).toBeUndefined();
    // No Move went out: the follower on C still follows alice, who shows no move there.
    await settled();
    expect(await follows(fan, c, `${a.base}/users/alice`)).toBe(true);
    expect((await c.ctx.services.remoteAccounts.byUri(`${a.base}/users/alice`))!.movedToAccountId).toBeNull();
    expect(await relationship(neighbour, alice.id)).toMatchObject({ following: true });
  });

  test("alice moves to alice2: 202, she shows `moved` (API, actor document, her page), her followers on A and C follow alice2, and she posts no more", async () => {
    const res = await alice.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${b.base}/users/alice2`, password: PASSWORD } });
    expect([res.status, res.body]).toEqual([202, { message: "accepted" }]);

    const shown = (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body;
    expect(shown.moved).toMatchObject({ acct: `alice2@${new URL(b.base).host}`, uri: `${b.base}/users/alice2` });
    expect((await getAp(`${a.base}/users/alice`)).body.movedTo).toBe(`${b.base}/users/alice2`);
    const page = await fetch(`${a.base}/@alice`).then((r) => r.text());
    expect(page).toContain(`alice has indicated that their new account is now <a href="${b.base}/@alice2">@alice2@${new URL(b.base).host}</a>`);

    // The follower here follows alice2 now (a request until B accepts it), and no longer alice.
    const alice2OnA = (await a.ctx.services.remoteAccounts.byUri(`${b.base}/users/alice2`))!;
    expect(await relationship(neighbour, alice.id)).toMatchObject({ following: false });
    await eventually(async () => (await relationship(neighbour, alice2OnA.id)).following === true, "neighbour follows alice2");
    // The follower on C re-follows when its server gets the Move.
    await eventually(() => follows(fan, c, `${b.base}/users/alice2`), "fan on C follows alice2");
    await eventually(() => follows(fan, c, `${a.base}/users/alice`).then((f) => !f), "fan on C no longer follows alice");
    const followersOfAlice2 = await alice2.client.get(`/api/v1/accounts/${alice2.id}/followers`);
    expect(followersOfAlice2.body.map((f: { acct: string }) => f.acct).sort()).toEqual([`fan@${new URL(c.base).host}`, `neighbour@${new URL(a.base).host}`].sort());

    // A moved account posts no more (Mastodon: 403, as for an account that is not functional).
    const before = (await row(a, alice.id)).statusesCount;
    const refused = await alice.client.post("/api/v1/statuses", { json: { status: "still here?" } });
    expect([refused.status, refused.body]).toEqual([403, { error: "Your login is currently disabled" }]);
    expect((await row(a, alice.id)).statusesCount).toBe(before);
  });

  test("moving again: to the same account the Move is sent again; to another one, not within 30 days", async () => {
    const other = await createUser(b, "other");
    expect((await other.client.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [`${a.base}/users/alice`] } })).status).toBe(200);
    const refused = await alice.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${b.base}/users/other`, password: PASSWORD } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toContain("it cannot Move again before");
    expect((await row(a, alice.id)).movedToAccountId).toBe((await a.ctx.services.remoteAccounts.byUri(`${b.base}/users/alice2`))!.id);
    const again = await alice.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${b.base}/users/alice2`, password: PASSWORD } });
    expect(again.status).toBe(202);
    // Thirty days on, she may move on (Mastodon's cooldown is over).
    a.clock.advance(31 * 24 * 60 * 60 * 1000);
    const later = await alice.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${b.base}/users/other`, password: PASSWORD } });
    expect(later.status).toBe(202);
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.moved).toMatchObject({ uri: `${b.base}/users/other` });
  });
});

describe("moving between two accounts of the same server", () => {
  test("dave moves to dave2 on A: his follower on A follows dave2 at once, those who blocked or muted him block or mute dave2, and his follower on C re-follows", async () => {
    const dave = await createUser(a, "dave");
    const dave2 = await createUser(a, "dave2");
    const [friend, grump, quiet] = await Promise.all([createUser(a, "friend"), createUser(a, "grump"), createUser(a, "quiet")]);
    await friend.client.post(`/api/v1/accounts/${dave.id}/follow`);
    await grump.client.post(`/api/v1/accounts/${dave.id}/block`);
    await quiet.client.post(`/api/v1/accounts/${dave.id}/mute`, { json: { notifications: false } });
    const daveOnC = (await c.federation!.resolveActor(`${a.base}/users/dave`))!;
    await fan.client.post(`/api/v1/accounts/${daveOnC.id}/follow`);
    await eventually(() => follows(fan, c, `${a.base}/users/dave`), "fan follows dave");

    // A local alias, by handle.
    expect((await dave2.client.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [`@dave@${new URL(a.base).host}`] } })).body.source.also_known_as_uris).toEqual([`${a.base}/users/dave`]);
    expect((await dave.client.post("/api/v1/accounts/move", { json: { moved_to_uri: `${a.base}/users/dave2`, password: PASSWORD } })).status).toBe(202);
    expect((await dave.client.get(`/api/v1/accounts/${dave.id}`)).body.moved).toMatchObject({ id: dave2.id, acct: "dave2" });
    expect(await relationship(friend, dave2.id)).toMatchObject({ following: true });
    expect(await relationship(friend, dave.id)).toMatchObject({ following: false });
    expect(await relationship(grump, dave2.id)).toMatchObject({ blocking: true });
    expect(await relationship(quiet, dave2.id)).toMatchObject({ muting: true, muting_notifications: false });
    await eventually(() => follows(fan, c, `${a.base}/users/dave2`), "fan on C follows dave2");
  });
});

describe("a redirect (Mastodon's, redirect_only): the profile points to the new account, and nobody moves", () => {
  test("no alias needed; carol shows `moved` and posts no more, her followers stay, no Move is sent; redirecting again to the same account is refused", async () => {
    const carol = await createUser(a, "carol");
    const follower = await createUser(a, "follower");
    await createUser(b, "carol2");
    await follower.client.post(`/api/v1/accounts/${carol.id}/follow`);
    const carolOnC = (await c.federation!.resolveActor(`${a.base}/users/carol`))!;
    await fan.client.post(`/api/v1/accounts/${carolOnC.id}/follow`);
    await eventually(() => follows(fan, c, `${a.base}/users/carol`), "fan follows carol");
    const res = await carol.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${b.base}/users/carol2`, password: PASSWORD, redirect_only: "true" } });
    expect([res.status, res.body]).toEqual([202, { message: "accepted" }]);
    expect((await carol.client.get(`/api/v1/accounts/${carol.id}`)).body.moved).toMatchObject({ uri: `${b.base}/users/carol2` });
    expect((await getAp(`${a.base}/users/carol`)).body.movedTo).toBe(`${b.base}/users/carol2`);
    expect(await relationship(follower, carol.id)).toMatchObject({ following: true });
    expect((await row(a, carol.id)).movedAt).toBeNull();
    // No Move: the follower on C stays with carol (its server got the Update alone).
    await settled();
    expect(await follows(fan, c, `${a.base}/users/carol`)).toBe(true);
    expect(await follows(fan, c, `${b.base}/users/carol2`)).toBe(false);
    expect((await carol.client.post("/api/v1/statuses", { json: { status: "hi" } })).status).toBe(403);
    const again = await carol.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${b.base}/users/carol2`, password: PASSWORD, redirect_only: "true" } });
    expect([again.status, again.body]).toEqual([422, { error: `account ${a.base}/users/carol already redirects to ${b.base}/users/carol2` }]);
  });
});

describe("moving in, the other way: an account on B moves to a locked account on A", () => {
  test("bob's followers on C and B ask to follow bobby on A, who approves them as any follow request", async () => {
    const bob = await createUser(b, "bob");
    const bobby = await createUser(a, "bobby", { locked: true });
    const friend = await createUser(b, "friend");
    const bobOnC = (await c.federation!.resolveActor(`${b.base}/users/bob`))!;
    await fan.client.post(`/api/v1/accounts/${bobOnC.id}/follow`);
    await friend.client.post(`/api/v1/accounts/${bob.id}/follow`);
    await eventually(() => follows(fan, c, `${b.base}/users/bob`), "fan follows bob");

    expect((await bobby.client.post("/api/v1/accounts/alias", { json: { also_known_as_uris: [`${b.base}/users/bob`] } })).status).toBe(200);
    expect((await bob.client.post("/api/v1/accounts/move", { form: { moved_to_uri: `${a.base}/users/bobby`, password: PASSWORD } })).status).toBe(202);

    // Both arrive on A as follow requests: bobby is locked.
    const requests = async () => ((await bobby.client.get("/api/v1/follow_requests")).body as { acct: string }[]).map((r) => r.acct).sort();
    const expected = [`fan@${new URL(c.base).host}`, `friend@${new URL(b.base).host}`].sort();
    await eventually(async () => JSON.stringify(await requests()) === JSON.stringify(expected), "both follow requests on A");
    for (const r of (await bobby.client.get("/api/v1/follow_requests")).body as { id: string }[]) {
      expect((await bobby.client.post(`/api/v1/follow_requests/${r.id}/authorize`)).status).toBe(200);
    }
    await eventually(() => follows(fan, c, `${a.base}/users/bobby`), "fan on C follows bobby");
    await eventually(() => follows(friend, b, `${a.base}/users/bobby`), "friend on B follows bobby");
    // bobby, not moved, posts as ever; and the post reaches the followers who came with the move.
    const posted = await postStatus(bobby, { status: "new home" });
    expect(posted.id).toBeTruthy();
  });
});
