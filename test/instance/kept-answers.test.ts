import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cliBeside } from "../support/cli.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let http: Client;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer({ INSTANCE_TITLE: "Kept Rookery" });
  http = new Client(server.base);
  alice = await createUser(server, "alice");
});
afterAll(() => server.close());

/** Two reads with no write between: the same bytes and ETag. Returns them. */
async function steady(client: Client, path: string) {
  const first = await client.get(path);
  const second = await client.get(path);
  expect(first.status).toBe(200);
  expect(second.text).toBe(first.text);
  const etag = first.headers.get("etag")!;
  expect(etag).toMatch(/^W\/"[0-9a-z]+"$/);
  expect(second.headers.get("etag")).toBe(etag);
  return { text: first.text, body: first.body, etag };
}

describe("instance documents kept per generation", () => {
  for (const path of ["/api/v1/instance", "/api/v2/instance"]) {
    test(`${path}: Mastodon's cache header, 304 to a matching If-None-Match, 200 to a stale one`, async () => {
      const { text, etag } = await steady(http, path);
      const res = await http.get(path);
      expect(res.headers.get("cache-control")).toBe("max-age=180, public");
      expect(res.headers.get("content-type")).toStartWith("application/json");
      const revalidated = await http.get(path, { headers: { "if-none-match": etag } });
      expect(revalidated.status).toBe(304);
      expect(revalidated.text).toBe("");
      expect(revalidated.headers.get("etag")).toBe(etag);
      const stale = await http.get(path, { headers: { "if-none-match": 'W/"stale"' } });
      expect(stale.status).toBe(200);
      expect(stale.text).toBe(text);
    });
  }

  test("a rule added, the registrations mode and a new post change the next answer and its ETag at once", async () => {
    let before = await steady(http, "/api/v1/instance");
    const rule = await server.ctx.services.instanceInfo.addRule("Be kind");
    let after = await steady(http, "/api/v1/instance");
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.rules).toEqual([{ id: String(rule.id), text: "Be kind", hint: "" }]);
    expect((await http.get("/api/v1/instance", { headers: { "if-none-match": before.etag } })).status).toBe(200);

    before = after;
    await server.ctx.services.instanceInfo.setRegistrationsMode("open");
    after = await steady(http, "/api/v1/instance");
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.registrations).toBe(true);
    const v2 = await steady(http, "/api/v2/instance");
    expect(v2.body.registrations.enabled).toBe(true);

    before = after;
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "hello" } })).status).toBe(200);
    after = await steady(http, "/api/v1/instance");
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.stats.status_count).toBe(before.body.stats.status_count + 1);
  });

  test("a write by another process (an account made with the CLI) changes the next answer at once", async () => {
    const before = await steady(http, "/api/v1/instance");
    const made = await cliBeside(server)(["accounts", "create", "carol", "--email", "carol@example.test", "--password", "a long enough password"]);
    expect(made.code).toBe(0);
    const after = await steady(http, "/api/v1/instance");
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.stats.user_count).toBe(before.body.stats.user_count + 1);
  });

  test("WHITELIST_MODE: for members only (401 and Mastodon's error without a user, nothing kept shown), cached privately", async () => {
    const locked = await startTestServer({ WHITELIST_MODE: "true" });
    try {
      const wendy = await createUser(locked, "wendy");
      for (const path of ["/api/v1/instance", "/api/v2/instance"]) {
        const kept = await steady(wendy.client, path);
        expect((await wendy.client.get(path)).headers.get("cache-control")).toBe("max-age=180, private");
        const anonymous = await new Client(locked.base).get(path, { headers: { "if-none-match": kept.etag } });
        expect(anonymous.status).toBe(401);
        expect(anonymous.body).toEqual({ error: "This API requires an authenticated user" });
        expect(anonymous.headers.get("etag")).toBeNull();
      }
    } finally {
      await locked.close();
    }
  });
});

describe("verify_credentials kept per account", () => {
  test("the same bytes for the account until it changes; 304 to a matching If-None-Match, not stored", async () => {
    const { text, etag } = await steady(alice.client, "/api/v1/accounts/verify_credentials");
    const res = await alice.client.get("/api/v1/accounts/verify_credentials");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const revalidated = await alice.client.get("/api/v1/accounts/verify_credentials", { headers: { "if-none-match": etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.text).toBe("");
    const stale = await alice.client.get("/api/v1/accounts/verify_credentials", { headers: { "if-none-match": 'W/"old", W/"older"' } });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(text);
  });

  test("another account gets its own answer, never the kept one of the first", async () => {
    const bob = await createUser(server, "bob");
    const a = await steady(alice.client, "/api/v1/accounts/verify_credentials");
    const b = await steady(bob.client, "/api/v1/accounts/verify_credentials");
    expect(b.body.username).toBe("bob");
    expect(a.body.username).toBe("alice");
    expect(b.etag).not.toBe(a.etag);
  });

  test("a profile update and a new post change the next answer and its ETag at once", async () => {
    const before = await steady(alice.client, "/api/v1/accounts/verify_credentials");
    expect((await alice.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Alice Kept" } })).status).toBe(200);
    const renamed = await steady(alice.client, "/api/v1/accounts/verify_credentials");
    expect(renamed.etag).not.toBe(before.etag);
    expect(renamed.body.display_name).toBe("Alice Kept");
    expect((await alice.client.get("/api/v1/accounts/verify_credentials", { headers: { "if-none-match": before.etag } })).status).toBe(200);

    expect((await alice.client.post("/api/v1/statuses", { json: { status: "again" } })).status).toBe(200);
    const posted = await steady(alice.client, "/api/v1/accounts/verify_credentials");
    expect(posted.etag).not.toBe(renamed.etag);
    expect(posted.body.statuses_count).toBe(renamed.body.statuses_count + 1);
  });

  test("without a token: 401 and Mastodon's error, nothing kept is shown", async () => {
    const res = await http.get("/api/v1/accounts/verify_credentials");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "The access token is invalid" });
    expect(res.headers.get("etag")).toBeNull();
  });
});
