import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  [alice, bob, carol, dave] = (await Promise.all(["alice", "bob", "carol", "dave"].map((n) => createUser(server, n)))) as [TestUser, TestUser, TestUser, TestUser];
  for (const target of [bob, carol]) expect((await alice.client.post(`/api/v1/accounts/${target.id}/follow`)).status).toBe(200);
});
afterAll(() => server.close());

const listCount = async () => Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM lists"))!.n);

async function makeList(user: TestUser, body: Record<string, unknown> = { title: "Friends" }) {
  const res = await user.client.post("/api/v1/lists", { json: body });
  expect(res.status).toBe(200);
  return res.body as { id: string; title: string; replies_policy: string; exclusive: boolean };
}

describe("lists CRUD", () => {
  test("create, show, index, update, delete with Mastodon's entity", async () => {
    const list = await makeList(alice, { title: "  Close friends " });
    expect(list).toEqual({ id: expect.any(String), title: "Close friends", replies_policy: "list", exclusive: false });
    expect((await alice.client.get(`/api/v1/lists/${list.id}`)).body).toEqual(list);
    expect((await alice.client.get("/api/v1/lists")).body).toContainEqual(list);
    const updated = await alice.client.put(`/api/v1/lists/${list.id}`, { form: { title: "Closest", replies_policy: "followed", exclusive: "true" } });
    expect(updated.body).toEqual({ id: list.id, title: "Closest", replies_policy: "followed", exclusive: true });
    expect((await alice.client.delete(`/api/v1/lists/${list.id}`)).body).toEqual({});
    expect((await alice.client.get(`/api/v1/lists/${list.id}`)).status).toBe(404);
  });

  test("validation errors are 422 and store nothing", async () => {
    const before = await listCount();
    const cases: [Record<string, unknown>, string][] = [
      [{}, "Validation failed: Title can't be blank"],
      [{ title: "   " }, "Validation failed: Title can't be blank"],
      [{ title: "x".repeat(257) }, "Validation failed: Title is too long (maximum is 256 characters)"],
      [{ title: "ok", replies_policy: "everyone" }, "Validation failed: Replies policy is not included in the list"],
    ];
    for (const [body, error] of cases) {
      const res = await alice.client.post("/api/v1/lists", { json: body });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error });
    }
    expect(await listCount()).toBe(before);
  });

  test("another user's list, unknown and malformed ids are 404 Record not found", async () => {
    const list = await makeList(alice);
    for (const [method, path] of [
      ["GET", `/api/v1/lists/${list.id}`],
      ["PUT", `/api/v1/lists/${list.id}`],
      ["DELETE", `/api/v1/lists/${list.id}`],
      ["GET", `/api/v1/lists/${list.id}/accounts`],
      ["GET", `/api/v1/timelines/list/${list.id}`],
      ["GET", "/api/v1/lists/99999999"],
      ["GET", "/api/v1/lists/nope"],
    ] as const) {
      const res = await bob.client.request(method, path, method === "GET" ? {} : { json: { title: "mine now" } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect((await alice.client.get(`/api/v1/lists/${list.id}`)).body.title).toBe("Friends");
  });

  test("tokens: none is 401, wrong scope 403, app-only 422", async () => {
    const none = await alice.client.get("/api/v1/lists", { token: null });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
    const readOnly = await createUser(server, "reader", { scopes: "read" });
    const write = await readOnly.client.post("/api/v1/lists", { json: { title: "x" } });
    expect(write.status).toBe(403);
    expect(write.body).toEqual({ error: "This action is outside the authorized scopes" });
    expect((await readOnly.client.get("/api/v1/lists")).status).toBe(200);
    const app = await alice.client.get("/api/v1/lists", { token: (await appToken(server)).token });
    expect(app.status).toBe(422);
    expect(app.body).toEqual({ error: "This method requires an authenticated user" });
  });
});

describe("list members", () => {
  test("only followed accounts; duplicates and strangers are 422; unknown ids 404; all or nothing", async () => {
    const list = await makeList(alice);
    const ok = await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { form: [["account_ids[]", bob.id]] });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({});

    const stranger = await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { form: [["account_ids[]", carol.id], ["account_ids[]", dave.id]] });
    expect(stranger.status).toBe(422);
    expect(stranger.body).toEqual({ error: "Validation failed: Account must be a followed account" });
    const again = await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [bob.id] } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ error: "Validation failed: Account is already on the list" });
    const unknown = await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: ["123456789"] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: "Record not found" });

    const members = await alice.client.get(`/api/v1/lists/${list.id}/accounts`);
    expect(members.body.map((a: { id: string }) => a.id)).toEqual([bob.id]);
    expect((await alice.client.get(`/api/v1/accounts/${bob.id}/lists`)).body.map((l: { id: string }) => l.id)).toContain(list.id);

    expect((await alice.client.delete(`/api/v1/lists/${list.id}/accounts`, { query: { "account_ids[]": bob.id } })).body).toEqual({});
    expect((await alice.client.get(`/api/v1/lists/${list.id}/accounts`)).body).toEqual([]);
  });

  test("limit=0 lists everyone without a Link header; pages link with max_id and since_id", async () => {
    const list = await makeList(alice);
    await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [bob.id, carol.id] } });
    const all = await alice.client.get(`/api/v1/lists/${list.id}/accounts`, { query: { limit: "0" } });
    expect(all.body).toHaveLength(2);
    expect(all.headers.get("link")).toBeNull();
    const one = await alice.client.get(`/api/v1/lists/${list.id}/accounts`, { query: { limit: "1" } });
    expect(one.body).toHaveLength(1);
    expect(one.headers.get("link")).toMatch(/max_id=.*rel="next".*since_id=.*rel="prev"/);
  });
});

describe("list timelines", () => {
  test("members' statuses land in the list, by replies policy; unfollowing removes the member", async () => {
    const list = await makeList(alice, { title: "Bob", replies_policy: "none" });
    await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [bob.id] } });
    const plain = await postStatus(bob, { status: "hello list" });
    const privateOne = await postStatus(bob, { status: "followers only", visibility: "private" });
    const dm = await postStatus(bob, { status: "@carol psst", visibility: "direct" });
    const carolPost = await postStatus(carol, { status: "carol here" });
    const replyToCarol = await postStatus(bob, { status: "@carol yes", in_reply_to_id: carolPost.id });
    const aliceSays = await postStatus(alice, { status: "hi bob" });
    const replyToAlice = await postStatus(bob, { status: "@alice hi", in_reply_to_id: aliceSays.id });

    const timeline = await alice.client.get(`/api/v1/timelines/list/${list.id}`);
    expect(timeline.status).toBe(200);
    const ids = timeline.body.map((s: { id: string }) => s.id);
    expect(ids).toEqual([replyToAlice.id, privateOne.id, plain.id]);
    expect(ids).not.toContain(dm.id);
    expect(ids).not.toContain(replyToCarol.id);
    expect(timeline.headers.get("link")).toContain(`min_id=${replyToAlice.id}`);

    // A deleted status leaves the list.
    await bob.client.delete(`/api/v1/statuses/${plain.id}`);
    expect((await alice.client.get(`/api/v1/timelines/list/${list.id}`)).body.map((s: { id: string }) => s.id)).not.toContain(plain.id);

    await alice.client.post(`/api/v1/accounts/${bob.id}/unfollow`);
    expect((await alice.client.get(`/api/v1/lists/${list.id}/accounts`)).body).toEqual([]);
    expect((await alice.client.get(`/api/v1/timelines/list/${list.id}`)).body).toEqual([]);
    await alice.client.post(`/api/v1/accounts/${bob.id}/follow`);
  });

  test("members of an exclusive list stay out of the home timeline", async () => {
    const list = await makeList(alice, { title: "Carol only", exclusive: true });
    await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [carol.id] } });
    const status = await postStatus(carol, { status: "exclusive news" });
    const home = await alice.client.get("/api/v1/timelines/home");
    expect(home.body.map((s: { id: string }) => s.id)).not.toContain(status.id);
    const listed = await alice.client.get(`/api/v1/timelines/list/${list.id}`);
    expect(listed.body.map((s: { id: string }) => s.id)).toContain(status.id);
    await alice.client.delete(`/api/v1/lists/${list.id}`);
  });

  test("adding a member brings their earlier statuses", async () => {
    const earlier = await postStatus(carol, { status: "before the list" });
    const list = await makeList(alice, { title: "Late" });
    await alice.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [carol.id] } });
    const timeline = await alice.client.get(`/api/v1/timelines/list/${list.id}`);
    expect(timeline.body.map((s: { id: string }) => s.id)).toContain(earlier.id);
  });
});
