import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept, Create, Follow, Mention, Move, Note, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { Client } from "../support/http.ts";
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
    const moved = (await a.ctx.services.remoteAccounts.byUri(after.actor))!;
    expect(await relationship(moved.id)).toMatchObject({ requested: true });
    expect(await relationship(old.id)).toMatchObject({ following: false });
    await a.federation!.idle();
    expect(after.posts.some((p) => p.type === "Follow")).toBe(true);
    // Everything A received is handled now: the move elsewhere, whenever it was, changed nothing.
    expect((await a.ctx.services.accounts.get(old.id))!.movedToAccountId).toBe(moved.id);
  });

  test("the moved account shows `moved` wherever it is shown: as a status's author (cached or not), a notification's sender, in groups, lists and account lists", async () => {
    const old = (await a.ctx.services.remoteAccounts.byUri(before.actor))!;
    const movedTo = { acct: `carol@${new URL(after.base).host}`, uri: after.actor };
    const id = new URL(`${before.base}/notes/after-the-move`);
    const aliceUri = new URL(`${a.base}/users/alice`);
    const note = new Note({ id, attribution: new URL(before.actor), content: "<p>still here, @alice</p>", to: PUBLIC_COLLECTION, cc: aliceUri, tags: [new Mention({ href: aliceUri })] });
    await before.send(aliceInbox(), new Create({ id: new URL(`${id.href}/activity`), actor: new URL(before.actor), object: note, to: PUBLIC_COLLECTION, cc: aliceUri }));
    const mention = await eventually(async () => (await alice.client.get("/api/v1/notifications", { query: { "types[]": "mention" } })).body[0], "the mention arrived");

    const shown = (account: { id: string; moved?: { moved?: unknown } }) => {
      expect(account.id).toBe(String(old.id));
      expect(account.moved).toMatchObject(movedTo);
      expect(account.moved!.moved).toBeUndefined();
    };
    shown(mention.account);
    shown(mention.status.account);
    const statusId = mention.status.id;
    // Rendered anonymously into the render cache, then read from it; and for alice, with her flags.
    for (let i = 0; i < 2; i++) shown((await new Client(a.base).get(`/api/v1/statuses/${statusId}`)).body.account);
    shown((await alice.client.get(`/api/v1/statuses/${statusId}`)).body.account);
    shown((await alice.client.get("/api/v1/timelines/public")).body.find((s: { id: string }) => s.id === statusId).account);
    const grouped = (await alice.client.get("/api/v2/notifications", { query: { "types[]": "mention" } })).body;
    shown(grouped.accounts.find((acc: { id: string }) => acc.id === String(old.id)));
    shown(grouped.statuses.find((st: { id: string }) => st.id === statusId).account);
    shown((await alice.client.get("/api/v1/accounts", { query: { "id[]": String(old.id) } })).body[0]);
    // A list of accounts (here, those alice mutes).
    expect((await alice.client.post(`/api/v1/accounts/${old.id}/mute`)).status).toBe(200);
    shown((await alice.client.get("/api/v1/mutes")).body[0]);
  });
});
