import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept, Follow, Move } from "@fedify/fedify/vocab";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// An account on another server moves to a new one (Move): believed only when the new account
// names the old among its aliases; then the old shows `moved` and alice follows the new one.

let a: TestServer;
let alice: TestUser;
let before: Awaited<ReturnType<typeof startReceiver>>;
let after: Awaited<ReturnType<typeof startReceiver>>;
let stranger: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  [before, after, stranger] = await Promise.all([startReceiver("127.0.0.25"), startReceiver("127.0.0.26"), startReceiver("127.0.0.27")]);
});
afterAll(async () => {
  await a?.close();
  for (const r of [before, after, stranger]) r?.stop();
});

const aliceInbox = () => ({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` });
const relationship = async (id: number) => (await alice.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(id) } })).body[0];

describe("Move", () => {
  test("a move to an account that names the old one as its alias shows `moved`, and alice follows the new account; a move elsewhere is ignored", async () => {
    const old = (await a.federation!.resolveActor(before.actor))!;
    expect((await alice.client.post(`/api/v1/accounts/${old.id}/follow`)).body.requested).toBe(true);
    // The old server accepts alice's follow.
    await before.send(aliceInbox(), new Accept({ id: new URL(`${before.base}/accepts/1`), actor: new URL(before.actor), object: new Follow({ actor: new URL(`${a.base}/users/alice`), object: new URL(before.actor) }) }));
    await eventually(async () => (await relationship(old.id)).following === true, "alice follows the old account");

    // A move to a stranger who does not name the old account: nothing changes.
    await before.send(aliceInbox(), new Move({ id: new URL(`${before.base}/moves/forged`), actor: new URL(before.actor), object: new URL(before.actor), target: new URL(stranger.actor) }));
    after.profile = { aliases: [new URL(before.actor)] };
    await before.send(aliceInbox(), new Move({ id: new URL(`${before.base}/moves/1`), actor: new URL(before.actor), object: new URL(before.actor), target: new URL(after.actor) }));

    const shown = await eventually(async () => {
      const body = (await alice.client.get(`/api/v1/accounts/${old.id}`)).body;
      return body.moved ? body : null;
    }, "the old account shows moved");
    expect(shown.moved).toMatchObject({ acct: `carol@${new URL(after.base).host}`, uri: after.actor });
    expect(shown.moved.moved).toBeUndefined();
    const moved = a.ctx.services.remoteAccounts.byUri(after.actor)!;
    expect(await relationship(moved.id)).toMatchObject({ requested: true });
    expect(await relationship(old.id)).toMatchObject({ following: false });
    await a.federation!.idle();
    expect(after.posts.some((p) => p.type === "Follow")).toBe(true);
    // Everything A received is handled now: the move elsewhere, whenever it was, changed nothing.
    expect(a.ctx.services.accounts.findById(old.id)!.movedToAccountId).toBe(moved.id);
  });
});
