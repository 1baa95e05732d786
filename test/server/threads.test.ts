import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { createUser, PASSWORD, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { SseClient, WsClient } from "../support/streams.ts";
import { eventually } from "../support/wait.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * WEB_THREADS=2: a second thread answers reads on the same port from its own read-only
 * connection. Each request here goes over a new TCP connection, which the kernel gives to
 * either thread; the thread that answered is told by the X-Request-Id's prefix (one per edge).
 * Every check below asks until both threads have answered, and checks every answer.
 */
async function fresh(server: TestServer, path: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("connection", "close");
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  const response = await fetch(`${server.base}${path}`, { ...init, headers });
  const text = await response.text();
  const thread = response.headers.get("x-request-id")!.split("-")[0]!;
  return { status: response.status, body: text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text, thread, headers: response.headers };
}

/** Reads `path` over new connections until both threads have answered; every answer goes through `check`. */
async function onBothThreads(server: TestServer, path: string, token: string | undefined, check: (answer: Awaited<ReturnType<typeof fresh>>) => void) {
  const threads = new Set<string>();
  for (let i = 0; i < 200 && threads.size < 2; i++) {
    const answer = await fresh(server, path, { token });
    check(answer);
    threads.add(answer.thread);
  }
  expect(threads.size).toBe(2);
}

/** Sends `send` over new connections until one of them was passed from the serving thread to the main one. */
async function untilPassed<T>(server: TestServer, send: () => Promise<T>): Promise<T[]> {
  const before = server.threads!.passed;
  const answers: T[] = [];
  for (let i = 0; i < 100 && server.threads!.passed === before; i++) answers.push(await send());
  expect(server.threads!.passed).toBeGreaterThan(before);
  return answers;
}

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("two serving threads", () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ WEB_THREADS: "2" });
    alice = await createUser(server, "alice");
    bob = await createUser(server, "bob");
    await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
  });
  afterAll(() => server.close());

  test("a status posted is read at once on both threads, its counts too: the thread's caches follow the main thread's commits", async () => {
    const status = await postStatus(alice, { status: "seen everywhere" });
    await onBothThreads(server, `/api/v1/statuses/${status.id}`, bob.token, (a) => {
      expect(a.status).toBe(200);
      expect(a.body.favourites_count).toBe(0);
    });
    await onBothThreads(server, "/api/v1/timelines/home", bob.token, (a) => expect(a.body[0].id).toBe(status.id));
    // Both threads hold the rendered status now; a favourite shows on both at the next read.
    expect((await bob.client.post(`/api/v1/statuses/${status.id}/favourite`)).status).toBe(200);
    await onBothThreads(server, `/api/v1/statuses/${status.id}`, bob.token, (a) => {
      expect(a.body.favourites_count).toBe(1);
      expect(a.body.favourited).toBe(true);
    });
    await onBothThreads(server, "/api/v1/timelines/home", bob.token, (a) => expect(a.body[0].favourites_count).toBe(1));
  });

  test("SSE and WebSocket clients receive a status on whichever thread they are connected to", async () => {
    const sse: SseClient[] = [];
    const threads = new Set<string>();
    for (let i = 0; i < 40 && threads.size < 2; i++) {
      const client = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: bob.token, headers: { connection: "close" } });
      threads.add(client.response.headers.get("x-request-id")!.split("-")[0]!);
      sse.push(client);
    }
    expect(threads.size).toBe(2);
    // Sockets until one is not the main thread's (its hub counts only its own connections).
    const sockets: WsClient[] = [];
    const onMain = server.streaming.hub.connectionCount;
    for (let i = 0; i < 40 && server.streaming.hub.connectionCount === onMain + sockets.length; i++) {
      const socket = await WsClient.open(`${server.base.replace("http", "ws")}/api/v1/streaming?stream=user&access_token=${bob.token}`);
      await socket.fence();
      sockets.push(socket);
    }
    expect(server.streaming.hub.connectionCount).toBeLessThan(onMain + sockets.length);
    try {
      const status = await postStatus(alice, { status: "streamed everywhere" });
      for (const client of sse) await eventually(() => client.events.some((e) => e.event === "update" && JSON.parse(e.data!).id === status.id), "the update on every SSE client");
      for (const socket of sockets) await socket.waitFor((f) => f.event === "update" && JSON.parse(f.payload).id === status.id);
    } finally {
      for (const client of sse) client.close();
      for (const socket of sockets) socket.close();
    }
  });

  test("a revoked token is refused at once on both threads", async () => {
    const carol = await createUser(server, "carol");
    await onBothThreads(server, "/api/v1/accounts/verify_credentials", carol.token, (a) => expect(a.status).toBe(200));
    const revoked = await fresh(server, "/oauth/revoke", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: carol.app.clientId, client_secret: carol.clientSecret, token: carol.token }) });
    expect(revoked.status).toBe(200);
    await onBothThreads(server, "/api/v1/accounts/verify_credentials", carol.token, (a) => {
      expect(a.status).toBe(401);
      expect(a.body).toEqual({ error: "The access token is invalid" });
    });
  });

  test("a revoked token's stream on the serving thread is closed", async () => {
    const dave = await createUser(server, "dave");
    // The main thread's request ids: a write is always answered there.
    const mainThread = (await fresh(server, "/api/v1/statuses", { method: "POST", token: dave.token, headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "hi" }) })).thread;
    const opened: SseClient[] = [];
    let onServingThread: SseClient | undefined;
    for (let i = 0; i < 40 && !onServingThread; i++) {
      const client = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: dave.token, headers: { connection: "close" } });
      opened.push(client);
      if (client.response.headers.get("x-request-id")!.split("-")[0] !== mainThread) onServingThread = client;
    }
    try {
      expect(onServingThread).toBeDefined();
      const revoked = await fresh(server, "/oauth/revoke", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: dave.app.clientId, client_secret: dave.clientSecret, token: dave.token }) });
      expect(revoked.status).toBe(200);
      for (const client of opened) await client.waitForEnd();
    } finally {
      for (const client of opened) client.close();
    }
  });

  test("writes sent to the serving thread are passed to the main thread and work: a post, a favourite, an upload, an OAuth token", async () => {
    const posts = await untilPassed(server, () => fresh(server, "/api/v1/statuses", { method: "POST", token: alice.token, headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "through a thread" }) }));
    for (const p of posts) expect(p.status).toBe(200);
    const last = posts.at(-1)!.body.id as string;
    expect((await bob.client.get(`/api/v1/statuses/${last}`)).body.content).toBe("<p>through a thread</p>");

    const target = await postStatus(alice, { status: "favourite me" });
    const favourites = await untilPassed(server, () => fresh(server, `/api/v1/statuses/${target.id}/favourite`, { method: "POST", token: bob.token }));
    for (const f of favourites) expect(f.body.favourited).toBe(true);

    const uploads = await untilPassed(server, () => {
      const form = new FormData();
      form.append("file", new Blob([PNG], { type: "image/png" }), "dot.png");
      form.append("description", "a dot");
      return fresh(server, "/api/v1/media", { method: "POST", token: alice.token, body: form });
    });
    for (const u of uploads) {
      expect(u.status).toBe(200);
      expect(u.body.description).toBe("a dot");
    }

    const tokens = await untilPassed(server, () =>
      fresh(server, "/oauth/token", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ grant_type: "password", username: "alice", password: PASSWORD, client_id: alice.app.clientId, client_secret: alice.clientSecret, scope: "read" }) }),
    );
    for (const t of tokens) {
      expect(t.status).toBe(200);
      expect((await fresh(server, "/api/v1/accounts/verify_credentials", { token: t.body.access_token })).body.username).toBe("alice");
    }
  });

  test("a read that tries to write on the serving thread is passed to the main thread: a signed-in look at a quote unchecked for a week schedules its check", async () => {
    const quoted = await postStatus(alice, { status: "quoted" });
    const quoting = await postStatus(alice, { status: "quoting" });
    // As a remote quote with its stamp, last checked long ago (Quote#schedule_refresh_if_stale!).
    await server.database.port.run(
      "INSERT INTO quotes (id, status_id, account_id, quoted_status_id, quoted_account_id, quoted_uri, state, approval_uri, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'accepted', ?, 0, 0)",
      [77_777, Number(quoting.id), Number(alice.id), Number(quoted.id), Number(alice.id), "https://elsewhere.example/statuses/1", "https://elsewhere.example/stamps/1"],
    );
    // Answered by the main thread whichever thread took the connection (the passed ones carry its request id).
    const answers = await untilPassed(server, () => fresh(server, `/api/v1/statuses/${quoting.id}`, { token: bob.token }));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body.id).toBe(quoting.id);
    }
    expect(await server.ctx.services.quoteChecks.waiting(77_777)).toBeTruthy();
  });

  test("a body past its cap is refused as the main thread refuses it, and changes nothing", async () => {
    const before = (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.statuses_count;
    const big = JSON.stringify({ status: "x".repeat(2 * 1024 * 1024) });
    const refused = await untilPassed(server, () => fresh(server, "/api/v1/statuses", { method: "POST", token: alice.token, headers: { "content-type": "application/json" }, body: big }));
    for (const r of refused) {
      expect(r.status).toBe(413);
      expect(r.body).toEqual({ error: "Request body is too large" });
    }
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.statuses_count).toBe(before);
  });
});

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
test.skipIf(onPostgres)("a burst spread over the threads is limited as one: the counts go down one by one whichever thread answers, then 429", async () => {
  const server = await startTestServer({ WEB_THREADS: "2", RATE_LIMITS: "on" });
  try {
    const remaining: number[] = [];
    const threads = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const a = await fresh(server, "/api/v1/instance");
      expect(a.status).toBe(200);
      remaining.push(Number(a.headers.get("x-ratelimit-remaining")));
      threads.add(a.thread);
    }
    expect(threads.size).toBe(2);
    expect(remaining).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
    const refused = await fresh(server, "/api/v1/instance");
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: "Too many requests" });
  } finally {
    await server.close();
  }
});

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
test.skipIf(onPostgres)("stop() stops the serving threads: the port is closed and no thread is left", async () => {
  const threadsBefore = readdirSync("/proc/self/task").length;
  const server = await startTestServer({ WEB_THREADS: "3" });
  const base = server.base;
  expect(server.threads!.threads).toBe(2);
  expect(readdirSync("/proc/self/task").length).toBeGreaterThan(threadsBefore);
  expect((await fresh(server, "/api/v1/instance")).status).toBe(200);
  await server.close();
  expect(server.threads!.threads).toBe(0);
  await expect(fetch(`${base}/api/v1/instance`, { headers: { connection: "close" } })).rejects.toThrow();
  await eventually(() => readdirSync("/proc/self/task").length <= threadsBefore + 1, () => `threads back to ${threadsBefore}: ${readdirSync("/proc/self/task").length}`);
});

// A 1x1 PNG.
const PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));
