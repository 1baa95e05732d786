import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept, Create, Delete, Note, Tombstone } from "@fedify/fedify/vocab";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let a: TestServer;
let alice: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  receiver = await startReceiver();
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
});

describe("a local post reaches remote followers", () => {
  test("Create for public, unlisted and private statuses, none for direct; Delete after its Create", async () => {
    await receiver.follow(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`);
    await eventually(() => receiver.received.some((x) => x instanceof Accept), "carol's follow accepted");

    const pub = await postStatus(alice, { status: "hello fediverse", visibility: "public" });
    const unl = await postStatus(alice, { status: "quietly", visibility: "unlisted" });
    const priv = await postStatus(alice, { status: "followers only", visibility: "private" });
    await postStatus(alice, { status: "just between us @alice", visibility: "direct" });
    const creates = await eventually(() => {
      const found = receiver.received.filter((x): x is Create => x instanceof Create);
      return found.length >= 3 ? found : null;
    }, "three Creates delivered");
    const notes = await Promise.all(creates.map((c) => c.getObject()));
    const byUri = new Map(notes.map((n) => [n!.id!.href, n as Note]));
    expect([...byUri.keys()].sort()).toEqual([pub.uri, unl.uri, priv.uri].sort());
    expect(byUri.get(pub.uri)!.content?.toString()).toBe(pub.content);
    expect(byUri.get(pub.uri)!.toIds.map(String)).toEqual(["https://www.w3.org/ns/activitystreams#Public"]);
    expect(byUri.get(priv.uri)!.toIds.map(String)).toEqual([`${a.base}/users/alice/followers`]);
    expect(byUri.get(priv.uri)!.ccIds).toEqual([]);

    expect((await alice.client.delete(`/api/v1/statuses/${pub.id}`)).status).toBe(200);
    const deleted = await eventually(() => receiver.received.find((x): x is Delete => x instanceof Delete), "Delete delivered");
    const tomb = await deleted.getObject();
    expect(tomb).toBeInstanceOf(Tombstone);
    expect(tomb!.id!.href).toBe(pub.uri);
    // The direct message never went out: once A's queue is drained (the Delete's message is
    // acknowledged a moment after carol answered it), everything delivered is accounted for.
    await a.federation!.idle();
    expect(receiver.received.filter((x) => x instanceof Create)).toHaveLength(3);
    expect(await a.federation!.queue.pending()).toBe(0);
  });
});
