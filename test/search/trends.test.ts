import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2026, 10, 24, 12);

let server: TestServer;
let http: Client;
let users: TestUser[];

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(NOW - 10 * DAY) });
  http = new Client(server.base);
  users = await Promise.all(["ann", "ben", "cat"].map((n) => createUser(server, n)));
  const [ann, ben, cat] = users as [TestUser, TestUser, TestUser];
  // Ten days ago: too old to count.
  await postStatus(ann, { status: "#ancient #ancient2" });
  server.clock.set(NOW - 2 * DAY);
  await postStatus(ann, { status: "#rookery #cats" });
  server.clock.set(NOW);
  await postStatus(ben, { status: "#Rookery" });
  await postStatus(cat, { status: "#rookery and #cats" });
  await postStatus(ann, { status: "#cats #cats again" });
  await postStatus(ann, { status: "#solo" });
  await postStatus(ann, { status: "#solo" });
  // Not public: not trending.
  await postStatus(ben, { status: "#secret", visibility: "unlisted" });
  await postStatus(cat, { status: "#secret", visibility: "private" });
});
afterAll(() => server.close());

describe("GET /api/v1/trends/tags", () => {
  test("the public hashtags of the last seven days, by accounts then uses, as Tag entities with their history", async () => {
    const res = await http.get("/api/v1/trends/tags");
    expect(res.status).toBe(200);
    expect(res.body.map((t: { name: string }) => t.name)).toEqual(["rookery", "cats", "solo"]);
    const today = String(Math.floor(NOW / DAY) * (DAY / 1000));
    expect(res.body[0]).toEqual({ id: expect.any(String), name: "rookery", url: `${server.base}/tags/rookery`, history: expect.any(Array) });
    expect(res.body[0].history).toHaveLength(7);
    expect(res.body[0].history[0]).toEqual({ day: today, accounts: "2", uses: "2" });
    expect(res.body[0].history[2]).toMatchObject({ accounts: "1", uses: "1" });
    expect((await http.get("/api/v1/trends")).body).toEqual(res.body);
  });

  test("limit and offset page it, with Link headers; a signed-in viewer sees following", async () => {
    const first = await http.get("/api/v1/trends/tags", { query: { limit: "2" } });
    expect(first.body.map((t: { name: string }) => t.name)).toEqual(["rookery", "cats"]);
    expect(first.headers.get("link")).toBe(`<${server.ctx.config.publicUrl}/api/v1/trends/tags?limit=2&offset=2>; rel="next"`);
    const second = await http.get("/api/v1/trends/tags", { query: { limit: "2", offset: "2" } });
    expect(second.body.map((t: { name: string }) => t.name)).toEqual(["solo"]);
    expect(second.headers.get("link")).toBeNull();
    const third = await http.get("/api/v1/trends/tags", { query: { limit: "1", offset: "2" } });
    expect(third.headers.get("link")).toContain('offset=1>; rel="prev"');
    expect((await http.get("/api/v1/trends/tags", { query: { limit: "100" } })).body).toHaveLength(3);

    const ann = users[0]!;
    await ann.client.post("/api/v1/tags/cats/follow");
    const mine = (await ann.client.get("/api/v1/trends/tags")).body;
    expect(mine.map((t: { following: boolean }) => t.following)).toEqual([false, true, false]);
  });

  test("past seven days a tag is no longer trending", async () => {
    server.clock.set(NOW + 8 * DAY);
    expect((await http.get("/api/v1/trends/tags")).body).toEqual([]);
    server.clock.set(NOW);
  });
});
