import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * A remote server's Follow delivered twice at once (a retry sent while the first delivery is
 * still handled: Fedify's idempotency key is written after the handler, so both run), and a
 * Follow from an actor whose IRI changed while its username on its domain stayed. Over HTTP,
 * signed, through the inbox queue, on the test mode's database (SQLite, or PostgreSQL where the
 * two deliveries are handled side by side, issue 31).
 */

let a: TestServer;
let alice: TestUser;
let remote: Awaited<ReturnType<typeof startRawServer>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  remote = await startRawServer("127.0.0.54");
});
afterAll(async () => {
  remote?.stop();
  await a?.close();
});

const answers = (followId: string) => remote.received.filter((r) => r.body?.object === followId || r.body?.object?.id === followId).map((r) => r.body.type as string);
const followersOf = async (user: TestUser) => (await user.client.get(`/api/v1/accounts/${user.id}/followers`)).body as { acct: string; uri: string; id: string }[];

describe("a remote Follow delivered twice at once", () => {
  test("one follower stored, one follow counted; answered with Accept, never Reject", async () => {
    const zed = remote.actor("zed", "zed");
    const follow = { id: `${remote.base}/follows/1`, type: "Follow", object: `${a.base}/users/alice` };
    const delivered = await Promise.all([remote.post(`${a.base}/users/alice/inbox`, zed, follow), remote.post(`${a.base}/inbox`, zed, follow)]);
    expect(delivered.map((r) => r.status)).toEqual([202, 202]);
    await a.federation!.idle();

    expect((await followersOf(alice)).map((f) => f.uri)).toEqual([zed]);
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(1);
    const sent = answers(follow.id);
    expect(sent.length).toBeGreaterThan(0);
    expect(new Set(sent)).toEqual(new Set(["Accept"]));
  });

  test("a Follow from a new IRI of the same username on the same domain (the server reinstalled): the account moves to it, follow kept, answered with Accept", async () => {
    const before = await followersOf(alice);
    const reinstalled = remote.actor("ap/users/7", "zed", { name: "Zed, reinstalled" });
    const follow = { id: `${remote.base}/follows/2`, type: "Follow", object: `${a.base}/users/alice` };
    expect((await remote.post(`${a.base}/users/alice/inbox`, reinstalled, follow)).status).toBe(202);
    await a.federation!.idle();

    expect(answers(follow.id)).toEqual(["Accept"]);
    const after = await followersOf(alice);
    expect(after.map((f) => [f.id, f.acct, f.uri])).toEqual([[before[0]!.id, before[0]!.acct, reinstalled]]);
    expect((await alice.client.get(`/api/v1/accounts/${before[0]!.id}`)).body).toMatchObject({ display_name: "Zed, reinstalled", uri: reinstalled });
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count).toBe(1);
  });
});
