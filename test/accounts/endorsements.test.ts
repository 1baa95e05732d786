import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  [alice, bob, carol, dave] = (await Promise.all(["alice", "bob", "carol", "dave"].map((n) => createUser(server, n)))) as [TestUser, TestUser, TestUser, TestUser];
  for (const target of [bob, carol, dave]) expect((await alice.client.post(`/api/v1/accounts/${target.id}/follow`)).status).toBe(200);
});
afterAll(() => server.close());

const pinCount = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM account_pins"))!.n;

describe("endorsements", () => {
  test("pin answers the relationship with endorsed, the list pages newest first with Link, unpin undoes", async () => {
    const pinned = await alice.client.post(`/api/v1/accounts/${bob.id}/pin`);
    expect(pinned.status).toBe(200);
    expect(pinned.body).toMatchObject({ id: bob.id, following: true, endorsed: true });
    // Pinning twice is harmless, as Mastodon's find_or_create_by!.
    expect((await alice.client.post(`/api/v1/accounts/${bob.id}/pin`)).body.endorsed).toBe(true);
    expect((await alice.client.post(`/api/v1/accounts/${carol.id}/pin`)).status).toBe(200);

    const rel = await alice.client.get(`/api/v1/accounts/relationships?id[]=${bob.id}&id[]=${dave.id}`);
    expect(rel.body.map((r: { endorsed: boolean }) => r.endorsed)).toEqual([true, false]);

    const first = await alice.client.get("/api/v1/endorsements?limit=1");
    expect(first.status).toBe(200);
    expect(first.body.map((a: { id: string }) => a.id)).toEqual([carol.id]);
    expect(first.headers.get("link")).toContain('rel="next"');
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link")!)![1]!;
    const second = await alice.client.get(next.slice(server.ctx.config.publicUrl.length));
    expect(second.body.map((a: { id: string }) => a.id)).toEqual([bob.id]);
    expect((await bob.client.get("/api/v1/endorsements")).body).toEqual([]);

    const unpinned = await alice.client.post(`/api/v1/accounts/${carol.id}/unpin`);
    expect(unpinned.status).toBe(200);
    expect(unpinned.body).toMatchObject({ id: carol.id, following: true, endorsed: false });
    // Unpinning what is not pinned answers the relationship all the same.
    expect((await alice.client.post(`/api/v1/accounts/${carol.id}/unpin`)).body.endorsed).toBe(false);
    expect((await alice.client.get("/api/v1/endorsements")).body.map((a: { id: string }) => a.id)).toEqual([bob.id]);
  });

  test("only followed accounts can be endorsed (422), and an unfollow ends the endorsement", async () => {
    const before = await pinCount();
    for (const target of [alice, bob]) {
      const res = await bob.client.post(`/api/v1/accounts/${target.id}/pin`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Validation failed: You must be already following the person you want to endorse" });
    }
    expect(await pinCount()).toBe(before);

    expect((await alice.client.post(`/api/v1/accounts/${dave.id}/pin`)).body.endorsed).toBe(true);
    expect((await alice.client.post(`/api/v1/accounts/${dave.id}/unfollow`)).body).toMatchObject({ following: false, endorsed: false });
    expect((await alice.client.get("/api/v1/endorsements")).body.map((a: { id: string }) => a.id)).not.toContain(dave.id);
  });

  test("a pin sent several times at once (a double submit): each answered with the relationship, endorsed once", async () => {
    const before = Number(await pinCount());
    const answers = await Promise.all(Array.from({ length: 4 }, () => alice.client.post(`/api/v1/accounts/${carol.id}/pin`)));
    expect(answers.map((res) => [res.status, res.body.endorsed])).toEqual(Array(4).fill([200, true]));
    expect(Number(await pinCount())).toBe(before + 1);
    expect((await alice.client.post(`/api/v1/accounts/${carol.id}/unpin`)).body.endorsed).toBe(false);
  });

  test("unknown accounts are 404, a missing token 401, a read-only token 403", async () => {
    for (const path of ["/api/v1/accounts/999999/pin", "/api/v1/accounts/999999/unpin", "/api/v1/accounts/nope/pin"]) {
      const res = await alice.client.post(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    const anon = await alice.client.post(`/api/v1/accounts/${bob.id}/pin`, { token: null });
    expect(anon.status).toBe(401);
    expect((await alice.client.get("/api/v1/endorsements", { token: null })).status).toBe(401);
    const reader = await createUser(server, "reader", { scopes: "read" });
    const res = await reader.client.post(`/api/v1/accounts/${bob.id}/pin`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
  });
});
