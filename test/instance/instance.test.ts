import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appToken, createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let http: Client;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer({ INSTANCE_TITLE: "Test Rookery", CONTACT_EMAIL: "admin@example.test" });
  http = new Client(server.base);
  alice = await createUser(server, "alice");
});
afterAll(() => server.close());

describe("instance documents", () => {
  test("GET /api/v1/instance", async () => {
    const res = await http.get("/api/v1/instance");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([
      "uri",
      "title",
      "short_description",
      "description",
      "email",
      "version",
      "urls",
      "stats",
      "thumbnail",
      "languages",
      "registrations",
      "approval_required",
      "invites_enabled",
      "configuration",
      "contact_account",
      "rules",
    ]);
    expect(res.body.uri).toBe(server.ctx.config.domain);
    expect(res.body.title).toBe("Test Rookery");
    expect(res.body.email).toBe("admin@example.test");
    expect(res.body.version).toMatch(/^4\.\d+\.\d+ \(compatible; Rookery \d+\.\d+\.\d+\)$/);
    expect(res.body.urls.streaming_api).toBe(server.base.replace("http", "ws"));
    expect(res.body.stats.user_count).toBe(1);
    expect(res.body.registrations).toBe(false);
    expect(res.body.configuration.statuses).toEqual({ max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23 });
    expect(res.body.configuration.polls).toEqual({ max_options: 4, max_characters_per_option: 50, min_expiration: 300, max_expiration: 2629746 });
  });

  test("GET /api/v2/instance", async () => {
    const res = await http.get("/api/v2/instance");
    expect(res.status).toBe(200);
    expect(res.body.domain).toBe(server.ctx.config.domain);
    expect(res.body.configuration.urls.streaming).toBe(server.base.replace("http", "ws"));
    expect(res.body.configuration.media_attachments.image_size_limit).toBe(16777216);
    expect(res.body.configuration.media_attachments.supported_mime_types).toContain("image/png");
    expect(res.body.configuration.vapid.public_key).toMatch(/^[A-Za-z0-9_-]{80,}$/);
    expect(res.body.registrations).toEqual({ enabled: false, approval_required: false, reason_required: false, message: null, url: null });
    expect(res.body.api_versions).toEqual({ mastodon: 7 });
    expect(res.body.contact).toEqual({ email: "admin@example.test", account: null });
    expect(res.body.version).toBe((await http.get("/api/v1/instance")).body.version);
  });

  test("nodeinfo names Rookery and its Mastodon upstream", async () => {
    const wellKnown = await http.get("/.well-known/nodeinfo");
    expect(wellKnown.body).toEqual({ links: [{ rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: `${server.base}/nodeinfo/2.0` }] });
    const info = await http.get("/nodeinfo/2.0");
    expect(info.status).toBe(200);
    expect(info.body.version).toBe("2.0");
    expect(info.body.software.name).toBe("rookery");
    expect(info.body.metadata.upstream.name).toBe("mastodon");
    expect(info.body.usage.users.total).toBe(1);
    expect(info.body.openRegistrations).toBe(false);
  });

  test("webfinger and host-meta", async () => {
    const domain = server.ctx.config.domain;
    const res = await http.get("/.well-known/webfinger", { query: { resource: `acct:alice@${domain}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/jrd+json");
    expect(res.body.subject).toBe(`acct:alice@${domain}`);
    expect(res.body.links).toContainEqual({ rel: "self", type: "application/activity+json", href: `${server.base}/users/alice` });
    expect((await http.get("/.well-known/webfinger", { query: { resource: `${server.base}/@alice` } })).status).toBe(200);
    expect((await http.get("/.well-known/webfinger", { query: { resource: `acct:nobody@${domain}` } })).status).toBe(404);
    expect((await http.get("/.well-known/webfinger", { query: { resource: "acct:alice@elsewhere.example" } })).status).toBe(404);
    expect((await http.get("/.well-known/webfinger")).status).toBe(400);
    const hostMeta = await http.get("/.well-known/host-meta");
    expect(hostMeta.headers.get("content-type")).toContain("application/xrd+xml");
    expect(hostMeta.text).toContain(`template="${server.base}/.well-known/webfinger?resource={uri}"`);
  });

  test("collections with nothing in them yet answer [] (no emojis, trends, rules, announcements, suggestions here), and the streaming health check OK", async () => {
    for (const path of ["/api/v1/custom_emojis", "/api/v1/trends/tags", "/api/v1/trends/statuses", "/api/v1/trends/links", "/api/v1/instance/rules"]) {
      const res = await http.get(path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
    for (const path of ["/api/v1/announcements", "/api/v2/suggestions", "/api/v1/followed_tags"]) {
      expect((await alice.client.get(path)).body).toEqual([]);
      expect((await http.get(path)).status).toBe(401);
    }
    const health = await http.get("/api/v1/streaming/health");
    expect(health.status).toBe(200);
    expect(health.text).toBe("OK");
  });
});

describe("the edge", () => {
  test("unknown routes and methods answer 404 JSON, never 405", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/nothing"],
      ["DELETE", "/api/v1/instance"],
      ["PUT", "/api/v1/apps"],
      ["GET", "/no/such/page"],
    ] as const) {
      const res = await http.request(method, path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(res.body).toEqual({ error: "Record not found" });
    }
  });

  test("CORS preflight from any origin, with the headers clients need exposed", async () => {
    const res = await fetch(`${server.base}/api/v1/statuses`, {
      method: "OPTIONS",
      headers: { origin: "https://elk.zone", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, idempotency-key" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toBe("POST, PUT, DELETE, GET, PATCH, OPTIONS");
    expect(res.headers.get("access-control-allow-headers")).toBe("authorization, content-type, idempotency-key");
    expect(res.headers.get("access-control-expose-headers")).toBe("Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id");
    for (const path of ["/oauth/token", "/.well-known/nodeinfo", "/nodeinfo/2.0"]) {
      const pre = await fetch(`${server.base}${path}`, { method: "OPTIONS", headers: { origin: "https://x.example", "access-control-request-method": "GET" } });
      expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    }
    const actual = await fetch(`${server.base}/api/v1/instance`, { headers: { origin: "https://elk.zone" } });
    expect(actual.headers.get("access-control-allow-origin")).toBe("*");
    expect(actual.headers.get("access-control-expose-headers")).toBe("Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id");
    // This server's tag, then the request's number (base 36).
    expect(actual.headers.get("x-request-id")).toMatch(/^[0-9a-z]{1,6}-[0-9a-z]+$/);
    const page = await fetch(`${server.base}/oauth/authorize`, { headers: { origin: "https://evil.example" } });
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("malformed and oversized bodies", async () => {
    const bad = await http.post("/api/v1/apps", { headers: { "content-type": "application/json" }, json: undefined, form: undefined });
    expect(bad.status).toBe(422);
    const malformed = await fetch(`${server.base}/api/v1/apps`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: "Error occurred while parsing request parameters" });
    const notObject = await fetch(`${server.base}/api/v1/apps`, { method: "POST", headers: { "content-type": "application/json" }, body: "[1,2]" });
    expect(notObject.status).toBe(400);
    const huge = await fetch(`${server.base}/api/v1/apps`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `client_name=${"x".repeat(2 * 1024 * 1024)}`,
    });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toEqual({ error: "Request body is too large" });
    const brokenMultipart = await fetch(`${server.base}/api/v1/apps`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=xyz" },
      body: "--xyz\r\nContent-Disposition: form-data; name=\"client_name\"\r\n\r\nbroken",
    });
    expect(brokenMultipart.status).toBe(400);
    expect(await brokenMultipart.json()).toEqual({ error: "Malformed multipart body" });
  });

  test("API responses are not cached and carry a request id", async () => {
    const res = await alice.client.get("/api/v1/accounts/verify_credentials");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
  });
});

describe("whitelist mode", () => {
  test("anonymous reads need a user; tokens still work", async () => {
    const locked = await startTestServer({ WHITELIST_MODE: "true" });
    try {
      const user = await createUser(locked, "wendy");
      const anonymous = await new Client(locked.base).get(`/api/v1/accounts/${user.id}`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ error: "This API requires an authenticated user" });
      expect((await user.client.get(`/api/v1/accounts/${user.id}`)).status).toBe(200);
      // What the instance tells about itself (counts, rules, emojis) is for its users too, as
      // Mastodon's instance controllers in limited federation mode: an app token is not a user.
      const app = await appToken(locked, "read");
      for (const path of ["/api/v1/instance", "/api/v2/instance", "/api/v1/instance/rules", "/api/v1/instance/extended_description", "/api/v1/instance/translation_languages", "/api/v1/custom_emojis"]) {
        for (const token of [null, app.token]) {
          const res = await new Client(locked.base).get(path, { token });
          expect([path, token === null, res.status, res.body]).toEqual([path, token === null, 401, { error: "This API requires an authenticated user" }]);
        }
        expect([path, (await user.client.get(path)).status]).toEqual([path, 200]);
      }
      expect((await user.client.get("/api/v1/instance")).body.stats.user_count).toBe(1);
    } finally {
      await locked.close();
    }
  });
});
