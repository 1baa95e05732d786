import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { Client } from "../support/http.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  [alice, bob] = (await Promise.all(["alice", "bob"].map((n) => createUser(server, n)))) as [TestUser, TestUser];
});
afterAll(() => server.close());

const featuredCount = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM featured_tags"))!.n;
const today = () => new Date(server.ctx.clock.now()).toISOString().slice(0, 10);

describe("featured tags", () => {
  test("create counts the public and unlisted statuses carrying the tag; index, account list and delete", async () => {
    await postStatus(alice, { status: "untagged words" });
    await postStatus(alice, { status: "one #Rust", visibility: "public" });
    await postStatus(alice, { status: "two #rust", visibility: "unlisted" });
    await postStatus(alice, { status: "hidden #rust", visibility: "private" });
    await postStatus(bob, { status: "not alice's #rust" });

    const created = await alice.client.post("/api/v1/featured_tags", { json: { name: "#Rust" } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: "Rust",
      url: `${server.ctx.config.publicUrl}/@alice/tagged/Rust`,
      statuses_count: "2",
      last_status_at: today(),
    });
    // Its url opens the profile with only the posts carrying the tag.
    const page = await fetch(created.body.url, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("one ");
    expect(html).toContain("two ");
    expect(html).not.toContain("hidden ");
    expect(html).not.toContain("untagged words");
    expect((await fetch(`${server.base}/@nobody/tagged/Rust`, { headers: { accept: "text/html" } })).status).toBe(404);
    // The same name again answers the one there is.
    expect((await alice.client.post("/api/v1/featured_tags", { form: { name: "Rust" } })).body).toEqual(created.body);

    const unused = await alice.client.post("/api/v1/featured_tags", { json: { name: "quiet" } });
    expect(unused.body).toMatchObject({ name: "quiet", statuses_count: "0", last_status_at: null });

    // The owner's list puts the most used first; the public one is in creation order.
    const mine = await alice.client.get("/api/v1/featured_tags");
    expect(mine.body.map((f: { name: string }) => f.name)).toEqual(["Rust", "quiet"]);
    const shown = await new Client(server.base).get(`/api/v1/accounts/${alice.id}/featured_tags`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual([created.body, unused.body]);
    expect((await bob.client.get("/api/v1/featured_tags")).body).toEqual([]);

    // Another user cannot delete it; its owner can, once.
    for (const user of [bob]) {
      const res = await user.client.delete(`/api/v1/featured_tags/${unused.body.id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect((await alice.client.delete(`/api/v1/featured_tags/${unused.body.id}`)).body).toEqual({});
    expect((await alice.client.delete(`/api/v1/featured_tags/${unused.body.id}`)).status).toBe(404);
    expect((await alice.client.delete("/api/v1/featured_tags/nope")).status).toBe(404);
    expect((await alice.client.get("/api/v1/featured_tags")).body).toEqual([created.body]);
  });

  test("invalid names, the same tag spelled otherwise, and the eleventh tag are 422 and store nothing", async () => {
    const user = await createUser(server, "carol");
    expect((await user.client.post("/api/v1/featured_tags", { json: { name: "Cats" } })).status).toBe(200);
    const before = await featuredCount();
    const cases: [Record<string, unknown>, string][] = [
      [{}, "Validation failed: Name can't be blank, Name is invalid"],
      [{ name: "  " }, "Validation failed: Name can't be blank, Name is invalid"],
      [{ name: "two words" }, "Validation failed: Name is invalid"],
      [{ name: "123" }, "Validation failed: Name is invalid"],
      [{ name: "CATS" }, "Validation failed: Name has already been taken"],
    ];
    for (const [body, error] of cases) {
      const res = await user.client.post("/api/v1/featured_tags", { json: body });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error });
    }
    expect(await featuredCount()).toBe(before);
    for (let i = 1; i < 10; i++) expect((await user.client.post("/api/v1/featured_tags", { json: { name: `tag${i}` } })).status).toBe(200);
    const full = await user.client.post("/api/v1/featured_tags", { json: { name: "eleventh" } });
    expect(full.status).toBe(422);
    expect(full.body).toEqual({ error: "Validation failed: You have already featured the maximum number of hashtags" });
    expect(await featuredCount()).toBe(before + 9);
  });

  test("a name over 500 characters or with control characters is 422, and neither a featured tag nor a tag is stored", async () => {
    const user = await createUser(server, "erin");
    const tagCount = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM tags"))!.n;
    const [featured, tags] = [await featuredCount(), await tagCount()];
    const cases: [string, string][] = [
      ["a".repeat(10_000), "Validation failed: Name is too long (maximum is 500 characters)"],
      ["a".repeat(501), "Validation failed: Name is too long (maximum is 500 characters)"],
      ["a b".repeat(4000), "Validation failed: Name is invalid, Name is too long (maximum is 500 characters)"],
      ["ca\u0000ts", "Validation failed: Name is invalid"],
      ["cats\u0007", "Validation failed: Name is invalid"],
      ["\u0000", "Validation failed: Name is invalid"],
      ["ca\u009bts", "Validation failed: Name is invalid"],
    ];
    for (const [name, error] of cases) {
      for (const body of [{ json: { name } }, { form: { name } }]) {
        const res = await user.client.post("/api/v1/featured_tags", body);
        expect([name.slice(0, 20), res.status, res.body]).toEqual([name.slice(0, 20), 422, { error }]);
      }
    }
    expect([await featuredCount(), await tagCount()]).toEqual([featured, tags]);
    // Characters, not UTF-16 units: 500 letters outside the BMP are a name of 500.
    const astral = await user.client.post("/api/v1/featured_tags", { json: { name: "𝒜".repeat(500) } });
    expect(astral.status).toBe(200);
    const longest = await user.client.post("/api/v1/featured_tags", { json: { name: "b".repeat(500) } });
    expect(longest.status).toBe(200);
    expect(longest.body.name).toBe("b".repeat(500));
    expect(await featuredCount()).toBe(featured + 2);
  });

  test("suggestions are the account's most used recent tags, not those already featured, as Tag entities", async () => {
    const user = await createUser(server, "dave");
    await postStatus(user, { status: "#alpha #beta" });
    await postStatus(user, { status: "#beta #gamma" });
    await postStatus(user, { status: "#beta" });
    await postStatus(user, { status: "#gamma" });
    expect((await user.client.post("/api/v1/featured_tags", { json: { name: "alpha" } })).status).toBe(200);
    expect((await user.client.post("/api/v1/tags/gamma/follow")).status).toBe(200);
    const res = await user.client.get("/api/v1/featured_tags/suggestions");
    expect(res.status).toBe(200);
    expect(res.body.map((t: { name: string }) => t.name)).toEqual(["beta", "gamma"]);
    expect(res.body[0]).toEqual({
      id: expect.any(String),
      name: "beta",
      url: `${server.ctx.config.publicUrl}/tags/beta`,
      history: expect.any(Array),
      following: false,
    });
    expect(res.body[0].history[0]).toMatchObject({ uses: "3", accounts: "1" });
    expect(res.body[1].following).toBe(true);
  });

  test("tokens and scopes: 401 without, 403 for a read-only token writing; unknown accounts 404", async () => {
    const anon = new Client(server.base);
    for (const [method, path] of [["GET", "/api/v1/featured_tags"], ["POST", "/api/v1/featured_tags"], ["GET", "/api/v1/featured_tags/suggestions"], ["DELETE", "/api/v1/featured_tags/1"]] as const) {
      const res = await anon.request(method, path);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "The access token is invalid" });
    }
    const reader = await createUser(server, "reader", { scopes: "read" });
    const before = await featuredCount();
    const res = await reader.client.post("/api/v1/featured_tags", { json: { name: "nope" } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
    expect(await featuredCount()).toBe(before);
    const missing = await anon.get("/api/v1/accounts/999999/featured_tags");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "Record not found" });
  });
});
