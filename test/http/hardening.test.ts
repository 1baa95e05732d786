import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appToken, createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** Hostile and malformed input found by review: each must fail cleanly and change nothing. */
let server: TestServer;
let anon: Client;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATIONS: "open" });
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
});
afterAll(() => server.close());

describe("prototype pollution", () => {
  test("__proto__ keys in queries and bodies reach nothing", async () => {
    await anon.get(`/.well-known/webfinger?resource=x&__proto__[auth][accountId]=${alice.id}&__proto__[auth][scopes][]=write&__proto__[polluted]=1&constructor[prototype][polluted]=1`);
    await anon.post("/api/v1/apps", { json: { "__proto__[polluted]": "1", __proto__: { polluted: 1 }, client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob" } });
    await anon.post("/api/v1/apps", { form: [["__proto__[params]", "x"], ["client_name", "y"], ["redirect_uris", "urn:ietf:wg:oauth:2.0:oob"]] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).auth).toBeUndefined();
    expect(({} as Record<string, unknown>).params).toBeUndefined();
    const me = await anon.get("/api/v1/accounts/verify_credentials");
    expect(me.status).toBe(401);
    const app = await anon.post("/api/v1/apps", { form: { client_name: "still works", redirect_uris: "urn:ietf:wg:oauth:2.0:oob" } });
    expect(app.status).toBe(200);
  });
});

describe("size and time limits", () => {
  test("a huge profile note is refused quickly, and nothing changes", async () => {
    // CPU time (the server runs in this process), not wall-clock time, which a busy machine stretches.
    const started = process.cpuUsage();
    const res = await alice.client.patch("/api/v1/accounts/update_credentials", { json: { note: "#a" + "\u200c".repeat(120_000) } });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("Validation failed: Note character limit of 500 exceeded");
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(2000);
    expect((await alice.client.get("/api/v1/accounts/verify_credentials")).body.note).toBe("");
  });

  test("a huge status is refused quickly", async () => {
    const res = await alice.client.post("/api/v1/statuses", { json: { status: "#a" + "\u200c".repeat(200_000) } });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("Validation failed: Text character limit of 500 exceeded");
  });

  test("bodies: 413 JSON by declared length, by counted length when chunked, and large multipart only where uploads go", async () => {
    const big = `client_name=${"x".repeat(1_100_000)}`;
    const declared = await fetch(`${server.base}/api/v1/apps`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: big });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ error: "Request body is too large" });
    const chunked = await fetch(`${server.base}/api/v1/apps`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("x".repeat(100_000)));
          controller.close();
        },
      }),
    });
    expect(chunked.status).toBe(413);
    const form = new FormData();
    form.append("client_name", "x".repeat(2_000_000));
    const multipart = await fetch(`${server.base}/api/v1/apps`, { method: "POST", body: form, headers: { origin: "https://elk.zone" } });
    expect(multipart.status).toBe(413);
    expect(multipart.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("input validation found in review", () => {
  test("registration: over-long e-mail, unknown locale dropped, agreement must be exactly true", async () => {
    const { token } = await appToken(server, "read write");
    const long = await anon.post("/api/v1/accounts", { token, json: { username: "longmail", email: `${"a".repeat(400)}@example.test`, password: "longenough", agreement: true } });
    expect(long.status).toBe(422);
    expect(long.body.details.email).toEqual([{ error: "ERR_TOO_LONG", description: "is too long (maximum is 320 characters)" }]);
    const yes = await anon.post("/api/v1/accounts", { token, form: { username: "agreeing", email: "agree@example.test", password: "longenough", agreement: "yes" } });
    expect(yes.status).toBe(422);
    expect(yes.body.details.agreement[0].error).toBe("ERR_ACCEPTED");
    const ok = await anon.post("/api/v1/accounts", { token, json: { username: "localized", email: "loc@example.test", password: "longenough", agreement: "1", locale: "<script>" } });
    expect(ok.status).toBe(200);
    const prefs = await anon.get("/api/v1/preferences", { token: ok.body.access_token });
    expect(prefs.body["posting:default:language"]).toBeNull();
  });

  test("markers keep only id positions", async () => {
    const res = await alice.client.post("/api/v1/markers", { json: { home: { last_read_id: "x".repeat(5000) }, notifications: { last_read_id: "42" } } });
    expect(Object.keys(res.body)).toEqual(["notifications"]);
  });

  test("Link headers never carry a token or unknown parameters", async () => {
    const bob = await createUser(server, "bob");
    for (const name of ["f1", "f2"]) await (await createUser(server, name)).client.post(`/api/v1/accounts/${bob.id}/follow`);
    const res = await anon.get(`/api/v1/accounts/${bob.id}/followers`, { query: { limit: "1", access_token: alice.token, secret: "s" } });
    const link = res.headers.get("link")!;
    expect(link).toContain("limit=1");
    expect(link).not.toContain(alice.token);
    expect(link).not.toContain("secret");
  });

  test("unlocking an account approves its pending follow requests", async () => {
    const owner = await createUser(server, "unlocker", { locked: true });
    const fan = await createUser(server, "patient_fan");
    await fan.client.post(`/api/v1/accounts/${owner.id}/follow`);
    await owner.client.patch("/api/v1/accounts/update_credentials", { json: { locked: false } });
    expect((await owner.client.get("/api/v1/follow_requests")).body).toEqual([]);
    const rel = await fan.client.get("/api/v1/accounts/relationships", { query: { "id[]": owner.id } });
    expect(rel.body[0]).toMatchObject({ following: true, requested: false });
  });

  test("featured tags of an unknown account are 404", async () => {
    expect((await anon.get("/api/v1/accounts/999999/featured_tags")).status).toBe(404);
    expect((await anon.get(`/api/v1/accounts/${alice.id}/featured_tags`)).body).toEqual([]);
  });

  test("HEIC is not advertised (this build cannot decode it)", async () => {
    const types = (await anon.get("/api/v2/instance")).body.configuration.media_attachments.supported_mime_types;
    expect(types).not.toContain("image/heic");
    expect(types).toContain("image/avif");
  });
});
