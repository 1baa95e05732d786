import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept, Delete, Reject } from "@fedify/fedify/vocab";
import { startReceiver } from "../support/fedify-receiver.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import type { TestServer } from "../support/server.ts";
import { createStaff } from "../support/staff.ts";

// What other servers are told of staff actions, as Mastodon tells them: a local account
// suspended is sent to its followers' servers as an Update of its actor saying `suspended`,
// a deleted one as a Delete of its actor (not a Delete per status); a remote account suspended
// here has its follows of local accounts rejected. `receiver` is a bare Fedify server (carol).

let a: TestServer;
let b: TestServer;
let admin: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  receiver = await startReceiver("127.0.0.47");
  admin = await createStaff(a, "adam", "admin");
});
afterAll(async () => {
  receiver?.stop();
  await a?.close();
  await b?.close();
});

const ap = (url: string) => fetch(url, { headers: { accept: "application/activity+json" } });

async function followedByCarol(user: TestUser) {
  const follow = await receiver.follow(`${a.base}/users/${user.account.username}`, `${a.base}/users/${user.account.username}/inbox`);
  await eventually(() => receiver.received.some((x) => x instanceof Accept && x.actorId?.href === `${a.base}/users/${user.account.username}`), `${user.account.username} accepted carol`);
  return follow;
}

describe("a local account suspended, then deleted", () => {
  test("its followers' servers get an Update saying suspended, then a Delete of the actor; its actor document follows", async () => {
    const alice = await createUser(a, "alice");
    await alice.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Alice A.", note: "hello" } });
    const post = await postStatus(alice, { status: "a public post" });
    expect((await ap(`${a.base}/users/alice/statuses/${post.id}`)).status).toBe(200);
    await followedByCarol(alice);
    const aliceUri = `${a.base}/users/alice`;

    await admin.client.post(`/api/v1/admin/accounts/${alice.id}/action`, { json: { type: "suspend" } });
    // (The receiver records no Update: its POST is seen, and what it carries is the actor document below.)
    await eventually(() => receiver.posts.some((p) => p.type === "Update" && p.id.startsWith(`${aliceUri}#updates/`) && p.answered === 202), "the Update of alice's actor");
    const doc = await (await ap(aliceUri)).json();
    expect(doc).toMatchObject({ id: aliceUri, suspended: true, name: "alice", summary: "", discoverable: false });
    expect(doc.icon).toBeUndefined();
    // Its statuses and collections are not served while it is suspended.
    expect((await ap(`${aliceUri}/statuses/${post.id}`)).status).toBe(404);

    await admin.client.delete(`/api/v1/admin/accounts/${alice.id}`);
    const del = await eventually(() => receiver.received.find((x): x is Delete => x instanceof Delete && x.actorId?.href === aliceUri), "the Delete of alice's actor");
    expect(del.objectId?.href).toBe(aliceUri);
    expect((await ap(aliceUri)).status).toBe(410);
    // One Delete, of the actor: none for each of her statuses.
    expect(receiver.received.filter((x) => x instanceof Delete && x.actorId?.href === aliceUri)).toHaveLength(1);
  });
});

describe("a remote account suspended here", () => {
  test("its follows of local accounts end, each answered with Reject quoting the Follow; it is hidden here", async () => {
    const dora = await createUser(a, "dora");
    const follow = await followedByCarol(dora);
    const carol = (await a.ctx.services.remoteAccounts.byUri(receiver.actor))!;
    const res = await admin.client.post(`/api/v1/admin/accounts/${carol.id}/action`, { json: { type: "suspend" } });
    expect(res.status).toBe(200);
    const reject = await eventually(() => receiver.received.find((x): x is Reject => x instanceof Reject && x.actorId?.href === `${a.base}/users/dora`), "dora's Reject");
    expect(reject.objectId?.href).toBe(follow);
    const follows = (await a.database.port.get<{ n: number }>("SELECT count(*) AS n FROM follows WHERE account_id = ?", [carol.id]))!;
    expect(follows.n).toBe(0);
    expect((await dora.client.get(`/api/v1/accounts/${carol.id}`)).body).toMatchObject({ suspended: true });
    // What it sends now is not heard (an activity is handled before its delivery is answered).
    const accepts = receiver.received.filter((x) => x instanceof Accept).length;
    await receiver.follow(`${a.base}/users/dora`, `${a.base}/users/dora/inbox`);
    const after = (await a.database.port.get<{ n: number }>("SELECT (SELECT count(*) FROM follows WHERE account_id = ?) + (SELECT count(*) FROM follow_requests WHERE account_id = ?) AS n", [carol.id, carol.id]))!;
    expect(after.n).toBe(0);
    expect(receiver.received.filter((x) => x instanceof Accept).length).toBe(accepts);
  });
});
