import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { delivered, SseClient } from "../support/streams.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const url = (path: string) => `${server.base}/api/v1/streaming${path}`;

async function refused(path: string, init: RequestInit = {}) {
  const res = await fetch(url(path), init);
  return { status: res.status, body: await res.json(), type: res.headers.get("content-type") };
}

describe("SSE errors", () => {
  test("an unknown channel is 400 before any token is looked at", async () => {
    for (const path of ["", "/", "/nope", "/public/", "/USER", "/user/notifications", "/hashtag/remote"]) {
      const res = await refused(path, { headers: { authorization: "Bearer not-a-token" } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "Unknown channel requested" });
      expect(res.type).toContain("application/json");
    }
  });

  test("user, notification, direct and list streams without a token: 401", async () => {
    for (const path of ["/user", "/user/notification", "/direct", "/list?list=1"]) {
      const res = await refused(path);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "Missing access token" });
    }
  });

  test("a non-Bearer Authorization header is a bad token; an empty access_token is no token", async () => {
    const basic = await refused(`/public?access_token=${alice.token}`, { headers: { authorization: "Basic abc" } });
    expect(basic.status).toBe(401);
    expect(basic.body).toEqual({ error: "Invalid access token" });
    const sse = await SseClient.open(url("/public?access_token="));
    sse.close();
  });

  test("a bad token is 401 on every stream, public ones included", async () => {
    for (const path of ["/user", "/public", "/hashtag?tag=x"]) {
      const byHeader = await refused(path, { headers: { authorization: "Bearer wrong" } });
      expect(byHeader.status).toBe(401);
      expect(byHeader.body).toEqual({ error: "Invalid access token" });
      const byQuery = await refused(`${path}${path.includes("?") ? "&" : "?"}access_token=wrong`);
      expect(byQuery.status).toBe(401);
      expect(byQuery.body).toEqual({ error: "Invalid access token" });
    }
  });

  test("scopes: read:statuses for the user stream, read:notifications for notifications; app tokens have no user", async () => {
    const writer = await createUser(server, "writer", { scopes: "write" });
    const res = await refused("/user", { headers: { authorization: `Bearer ${writer.token}` } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "Access token does not have the required scopes" });
    const statusesOnly = await createUser(server, "statusreader", { scopes: "read:statuses" });
    const notif = await refused("/user/notification", { headers: { authorization: `Bearer ${statusesOnly.token}` } });
    expect(notif.status).toBe(401);
    expect(notif.body).toEqual({ error: "Access token does not have the required scopes" });
    const app = await refused("/user", { headers: { authorization: `Bearer ${(await appToken(server)).token}` } });
    expect(app.status).toBe(401);
    expect(app.body).toEqual({ error: "This method requires an authenticated user" });
  });

  test("a missing tag, and a list that is missing or not the caller's: 404", async () => {
    const list = (await alice.client.post("/api/v1/lists", { json: { title: "mine" } })).body;
    const cases = [
      ["/hashtag", undefined],
      ["/hashtag?tag=", undefined],
      ["/hashtag/local?tag=%23%23", undefined],
      ["/list", alice.token],
      ["/list?list=999999", alice.token],
      ["/list?list=abc", alice.token],
      [`/list?list=${list.id}`, bob.token],
    ] as const;
    for (const [path, token] of cases) {
      const res = await refused(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Not found" });
    }
  });

  test("health answers OK", async () => {
    const res = await fetch(url("/health"));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("OK");
  });
});

describe("SSE protocol", () => {
  test("opens with :), event-stream headers, frames event/data", async () => {
    const sse = await SseClient.open(url("/public"));
    expect(sse.response.headers.get("content-type")).toBe("text/event-stream");
    expect(sse.response.headers.get("cache-control")).toBe("no-store");
    expect(sse.response.headers.get("x-accel-buffering")).toBe("no");
    expect(sse.raw.startsWith(":)\n")).toBe(true);
    const status = await postStatus(alice, { status: "to the world" });
    const event = await sse.waitFor((e) => e.event === "update");
    expect(sse.raw).toContain(`event: update\ndata: {"id":"${status.id}"`);
    const payload = JSON.parse(event.data!);
    expect(payload.id).toBe(status.id);
    expect(payload.content).toBe("<p>to the world</p>");
    // Anonymous readers get the anonymous rendering.
    expect(payload).not.toHaveProperty("favourited");
    expect(payload).not.toHaveProperty("filtered");
    await alice.client.delete(`/api/v1/statuses/${status.id}`);
    await sse.waitFor((e) => e.event === "delete");
    expect(sse.raw).toContain(`event: delete\ndata: ${status.id}\n\n`);
    sse.close();
  });

  test("heartbeat :thump every 15 seconds (on the server's clock)", async () => {
    const sse = await SseClient.open(url("/public/local"));
    expect(sse.comments).toEqual([")"]);
    server.clock.advance(15_000);
    await sse.waitForComment("thump");
    expect(sse.raw).toContain(":thump\n\n");
    sse.close();
  });

  test("token by header and by access_token query parameter", async () => {
    const byHeader = await SseClient.open(url("/user"), { token: alice.token });
    const byQuery = await SseClient.open(url(`/user?access_token=${alice.token}`));
    const status = await postStatus(alice, { status: "for my streams", visibility: "private" });
    for (const sse of [byHeader, byQuery]) {
      const event = await sse.waitFor((e) => e.event === "update");
      expect(JSON.parse(event.data!).id).toBe(status.id);
      sse.close();
    }
  });

  test("only_media narrows public streams to statuses with media", async () => {
    const media = await SseClient.open(url("/public?only_media=true"));
    const all = await SseClient.open(url("/public?only_media=false"));
    const upload = new FormData();
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#336699" } }).jpeg().toBuffer();
    upload.append("file", new File([jpeg], "p.jpg", { type: "image/jpeg" }));
    const attachment = (await alice.client.post("/api/v1/media", { multipart: upload })).body;
    const plain = await postStatus(alice, { status: "no picture" });
    const pictured = await postStatus(alice, { status: "a picture", media_ids: [attachment.id] });
    await all.waitFor((e) => e.event === "update" && JSON.parse(e.data!).id === pictured.id);
    const got = await media.waitFor((e) => e.event === "update");
    expect(JSON.parse(got.data!).id).toBe(pictured.id);
    await delivered(server, media, all);
    expect(media.events.map((e) => JSON.parse(e.data!).id)).toEqual([pictured.id]);
    expect(all.events.map((e) => JSON.parse(e.data!).id)).toEqual([plain.id, pictured.id]);
    media.close();
    all.close();
  });

  test("public/remote exists and stays quiet on a single server", async () => {
    const remote = await SseClient.open(url("/public/remote"));
    await postStatus(alice, { status: "local only" });
    await delivered(server, remote);
    expect(remote.events).toEqual([]);
    remote.close();
  });

  test("revoking the token ends its streams, others stay", async () => {
    const { app, clientSecret } = await appToken(server);
    const token = (await server.ctx.services.tokens.issue(app.id, bob.account.id, ["read"])).accessToken;
    const doomed = await SseClient.open(url("/user"), { token });
    const other = await SseClient.open(url("/user"), { token: bob.token });
    const res = await fetch(`${server.base}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: app.clientId, client_secret: clientSecret, token }),
    });
    expect(res.status).toBe(200);
    await doomed.waitForEnd();
    // The other stream still receives (a heartbeat sent after the revocation).
    await delivered(server, other);
    expect(other.ended).toBe(false);
    other.close();
  });

  test("whitelist mode closes public streams to anonymous readers", async () => {
    const closed = await startTestServer({ WHITELIST_MODE: "true" });
    try {
      const res = await fetch(`${closed.base}/api/v1/streaming/public`);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Missing access token" });
      const carol = await createUser(closed, "carol");
      const sse = await SseClient.open(`${closed.base}/api/v1/streaming/public`, { token: carol.token });
      sse.close();
    } finally {
      await closed.close();
    }
  });
});
