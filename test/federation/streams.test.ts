import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import { delivered, WsClient } from "../support/streams.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
const sockets: WsClient[] = [];

beforeAll(async () => {
  [a, b] = await startFederatedPair();
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await a?.close();
  await b?.close();
});

const open = async (server: TestServer, query: string, token?: string) => {
  const ws = await WsClient.open(`${server.base.replace("http", "ws")}/api/v1/streaming?${query}`, token);
  sockets.push(ws);
  return ws;
};

describe("remote statuses reach the streams as local ones do", () => {
  test("a followed remote account's post is an update on the follower's user stream and the federated stream, not the local one; its Delete a delete", async () => {
    const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteAlice.id) } })).body[0]?.following === true, "bob follows alice");

    const user = await open(b, "stream=user", bob.token);
    const federated = await open(b, "stream=public");
    const local = await open(b, "stream=public:local");
    const remote = await open(b, "stream=public:remote");
    await Promise.all([user.fence(), federated.fence(), local.fence(), remote.fence()]);

    const post = await postStatus(alice, { status: "live from A", visibility: "public" });
    const isPost = (f: Record<string, any>) => f.event === "update" && JSON.parse(f.payload).uri === post.uri;
    const onUser = JSON.parse((await user.waitFor(isPost)).payload);
    const onFederated = JSON.parse((await federated.waitFor(isPost)).payload);
    expect(onUser).toMatchObject({ uri: post.uri, content: "<p>live from A</p>", account: { acct: `alice@${new URL(a.base).host}` } });
    // The same JSON as the REST API shows bob.
    expect(onUser).toEqual((await bob.client.get(`/api/v1/statuses/${onUser.id}`)).body);
    expect(onFederated.id).toBe(onUser.id);
    expect(JSON.parse((await remote.waitFor(isPost)).payload).id).toBe(onUser.id);

    expect((await alice.client.delete(`/api/v1/statuses/${post.id}`)).status).toBe(200);
    await user.waitFor((f) => f.event === "delete" && f.payload === onUser.id);
    await federated.waitFor((f) => f.event === "delete" && f.payload === onUser.id);
    await remote.waitFor((f) => f.event === "delete" && f.payload === onUser.id);
    await delivered(b, local);
    expect(local.events).toEqual([]);
  });

  test("and a local post goes to public:local, never public:remote", async () => {
    const local = await open(b, "stream=public:local");
    const remote = await open(b, "stream=public:remote");
    await Promise.all([local.fence(), remote.fence()]);
    const post = await postStatus(bob, { status: "from B itself", visibility: "public" });
    await local.waitFor((f) => f.event === "update" && JSON.parse(f.payload).id === post.id);
    await delivered(b, remote);
    expect(remote.events).toEqual([]);
  });
});
