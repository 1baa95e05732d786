import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { openArchive } from "../../src/services/archive/files.ts";
import { collect } from "../../src/services/archive/streams.ts";
import { redSquare } from "../support/archives.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * WEB_THREADS=2: what a serving thread passes to the main thread, and what it waits for.
 * Bodies are carried between the threads chunk by chunk as they are read (src/threads/body-stream.ts),
 * and a read on the serving thread awaits the render changes of the writes answered before it.
 * A request went through the serving thread when the pool's count of passed requests moved
 * (the main thread answers it either way); each test asks over new connections until one did.
 */

/** Larger than every buffer on the way (the kernel's socket buffers on loopback are at most 36 MB). */
const BIG = 64 * 1024 * 1024;

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let big: Buffer;
let bigPath: string;

beforeAll(async () => {
  // Every test below skips in the PostgreSQL test mode (serving threads are SQLite's).
  if (onPostgres) return;
  // A clock that stands still: the archive's dates, and so its bytes, are the same at each download.
  server = await startTestServer({ WEB_THREADS: "2" }, { clock: new ManualClock(Date.now()) });
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  // A status with a picture, whose file on disk is then made large: the archive carries it as it is (stored).
  const form = new FormData();
  form.append("file", new File([await redSquare()], "red.png", { type: "image/png" }));
  const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
  await postStatus(alice, { status: "a large picture", media_ids: [media.id] });
  bigPath = (await server.database.port.get<{ file: string }>("SELECT file FROM media_attachments WHERE id = ?", [Number(media.id)]))!.file;
  big = randomBytes(BIG);
  writeFileSync(join(server.dataDir, "media", bigPath), big);
});
afterAll(() => server?.close());

/** A keep-alive connection the serving thread took (its request ids are not the main thread's). */
async function servingThreadConnection(): Promise<RawConnection> {
  // A write is answered by the main thread: its request ids' prefix.
  const write = await fetch(`${server.base}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${bob.token}`, "content-type": "application/json", connection: "close" }, body: JSON.stringify({ status: "hi" }) });
  const mainThread = write.headers.get("x-request-id")!.split("-")[0];
  for (let i = 0; i < 40; i++) {
    const c = await RawConnection.open(server.base);
    c.send("GET", "/api/v1/instance");
    const res = await c.response();
    expect(res.status).toBe(200);
    if (res.headers.get("x-request-id")!.split("-")[0] !== mainThread) return c;
    c.destroy();
  }
  throw new Error("no connection was taken by the serving thread");
}

/** GETs alice's archive over a new connection; answers it and whether a serving thread passed it. */
async function archive(): Promise<{ status: number; bytes: Buffer; passed: boolean }> {
  const before = server.threads!.passed;
  const res = await fetch(`${server.base}/api/v1/exports/archive.zip`, { headers: { authorization: `Bearer ${alice.token}`, connection: "close" } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, passed: server.threads!.passed > before };
}

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("bodies carried between the threads", () => {
  test("a large answer arrives whole and byte-identical through the serving thread, and leaves nothing in flight", async () => {
    let direct: Buffer | undefined;
    let passed: Buffer | undefined;
    for (let i = 0; i < 40 && (!direct || !passed); i++) {
      const got = await archive();
      expect(got.status).toBe(200);
      if (got.passed) passed ??= got.bytes;
      else direct ??= got.bytes;
    }
    expect(passed).toBeDefined();
    expect(direct).toBeDefined();
    expect(passed!.length).toBeGreaterThan(BIG);
    expect(passed!.equals(direct!)).toBe(true);
    const file = join(server.dataDir, "passed.zip");
    writeFileSync(file, passed!);
    const zip = await openArchive(file);
    let picture: Uint8Array | undefined;
    await zip.scan(
      (name) => name === bigPath,
      async (name, _size, body) => void (picture = await collect(body, BIG + 1, name)),
    );
    await zip.close();
    expect(Buffer.from(picture!).equals(big)).toBe(true);
    expect(server.threads!.inFlight).toEqual({ main: 0, threads: 0 });
  });

  test("a client that hangs up mid-download cancels the transfer on both threads and the archive's writer", async () => {
    const connection = await servingThreadConnection();
    const before = server.threads!.passed;
    connection.send("GET", "/api/v1/exports/archive.zip", { authorization: `Bearer ${alice.token}` });
    expect((await connection.head()).status).toBe(200);
    expect(server.threads!.passed).toBe(before + 1);
    await connection.receivedAtLeast(1024 * 1024);
    connection.stopReading();
    // Held back by the client: the body is still being carried, and its writer still runs (a second archive waits its turn).
    expect(server.threads!.inFlight.main).toBeGreaterThan(0);
    expect(server.threads!.inFlight.threads).toBeGreaterThan(0);
    const second = await alice.client.get("/api/v1/exports/archive.zip");
    expect(second.status).toBe(429);
    expect(second.body).toEqual({ error: "An archive of this account is being written already; try again once it is done" });
    connection.destroy();
    await eventually(() => server.threads!.inFlight.main === 0 && server.threads!.inFlight.threads === 0, () => `no pass in flight: ${JSON.stringify(server.threads!.inFlight)}`);
    // The writer was ended (the 64 MB file could not have been sent): the next archive is written.
    const next = await archive();
    expect(next.status).toBe(200);
    expect(next.bytes.length).toBeGreaterThan(BIG);
  });

  test("a chunked request body under its cap, larger than goes with the head, is carried whole to the main thread", async () => {
    // 200 KB of JSON whitespace around a short status: under the 1 MB cap, past what is read before passing.
    const parts = ['{"status":', " ".repeat(100_000), '"carried in chunks"', " ".repeat(100_000), "}"].map((p) => new TextEncoder().encode(p));
    let posted: Awaited<ReturnType<typeof postStatus>> | undefined;
    for (let i = 0; i < 40 && !posted; i++) {
      const before = server.threads!.passed;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      const res = await fetch(`${server.base}/api/v1/statuses`, { method: "POST", headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json", connection: "close" }, body, duplex: "half" } as RequestInit);
      expect(res.status).toBe(200);
      const status = await res.json();
      expect(status.content).toBe("<p>carried in chunks</p>");
      if (server.threads!.passed > before) posted = status;
    }
    expect(posted).toBeDefined();
    expect((await bob.client.get(`/api/v1/statuses/${posted!.id}`)).body.content).toBe("<p>carried in chunks</p>");
    await eventually(() => server.threads!.inFlight.main === 0 && server.threads!.inFlight.threads === 0, () => `no pass in flight: ${JSON.stringify(server.threads!.inFlight)}`);
  });

  test("a chunked request body past its route's cap is refused while it is read, as the main thread refuses it, and creates nothing", async () => {
    const before = (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.statuses_count;
    const total = 64 * 1024 * 1024;
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let refused: { status: number; body: unknown; sent: number } | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const passedBefore = server.threads!.passed;
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) {
            controller.enqueue(new TextEncoder().encode('{"status":"'));
            sent += 11;
          } else if (sent < total) {
            controller.enqueue(chunk);
            sent += chunk.length;
          } else controller.close();
        },
      });
      const abort = new AbortController();
      const res = await fetch(`${server.base}/api/v1/statuses`, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json", connection: "close" },
        body,
        signal: abort.signal,
        duplex: "half",
      } as RequestInit);
      const answer = { status: res.status, body: await res.json(), sent };
      abort.abort();
      if (server.threads!.passed > passedBefore) refused = answer;
      else expect(answer.status).toBe(413);
    }
    expect(refused).toBeDefined();
    expect(refused!.status).toBe(413);
    expect(refused!.body).toEqual({ error: "Request body is too large" });
    // Refused once past the cap (1 MB), not once read whole: the rest was never sent.
    expect(refused!.sent).toBeLessThan(total / 2);
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.statuses_count).toBe(before);
    await eventually(() => server.threads!.inFlight.main === 0 && server.threads!.inFlight.threads === 0, () => `no pass in flight: ${JSON.stringify(server.threads!.inFlight)}`);
  });
});

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("a read on the serving thread after a write", () => {
  test("waits for the main thread's render changes, then shows the write", async () => {
    const status = await postStatus(alice, { status: "favourite me" });
    // Read on the serving thread: the status is in that thread's render cache.
    const reader = await servingThreadConnection();
    reader.send("GET", `/api/v1/statuses/${status.id}`, { authorization: `Bearer ${bob.token}` });
    const warm = await reader.response();
    expect(warm.status).toBe(200);
    expect(JSON.parse(warm.body.toString()).favourites_count).toBe(0);

    // The changes of the favourite are held on their way to the serving thread (their number is raised, as when in flight).
    const release = server.threads!.holdChanges();
    try {
      expect((await bob.client.post(`/api/v1/statuses/${status.id}/favourite`)).status).toBe(200);
      const receivedBefore = reader.received;
      reader.send("GET", `/api/v1/statuses/${status.id}`, { authorization: `Bearer ${bob.token}` });
      await eventually(() => server.threads!.readsWaiting === 1, "the read waiting for the render changes");
      // It waits: nothing answered while the changes are held.
      expect(reader.received).toBe(receivedBefore);
    } finally {
      release();
    }
    const res = await reader.response();
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body.toString());
    expect(body.favourites_count).toBe(1);
    expect(body.favourited).toBe(true);
    expect(server.threads!.readsWaiting).toBe(0);
    reader.destroy();
  });
});
