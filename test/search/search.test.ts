import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let anon: Client;
let alice: TestUser;
let alan: TestUser;
let bob: TestUser;
let mallory: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
  alan = await createUser(server, "alan");
  bob = await createUser(server, "bob");
  mallory = await createUser(server, "mallory");
  await bob.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Alfred Bobbins" } });
  await bob.client.post(`/api/v1/accounts/${alan.id}/follow`);
  await mallory.client.post(`/api/v1/accounts/${alice.id}/block`);
  await postStatus(alice, { status: "#cats and #catsofmastodon and #cat" });
});
afterAll(() => server.close());

const names = (accounts: { username: string }[]) => accounts.map((a) => a.username);

describe("GET /api/v2/search", () => {
  test("finds accounts by username and display-name prefix, exact username first", async () => {
    const res = await bob.client.get("/api/v2/search", { query: { q: "al" } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["accounts", "statuses", "hashtags"]);
    // alan is followed by bob, so he comes before alice; bob's display name matches too.
    expect(names(res.body.accounts)).toEqual(["alan", "alice", "bob"]);
    const exact = await bob.client.get("/api/v2/search", { query: { q: "@alice", type: "accounts" } });
    expect(names(exact.body.accounts)[0]).toBe("alice");
    expect(exact.body.accounts[0]).toMatchObject({ acct: "alice", url: `${server.base}/@alice` });
  });

  test("following=true keeps followed accounts only; blocks hide both ways", async () => {
    const following = await bob.client.get("/api/v2/search", { query: { q: "al", following: "true" } });
    expect(names(following.body.accounts)).toEqual(["alan"]);
    expect(names((await mallory.client.get("/api/v2/search", { query: { q: "ali" } })).body.accounts)).toEqual([]);
    expect(names((await alice.client.get("/api/v2/search", { query: { q: "mal" } })).body.accounts)).toEqual([]);
  });

  test("anonymous searches need three characters, or a whole user@domain", async () => {
    expect((await anon.get("/api/v2/search", { query: { q: "al" } })).body.accounts).toEqual([]);
    expect(names((await anon.get("/api/v2/search", { query: { q: "ali" } })).body.accounts)).toEqual(["alice"]);
    const host = new URL(server.base).host;
    expect(names((await anon.get("/api/v2/search", { query: { q: `bob@${host}` } })).body.accounts)).toEqual(["bob"]);
    expect((await anon.get("/api/v2/search", { query: { q: "bob@elsewhere.example" } })).body.accounts).toEqual([]);
  });

  test("finds hashtags by prefix, the exact one first, with a week of history", async () => {
    const res = await alice.client.get("/api/v2/search", { query: { q: "#cat", type: "hashtags" } });
    expect(res.body.accounts).toEqual([]);
    expect(res.body.hashtags.map((t: { name: string }) => t.name)).toEqual(["cat", "cats", "catsofmastodon"]);
    const [cat] = res.body.hashtags;
    expect(cat).toMatchObject({ name: "cat", url: `${server.base}/tags/cat`, following: false });
    expect(cat.history).toHaveLength(7);
    expect(cat.history[0]).toEqual({ day: String(Math.floor(server.clock.now() / 86_400_000) * 86_400), accounts: "1", uses: "1" });
    const paged = await alice.client.get("/api/v2/search", { query: { q: "cat", type: "hashtags", limit: "1", offset: "1" } });
    expect(paged.body.hashtags.map((t: { name: string }) => t.name)).toEqual(["cats"]);
    // A query with @ is about accounts only; one starting with # about hashtags only.
    expect((await alice.client.get("/api/v2/search", { query: { q: "cat@x" } })).body.hashtags).toEqual([]);
    expect((await alice.client.get("/api/v2/search", { query: { q: "#al" } })).body.accounts).toEqual([]);
  });

  test("resolves this server's status and account URLs for signed-in callers who may see them", async () => {
    const open = await postStatus(alice, { status: "find me" });
    const hidden = await postStatus(alice, { status: "followers only", visibility: "private" });
    const statuses = async (who: Client, q: string) => (await who.get("/api/v2/search", { query: { q, resolve: "true" } })).body.statuses;
    expect((await statuses(bob.client, open.url)).map((s: { id: string }) => s.id)).toEqual([open.id]);
    expect((await statuses(bob.client, open.uri)).map((s: { id: string }) => s.id)).toEqual([open.id]);
    expect(await statuses(bob.client, hidden.url)).toEqual([]);
    expect(await statuses(alice.client, hidden.url)).toHaveLength(1);
    const account = await bob.client.get("/api/v2/search", { query: { q: `${server.base}/@alice`, resolve: "true" } });
    expect(names(account.body.accounts)).toEqual(["alice"]);
    // Without resolve a URL is not looked up, as Mastodon.
    expect((await bob.client.get("/api/v2/search", { query: { q: open.url } })).body.statuses).toEqual([]);
  });

  test("error rows: missing q, anonymous pagination or resolve, bad token", async () => {
    for (const query of [{}, { q: "" }, { q: "   " }] as Record<string, string>[]) {
      const res = await bob.client.get("/api/v2/search", { query });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "param is missing or the value is empty: q" });
    }
    const paged = await anon.get("/api/v2/search", { query: { q: "alice", offset: "5" } });
    expect(paged.status).toBe(401);
    expect(paged.body).toEqual({ error: "Search queries pagination is not supported without authentication" });
    const resolve = await anon.get("/api/v2/search", { query: { q: "alice", resolve: "true" } });
    expect(resolve.status).toBe(401);
    expect(resolve.body).toEqual({ error: "Search queries that resolve remote resources are not supported without authentication" });
    const bad = await anon.get("/api/v2/search", { query: { q: "alice" }, token: "nope" });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: "The access token is invalid" });
    expect((await bob.client.get("/api/v2/search", { query: { q: "alice", type: "nonsense" } })).body).toEqual({ accounts: [], statuses: [], hashtags: [] });
  });
});

describe("GET /api/v1/accounts/search", () => {
  test("answers signed-in users with accounts; others get Mastodon's errors", async () => {
    const res = await bob.client.get("/api/v1/accounts/search", { query: { q: "ala" } });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(["alan"]);
    expect((await bob.client.get("/api/v1/accounts/search")).body).toEqual([]);
    const none = await anon.get("/api/v1/accounts/search", { query: { q: "ala" } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
    const app = await anon.get("/api/v1/accounts/search", { query: { q: "ala" }, token: (await appToken(server, "read")).token });
    expect(app.status).toBe(422);
    expect(app.body).toEqual({ error: "This method requires an authenticated user" });
  });

  test("the query is a prefix of the name or of a display name's word, letters as written: % and _ match only themselves", async () => {
    const find = async (q: string) => names((await bob.client.get("/api/v1/accounts/search", { query: { q } })).body);
    expect(await find("ALI")).toEqual(["alice"]);
    expect(await find("bobbins")).toEqual(["bob"]);
    // Inside a word is no prefix: "lfred" is not found, "fred" neither.
    expect(await find("lfred")).toEqual([]);
    for (const q of ["a_an", "al%", "%ice", "_lice"]) expect([q, await find(q)]).toEqual([q, []]);
    const tags = await bob.client.get("/api/v2/search", { query: { q: "#ca_", type: "hashtags" } });
    expect(tags.body.hashtags).toEqual([]);
  });
});

describe("GET /api/v1/tags/:name", () => {
  test("a used tag, an unused one, and a name that is no tag", async () => {
    const used = await alice.client.get("/api/v1/tags/Cats");
    expect(used.status).toBe(200);
    expect(used.body).toMatchObject({ name: "cats", following: false });
    expect(used.body.id).not.toBe("");
    const unused = await anon.get("/api/v1/tags/neverused");
    expect(unused.body).toMatchObject({ id: "", name: "neverused" });
    expect(unused.body.following).toBeUndefined();
    for (const name of ["123", "%E0%A4%A", "a".repeat(501), "%23hash"]) {
      const bad = await anon.get(`/api/v1/tags/${name}`);
      expect(bad.status).toBe(404);
      expect(bad.body).toEqual({ error: "Record not found" });
    }
    expect((await anon.get("/api/v1/tags/caf%C3%A9")).body.name).toBe("cafe");
  });
});

test("masto.js searches through v2", async () => {
  const masto = createRestAPIClient({ url: server.base, accessToken: bob.token });
  const found = await masto.v2.search.list({ q: "ali", type: "accounts" });
  expect(found.accounts.map((a) => a.username)).toEqual(["alice"]);
});
