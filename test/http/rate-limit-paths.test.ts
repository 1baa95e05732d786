import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import sharp from "sharp";
import { ManualClock } from "../../src/clock.ts";
import { routePath } from "../../src/net/paths.ts";
import { appToken, createUser, postStatus } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The router serves a path with a trailing slash, with a leading doubled slash, and with
// percent-encoded characters in its parameters just as it serves the plain path. Each limit
// must count those spellings in the same bucket, and refuse them once the bucket is full
// (also spellings the router does not serve, which cost the client its budget all the same).

const START = Date.UTC(2026, 10, 23, 9, 0, 0);
const MINUTE = 60_000;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMITS: "on", REGISTRATIONS: "open" }, { clock: new ManualClock(START) });
});
afterAll(() => server.close());

/** A request with the path exactly as written: no URL parsing on the client's side. */
async function raw(method: string, path: string, options: { token?: string; body?: BodyInit; json?: unknown; ip?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  const res = await fetch(server.base + path, { method, headers, body });
  const text = await res.text();
  return { status: res.status, text, limit: res.headers.get("x-ratelimit-limit"), nosniff: res.headers.get("x-content-type-options") };
}

function expectRefused(res: { status: number; text: string; limit: string | null; nosniff: string | null }, limit: string) {
  expect({ status: res.status, body: JSON.parse(res.text), limit: res.limit, nosniff: res.nosniff }).toEqual({ status: 429, body: { error: "Too many requests" }, limit, nosniff: "nosniff" });
}

describe("the path a limit is matched on", () => {
  test("trailing, doubled and dot segments, percent-encoding and case are undone; plain paths are kept as they are", () => {
    expect(routePath("/api/v1/statuses")).toBe("/api/v1/statuses");
    expect(routePath("/api/v1/accounts/")).toBe("/api/v1/accounts");
    expect(routePath("//api//v2/media//")).toBe("/api/v2/media");
    expect(routePath("/api/v1/./statuses/1/../2")).toBe("/api/v1/statuses/2");
    expect(routePath("/api/v1/statuses/%31%32")).toBe("/api/v1/statuses/12");
    expect(routePath("/API/V1/%61ccounts")).toBe("/api/v1/accounts");
    expect(routePath("/api/v1/statuses/%zz")).toBe("/api/v1/statuses/%zz");
    expect(routePath("/")).toBe("/");
  });
});

describe("every limit, whatever the spelling of its path", () => {
  test("account access: a doubled leading slash is still an API request, counted and refused", async () => {
    server.clock.set(START);
    const user = await createUser(server, "reader");
    for (let i = 0; i < 300; i++) {
      const res = await raw("GET", i % 2 === 0 ? "//api/v1/accounts/verify_credentials" : "/api/v1/accounts/verify_credentials/", { token: user.token });
      expect(res.status).toBe(200);
    }
    expectRefused(await raw("GET", "//api/v1/instance", { token: user.token }), "300");
    expectRefused(await raw("GET", "/api/v1/instance/", { token: user.token }), "300");
  });

  test("address access: the same for requests without an account", async () => {
    server.clock.set(START + 10 * MINUTE);
    for (let i = 0; i < 300; i++) expect((await raw("GET", i % 2 === 0 ? "//api/v1/instance" : "/api/v1/instance/")).status).toBe(200);
    expectRefused(await raw("GET", "/api/v1/instance"), "300");
    expectRefused(await raw("GET", "//api//v1/instance"), "300");
  });

  test("uploading: 30 per 30 minutes across /api/v2/media, /api/v2/media/ and //api/v1/media", async () => {
    server.clock.set(START + 30 * MINUTE);
    const user = await createUser(server, "uploader");
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#888" } }).png().toBuffer();
    const upload = (path: string) => {
      const form = new FormData();
      form.append("file", new Blob([png]), "x.png");
      return raw("POST", path, { token: user.token, body: form });
    };
    const spellings = ["/api/v2/media", "/api/v2/media/", "//api/v1/media"];
    for (let i = 0; i < 30; i++) expect([200, 202]).toContain((await upload(spellings[i % 3] as string)).status);
    const before = await server.database.port.get("SELECT count(*) AS n FROM media_attachments");
    for (const path of [...spellings, "/api/v1/media/", "/API/V2/MEDIA", "/api/v2/%6Dedia"]) expectRefused(await upload(path), "30");
    expect(await server.database.port.get("SELECT count(*) AS n FROM media_attachments")).toEqual(before);
  });

  test("deletion: 30 per 30 minutes across DELETE /api/v1/statuses/:id/, percent-encoded ids and unreblog/", async () => {
    server.clock.set(START + 60 * MINUTE);
    const user = await createUser(server, "deleter");
    const other = await createUser(server, "boosted");
    const target = await postStatus(other, { status: "boost me" });
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) ids.push((await postStatus(user, { status: `doomed ${i}` })).id);
    await raw("POST", `/api/v1/statuses/${target.id}/reblog`, { token: user.token });
    expect((await raw("POST", `/api/v1/statuses/${target.id}/unreblog/`, { token: user.token })).status).toBe(200);
    const encoded = (id: string) => [...id].map((d) => `%3${d}`).join("");
    for (let i = 0; i < 29; i++) {
      const path = i % 2 === 0 ? `/api/v1/statuses/${ids[i]}/` : `/api/v1/statuses/${encoded(ids[i] as string)}`;
      expect((await raw("DELETE", path, { token: user.token })).status).toBe(200);
    }
    expectRefused(await raw("DELETE", `/api/v1/statuses/${ids[29]}/`, { token: user.token }), "30");
    expectRefused(await raw("DELETE", `//api/v1/statuses/${encoded(ids[30] as string)}`, { token: user.token }), "30");
    expectRefused(await raw("POST", `/api/v1/statuses/${target.id}/unreblog/`, { token: user.token }), "30");
    for (const id of ids.slice(29)) expect((await raw("GET", `/api/v1/statuses/${id}`, { token: user.token })).status).toBe(200);
  });

  test("app sign-up: 5 per 30 minutes per address across /api/v1/accounts and /api/v1/accounts/", async () => {
    server.clock.set(START + 90 * MINUTE);
    const { token } = await appToken(server, "read write");
    const signUp = (path: string, i: number) => raw("POST", path, { token, json: { username: `signup${i}`, email: `s${i}@example.test`, password: "longenough", agreement: true } });
    for (let i = 0; i < 5; i++) expect((await signUp(i % 2 === 0 ? "/api/v1/accounts/" : "//api/v1/accounts", i)).status).toBe(200);
    for (const [i, path] of ["/api/v1/accounts", "/api/v1/accounts/", "//api/v1/accounts", "/API/v1/accounts"].entries()) {
      expectRefused(await signUp(path, 10 + i), "5");
      expect((await server.ctx.services.accounts.getLocal(`signup${10 + i}`))).toBeUndefined();
    }
  });
});

/** A request written on the socket as given: no client normalises its target or its Host. */
function onSocket(request: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(server.base).port), "127.0.0.1", () => socket.write(request));
    let out = "";
    socket.on("data", (d) => (out += d));
    socket.on("error", reject);
    socket.on("end", () => resolve({ status: Number(out.split(" ")[1]), text: out }));
  });
}

describe("what the router reads is what the limits read", () => {
  test("a short Host does not shift the path the router serves; no Host is 400", async () => {
    server.clock.set(START + 150 * MINUTE);
    // With Elysia's default, Host "a" made the router serve /api/v1/instance out of
    // /xx/api/v1/instance, a path no limit applies to.
    const shifted = await onSocket("GET /xx/api/v1/instance HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n");
    expect(shifted.status).toBe(404);
    expect(shifted.text).not.toContain('"uri"');
    const noHost = await onSocket("GET /api/v1/instance HTTP/1.0\r\n\r\n");
    expect(noHost.status).toBe(400);
    expect(noHost.text.toLowerCase()).toContain("x-content-type-options: nosniff");
    // Dot segments on the wire are resolved before anything reads the path: counted as the plain path.
    for (let i = 0; i < 300; i++) expect((await raw("GET", "/api/v1/instance")).status).toBe(200);
    expect((await onSocket("GET /x/../api/v1/instance HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")).status).toBe(429);
    expect((await onSocket("GET //api/v1/instance HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")).status).toBe(429);
  });
});

describe("responses", () => {
  test("every response says nosniff: API, pages, files, errors, limits and streams", async () => {
    server.clock.set(START + 200 * MINUTE);
    const user = await createUser(server, "sniffer");
    const get = (path: string, headers: Record<string, string> = {}) => fetch(server.base + path, { headers });
    const responses: Response[] = [
      await get("/api/v1/instance"),
      await get("/api/v1/statuses/999999"),
      await get("/no/such/page"),
      await get("/oauth/authorize"),
      await get("/avatars/original/missing.png"),
      await fetch(`${server.base}/api/v1/statuses`, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(2 * 1024 * 1024) }),
      await get("/.well-known/nodeinfo"),
    ];
    const stream = new AbortController();
    const sse = await fetch(`${server.base}/api/v1/streaming/user`, { headers: { authorization: `Bearer ${user.token}` }, signal: stream.signal });
    responses.push(sse);
    for (const res of responses) expect({ url: res.url, status: res.status, nosniff: res.headers.get("x-content-type-options") }).toMatchObject({ nosniff: "nosniff" });
    expect(responses.map((r) => r.status)).toEqual([200, 404, 404, 400, 200, 413, 200, 200]);
    stream.abort();
    for (const res of responses.slice(0, -1)) await res.body?.cancel();
  });
});
