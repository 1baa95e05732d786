import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { delivered, SseClient, WsClient } from "../support/streams.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
});
afterAll(() => server.close());

const wsUrl = (query = "") => `${server.base.replace("http", "ws")}/api/v1/streaming${query}`;

/** A WebSocket handshake by hand, to see the status of a refused upgrade. */
async function upgradeStatus(query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.base}/api/v1/streaming${query}`, {
    headers: { upgrade: "websocket", connection: "Upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13", ...headers },
  });
  return { status: res.status, body: await res.json() };
}

/** A socket that completes the handshake and then never reads or answers pings. */
async function deafSocket(query: string) {
  const state = { closed: false, upgraded: false, bytes: 0 };
  const port = new URL(server.base).port;
  const sock: Socket<undefined> = await Bun.connect({
    hostname: "127.0.0.1",
    port: Number(port),
    socket: {
      data(_s, data) {
        state.bytes += data.length;
        if (data.toString("latin1").startsWith("HTTP/1.1 101")) state.upgraded = true;
      },
      close() {
        state.closed = true;
      },
    },
  });
  sock.write(
    `GET /api/v1/streaming${query} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  await waitFor(() => state.upgraded, undefined, "the upgrade");
  return { sock, state };
}

describe("WebSocket connection", () => {
  test("token as subprotocol (echoed back), as access_token, and as Authorization header", async () => {
    const byProtocol = await WsClient.open(wsUrl("?stream=user"), alice.token);
    expect(byProtocol.socket.protocol).toBe(alice.token);
    const byQuery = await WsClient.open(wsUrl(`?stream=user&access_token=${alice.token}`));
    const byHeader = await WsClient.open(wsUrl("?stream=user"), undefined, { headers: { authorization: `Bearer ${alice.token}` } });
    const status = await postStatus(alice, { status: "three sockets", visibility: "private" });
    for (const ws of [byProtocol, byQuery, byHeader]) {
      const frame = await ws.waitFor((f) => f.event === "update");
      expect(Object.keys(frame)).toEqual(["stream", "event", "payload"]);
      expect(frame.stream).toEqual(["user"]);
      expect(typeof frame.payload).toBe("string");
      expect(JSON.parse(frame.payload).id).toBe(status.id);
      ws.close();
    }
  });

  test("a bad token is refused with 401 on the upgrade; so is a user stream without a token", async () => {
    for (const [query, headers] of [
      ["?access_token=wrong", {}],
      ["", { authorization: "Bearer wrong" }],
      ["", { "sec-websocket-protocol": "wrong" }],
    ] as const) {
      const res = await upgradeStatus(query, headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "Invalid access token" });
    }
    const anonymousUser = await upgradeStatus("?stream=user");
    expect(anonymousUser.status).toBe(401);
    expect(anonymousUser.body).toEqual({ error: "Missing access token" });
  });

  test("anonymous sockets may stream public timelines", async () => {
    const ws = await WsClient.open(wsUrl("?stream=public:local"));
    const status = await postStatus(alice, { status: "hello sockets" });
    const frame = await ws.waitFor((f) => f.event === "update");
    expect(frame.stream).toEqual(["public:local"]);
    expect(JSON.parse(frame.payload).id).toBe(status.id);
    ws.close();
  });
});

describe("WebSocket multiplexing", () => {
  test("subscribe and unsubscribe several streams on one socket; the stream echoes tag and list as sent", async () => {
    const list = (await bob.client.post("/api/v1/lists", { json: { title: "A" } })).body;
    await bob.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [alice.id] } });
    const ws = await WsClient.open(wsUrl(), bob.token);
    ws.send({ type: "subscribe", stream: "user" });
    ws.send({ type: "subscribe", stream: "hashtag", tag: "RookTest" });
    ws.send({ type: "subscribe", stream: "list", list: list.id });
    ws.send({ type: "subscribe", stream: "public" });
    ws.send({ type: "subscribe", stream: "public" }); // a duplicate is ignored
    await ws.fence();
    const status = await postStatus(alice, { status: "#rooktest in every stream" });
    await ws.waitFor((f) => f.stream?.[0] === "list");
    await delivered(server, ws);
    const streams = ws.frames.filter((f) => f.event === "update").map((f) => JSON.stringify(f.stream));
    expect(streams.sort()).toEqual([JSON.stringify(["hashtag", "RookTest"]), JSON.stringify(["list", list.id]), JSON.stringify(["public"]), JSON.stringify(["user"])].sort());
    expect(ws.frames.every((f) => f.event !== "update" || JSON.parse(f.payload).id === status.id)).toBe(true);

    ws.send({ type: "unsubscribe", stream: "hashtag", tag: "rooktest" });
    ws.send({ type: "unsubscribe", stream: "public" });
    await ws.fence();
    ws.frames = [];
    await postStatus(alice, { status: "#rooktest after unsubscribing" });
    await ws.waitFor((f) => f.stream?.[0] === "list");
    await delivered(server, ws);
    expect(ws.frames.map((f) => f.stream[0]).sort()).toEqual(["list", "user"]);
    ws.close();
  });

  test("bad messages get an error frame and the socket stays open", async () => {
    const ws = await WsClient.open(wsUrl(), bob.token);
    const cases: [unknown, Record<string, unknown>][] = [
      ["not json", { error: "Invalid JSON", status: 400 }],
      ["[1,2]", { error: "Invalid message", status: 400 }],
      [{ type: "dance" }, { error: "Unknown message type", status: 400 }],
      // Refused subscriptions in the words of Mastodon's streaming server.
      [{ type: "subscribe", stream: "nope" }, { error: "Unknown stream type", status: 400 }],
      [{ type: "subscribe" }, { error: "Unknown stream type", status: 400 }],
      [{ type: "subscribe", stream: "hashtag" }, { error: "Missing tag name parameter", status: 400 }],
      [{ type: "subscribe", stream: "list" }, { error: "Missing list name parameter", status: 400 }],
      [{ type: "subscribe", stream: "list", list: "123" }, { error: "Not authorized to stream this list", status: 401 }],
      [{ type: "unsubscribe", stream: "nope" }, { error: "Error unsubscribing from channel" }],
    ];
    for (const [message, error] of cases) {
      ws.frames = [];
      ws.send(message);
      expect(await ws.waitFor(() => true)).toEqual(error);
    }
    expect(ws.closeCode).toBeNull();
    // Still works afterwards.
    ws.send({ type: "subscribe", stream: "user" });
    await ws.fence();
    await postStatus(alice, { status: "still listening" });
    await ws.waitFor((f) => f.event === "update");
    ws.close();
  });

  test("subscribing to a user stream needs a user token with the right scope", async () => {
    const anonymous = await WsClient.open(wsUrl());
    anonymous.send({ type: "subscribe", stream: "direct" });
    expect(await anonymous.waitFor(() => true)).toEqual({ error: "Missing access token", status: 401 });
    const app = await WsClient.open(wsUrl(), (await appToken(server)).token);
    app.send({ type: "subscribe", stream: "user" });
    expect(await app.waitFor(() => true)).toEqual({ error: "This method requires an authenticated user", status: 401 });
    const writeOnly = (await server.ctx.services.tokens.issue(alice.app.id, alice.account.id, ["write"])).accessToken;
    const writer = await WsClient.open(wsUrl(), writeOnly);
    writer.send({ type: "subscribe", stream: "user:notification" });
    expect(await writer.waitFor(() => true)).toEqual({ error: "Access token does not have the required scopes", status: 401 });
    for (const ws of [anonymous, app, writer]) ws.close();
  });

  test("a list deleted while subscribed can still be unsubscribed", async () => {
    const list = (await bob.client.post("/api/v1/lists", { json: { title: "short-lived" } })).body;
    const ws = await WsClient.open(wsUrl(), bob.token);
    ws.send({ type: "subscribe", stream: "list", list: list.id });
    await ws.fence();
    const topics = server.streaming.hub.topicCount;
    await bob.client.delete(`/api/v1/lists/${list.id}`);
    ws.send({ type: "unsubscribe", stream: "list", list: list.id });
    await ws.fence();
    expect(ws.frames).toEqual([]);
    expect(server.streaming.hub.topicCount).toBe(topics - 1);
    ws.close();
  });

  test("binary frames close the socket with 1003", async () => {
    const ws = await WsClient.open(wsUrl(), bob.token);
    ws.socket.send(new Uint8Array([1, 2, 3]));
    expect(await ws.waitForClose()).toBe(1003);
    expect(ws.closeReason).toBe("The mastodon streaming server does not support binary messages");
  });

  test("filters_changed frames carry no payload key", async () => {
    const ws = await WsClient.open(wsUrl("?stream=user"), bob.token);
    await bob.client.post("/api/v2/filters", { json: { title: "f", context: ["home"] } });
    await ws.waitFor((f) => f.event === "filters_changed");
    expect(ws.rawFrames).toContain('{"stream":["user"],"event":"filters_changed"}');
    ws.close();
  });
});

describe("keep-alive and slow clients", () => {
  test("the server pings every 30 s and drops a socket that missed the last pong", async () => {
    const deaf = await deafSocket("?stream=public");
    const live = await WsClient.open(wsUrl("?stream=public"));
    const before = server.streaming.hub.connectionCount;
    const bytes = deaf.state.bytes;
    server.clock.advance(30_000);
    // The ping reaches the deaf socket, which the server keeps until the next ping finds no pong.
    await waitFor(() => deaf.state.bytes > bytes, undefined, "the ping");
    await delivered(server, live);
    expect(deaf.state.closed).toBe(false);
    expect(server.streaming.hub.connectionCount).toBe(before);
    server.clock.advance(30_000);
    await waitFor(() => deaf.state.closed, undefined, "the deaf socket to be closed");
    expect(live.closeCode).toBeNull();
    expect(server.streaming.hub.connectionCount).toBe(before - 1);
    live.close();
  });

  test("a client that stops reading is cut off and does not stall the others", { timeout: 60_000 }, async () => {
    const deafWs = await deafSocket("?stream=public:local");
    deafWs.sock.pause();
    // A raw SSE request that never reads its response.
    const port = Number(new URL(server.base).port);
    let sseClosed = false;
    const deafSse = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, close: () => void (sseClosed = true) } });
    const beforeSse = server.streaming.hub.connectionCount;
    deafSse.write(`GET /api/v1/streaming/public/local HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await waitFor(() => server.streaming.hub.connectionCount === beforeSse + 1, undefined, "the raw SSE request to connect");
    deafSse.pause();
    const reader = await SseClient.open(`${server.base}/api/v1/streaming/public/local`);
    const socket = await WsClient.open(wsUrl("?stream=public:local"));
    const open = server.streaming.hub.connectionCount;

    // 16 MB in 4 KB events: far more than socket buffers hold. Published no faster than the
    // reading clients take them (at most 32 events, 128 KB, ahead of both), however busy the machine.
    const COUNT = 4000;
    const payload = JSON.stringify({ filler: "x".repeat(4096) });
    for (let i = 0; i < COUNT; i++) {
      server.streaming.hub.publish("public:local", "update", payload);
      if (i % 16 === 15) await waitFor(() => reader.events.length >= i - 16 && socket.frames.length >= i - 16, undefined, `the readers to reach event ${i - 16}`);
    }
    await waitFor(() => reader.events.length >= COUNT && socket.frames.length >= COUNT, undefined, "the readers to receive every event");
    expect(reader.events.length).toBe(COUNT);
    expect(socket.frames.length).toBe(COUNT);
    expect(server.streaming.hub.connectionCount).toBe(open - 2);
    // Once they read again, they find their connections closed.
    deafWs.sock.resume();
    deafSse.resume();
    await waitFor(() => sseClosed && deafWs.state.closed, undefined, "the deaf connections to close");
    expect(deafWs.state.closed).toBe(true);
    expect(sseClosed).toBe(true);
    reader.close();
    socket.close();
  });

  test("10,000 connects and disconnects leave nothing behind", async () => {
    const hub = server.streaming.hub;
    // Earlier tests' clients are closed; let their connections finish going.
    await waitFor(() => hub.connectionCount === 0, undefined, "earlier connections to go");
    const baseConnections = hub.connectionCount;
    const baseTopics = hub.topicCount;
    for (let round = 0; round < 40; round++) {
      const batch = await Promise.all(
        Array.from({ length: 250 }, (_, i) => (i % 2 ? WsClient.open(wsUrl(`?stream=hashtag&tag=t${round}x${i}`)) : SseClient.open(`${server.base}/api/v1/streaming/hashtag?tag=s${round}x${i}`))),
      );
      for (const c of batch) c.close();
    }
    await waitFor(() => hub.connectionCount === baseConnections, undefined, "every connection to go");
    expect(hub.connectionCount).toBe(baseConnections);
    expect(hub.topicCount).toBe(baseTopics);
  });
});
