import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { SseClient } from "../support/streams.ts";

let server: TestServer;
let anon: Client;
let alice: TestUser;
let carol: TestUser;
let dave: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
  carol = await createUser(server, "carol");
  dave = await createUser(server, "dave");
});
afterAll(() => server.close());

const homeIds = async (user: TestUser) => (await user.client.get("/api/v1/timelines/home")).body.map((s: { id: string }) => s.id) as string[];

describe("following hashtags", () => {
  test("follow, read back, list with Link, unfollow", async () => {
    const followed = await carol.client.post("/api/v1/tags/Rookery/follow");
    expect(followed.status).toBe(200);
    expect(followed.body).toMatchObject({ name: "rookery", url: `${server.base}/tags/rookery`, following: true });
    expect((await carol.client.post("/api/v1/tags/rookery/follow")).body.following).toBe(true);
    expect((await carol.client.get("/api/v1/tags/rookery")).body.following).toBe(true);
    expect((await dave.client.get("/api/v1/tags/rookery")).body.following).toBe(false);
    expect((await anon.get("/api/v1/tags/rookery")).body.following).toBeUndefined();
    const search = await carol.client.get("/api/v2/search", { query: { q: "#rook", type: "hashtags" } });
    expect(search.body.hashtags[0]).toMatchObject({ name: "rookery", following: true });

    await carol.client.post("/api/v1/tags/birds/follow");
    const first = await carol.client.get("/api/v1/followed_tags", { query: { limit: "1" } });
    expect(first.body.map((t: { name: string }) => t.name)).toEqual(["birds"]);
    expect(first.headers.get("link")).toContain('rel="next"');
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link")!)![1]!;
    expect((await carol.client.get(next)).body.map((t: { name: string }) => t.name)).toEqual(["rookery"]);

    const unfollowed = await carol.client.post("/api/v1/tags/birds/unfollow");
    expect(unfollowed.body).toMatchObject({ name: "birds", following: false });
    expect((await carol.client.get("/api/v1/followed_tags")).body.map((t: { name: string }) => t.name)).toEqual(["rookery"]);
  });

  test("public statuses with a followed tag reach the home timeline and the user stream; others do not", async () => {
    await carol.client.post("/api/v1/tags/rookery/follow");
    const stream = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: carol.token });
    const pub = await postStatus(alice, { status: "hello #Rookery" });
    const unlisted = await postStatus(alice, { status: "quiet #rookery", visibility: "unlisted" });
    const other = await postStatus(alice, { status: "no tag here" });
    const boost = (await dave.client.post(`/api/v1/statuses/${pub.id}/reblog`)).body;
    const event = await stream.waitFor((e) => e.event === "update");
    expect(JSON.parse(event.data!).id).toBe(pub.id);
    stream.close();
    const home = await homeIds(carol);
    expect(home).toContain(pub.id);
    for (const id of [unlisted.id, other.id, boost.id]) expect(home).not.toContain(id);

    await carol.client.post(`/api/v1/accounts/${dave.id}/block`);
    const blocked = await postStatus(dave, { status: "from a blocked account #rookery" });
    expect(await homeIds(carol)).not.toContain(blocked.id);

    await carol.client.post("/api/v1/tags/rookery/unfollow");
    const after = await postStatus(alice, { status: "later #rookery" });
    expect(await homeIds(carol)).not.toContain(after.id);
  });

  test("error rows", async () => {
    const none = await anon.post("/api/v1/tags/rookery/follow");
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
    const app = await anon.post("/api/v1/tags/rookery/follow", { token: (await appToken(server, "write")).token });
    expect(app.status).toBe(422);
    expect(app.body).toEqual({ error: "This method requires an authenticated user" });
    const readOnly = await createUser(server, "reader", { scopes: "read" });
    const scope = await readOnly.client.post("/api/v1/tags/rookery/follow");
    expect(scope.status).toBe(403);
    expect(scope.body).toEqual({ error: "This action is outside the authorized scopes" });
    const bad = await carol.client.post("/api/v1/tags/123/follow");
    expect(bad.status).toBe(404);
    expect(bad.body).toEqual({ error: "Record not found" });
    expect((await anon.get("/api/v1/followed_tags")).status).toBe(401);
  });
});
