import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { MULTIPART_THRESHOLD, S3Store } from "../../src/media-files/s3-store.ts";
import { clips, removeClips } from "../support/clips.ts";
import { mediaFiles, mediaRows } from "../support/files.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startS3, type TestS3 } from "../support/s3.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { drain, eventually } from "../support/wait.ts";
import { onPostgres } from "../support/test-database.ts";

// MEDIA_STORAGE=s3: uploads, previews and their lifecycle in a bucket of a real S3-protocol
// server on loopback (test/support/s3.ts), through the real server.
let s3: TestS3;
let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  s3 = await startS3();
  server = await startTestServer(s3.env());
  alice = await createUser(server, "alice");
});
afterAll(async () => {
  await server?.close();
  await s3?.stop();
  removeClips();
});

const png = (width = 40, height = 30) => sharp({ create: { width, height, channels: 3, background: "#3366aa" } }).png().toBuffer();

function form(bytes: Uint8Array, name = "a.png", fields: Record<string, string> = {}) {
  const f = new FormData();
  f.append("file", new File([bytes as Uint8Array<ArrayBuffer>], name));
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const keyOf = (url: string) => url.slice(`${s3.publicBase}/`.length);
/** Kept files on the local disk: with a bucket, none (only media_uploads/ scratch while processing). */
const localKept = () => mediaFiles(server).filter((f) => !f.includes("/media_uploads/"));

describe("media in a bucket (MEDIA_STORAGE=s3)", () => {
  test("an image upload puts the original and the preview in the bucket; url and preview_url are the bucket's public URLs, which give the bytes", async () => {
    const res = await alice.client.post("/api/v1/media", { multipart: form(await png(), "a.png", { description: "blue" }) });
    expect(res.status).toBe(200);
    const m = res.body;
    expect(m.url).toStartWith(`${s3.publicBase}/media_attachments/`);
    expect(m.preview_url).toStartWith(`${s3.publicBase}/media_previews/`);
    const keys = await s3.keys();
    expect(keys).toContain(keyOf(m.url));
    expect(keys).toContain(keyOf(m.preview_url));
    const served = await fetch(m.url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe(`image/${m.url.split(".").pop()}`);
    const bytes = new Uint8Array(await served.arrayBuffer());
    expect(bytes).toEqual(await s3.bytes(keyOf(m.url)));
    expect((await sharp(bytes).metadata()).width).toBe(40);
    expect(localKept()).toEqual([]);
  });

  test("GET /system/<path> redirects to the bucket's public URL (links given out before the move keep working)", async () => {
    const m = (await alice.client.post("/api/v1/media", { multipart: form(await png()) })).body;
    const key = keyOf(m.url);
    const res = await fetch(`${server.base}/system/${key}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(m.url);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    // The short link of a status's attachment leads there too.
    const status = await postStatus(alice, { status: "with a picture", media_ids: [m.id] });
    const short = await fetch(status.media_attachments[0].text_url, { redirect: "manual" });
    expect(short.headers.get("location")).toBe(m.url);
    // Paths the server never makes, and raw uploads, are still 404.
    for (const path of ["media_uploads/2026/01/abc.bin", "../etc/passwd", "media_attachments/x.png"]) expect((await fetch(`${server.base}/system/${path}`, { redirect: "manual" })).status).toBe(404);
  });

  test("a v2 upload is processed from the local scratch folder into the bucket, and the scratch file is gone", async () => {
    const res = await alice.client.post("/api/v2/media", { multipart: form(await png(50, 50)) });
    expect([200, 202]).toContain(res.status);
    await drain(server);
    const done = await alice.client.get(`/api/v1/media/${res.body.id}`);
    expect(done.status).toBe(200);
    expect(done.body.url).toStartWith(`${s3.publicBase}/media_attachments/`);
    expect(await s3.keys()).toContain(keyOf(done.body.url));
    expect(mediaFiles(server).filter((f) => f.includes("/media_uploads/"))).toEqual([]);
  });

  test("DELETE /api/v1/media/:id removes the objects", async () => {
    const m = (await alice.client.post("/api/v1/media", { multipart: form(await png()) })).body;
    expect(await s3.keys()).toContain(keyOf(m.url));
    expect((await alice.client.delete(`/api/v1/media/${m.id}`)).status).toBe(200);
    const keys = await s3.keys();
    expect(keys).not.toContain(keyOf(m.url));
    expect(keys).not.toContain(keyOf(m.preview_url));
  });

  test("unattached media past their day go with their objects; attached ones stay", async () => {
    const loose = (await alice.client.post("/api/v1/media", { multipart: form(await png()) })).body;
    const kept = (await alice.client.post("/api/v1/media", { multipart: form(await png()) })).body;
    await postStatus(alice, { status: "keeps its media", media_ids: [kept.id] });
    server.clock.advance(25 * 60 * 60 * 1000);
    await drain(server);
    expect((await alice.client.get(`/api/v1/media/${loose.id}`)).status).toBe(404);
    await eventually(async () => !(await s3.keys()).includes(keyOf(loose.url)) || null, "the expired upload's objects removed");
    expect(await s3.keys()).not.toContain(keyOf(loose.preview_url));
    expect(await s3.keys()).toContain(keyOf(kept.url));
  });

  test("a video goes through ffmpeg on the local disk and lands in the bucket as MP4, its preview frame beside it", async () => {
    const res = await alice.client.post("/api/v1/media", { multipart: form(await clips.mp4(), "clip.mp4") });
    expect(res.status).toBe(200);
    expect(res.body.type).toBe("video");
    expect(res.body.url).toStartWith(`${s3.publicBase}/media_attachments/`);
    expect(res.body.url).toEndWith(".mp4");
    const bytes = await s3.bytes(keyOf(res.body.url));
    expect(new TextDecoder().decode(bytes.slice(4, 8))).toBe("ftyp");
    const served = await fetch(res.body.url);
    expect(served.headers.get("content-type")).toBe("video/mp4");
    expect(await s3.keys()).toContain(keyOf(res.body.preview_url));
    expect(mediaFiles(server).filter((f) => f.includes("/media_uploads/"))).toEqual([]);
    expect(localKept()).toEqual([]);
  });

  test("a v2 video is transcoded on the media queue from the local scratch file into the bucket", async () => {
    const res = await alice.client.post("/api/v2/media", { multipart: form(await clips.mp4(), "clip.mp4") });
    expect(res.status).toBe(202);
    expect(res.body.url).toBeNull();
    await drain(server);
    const done = await alice.client.get(`/api/v1/media/${res.body.id}`);
    expect(done.status).toBe(200);
    expect(done.body.url).toStartWith(`${s3.publicBase}/media_attachments/`);
    expect(done.body.url).toEndWith(".mp4");
    expect(await s3.keys()).toContain(keyOf(done.body.url));
    expect(mediaFiles(server).filter((f) => f.includes("/media_uploads/"))).toEqual([]);
  });

  test("a file past the multipart threshold is sent in parts from the disk and arrives whole", async () => {
    const store = new S3Store({ endpoint: s3.endpoint, bucket: s3.bucket, region: "us-east-1", accessKeyId: "k", secretAccessKey: "s", aliasUrl: null });
    const big = new Uint8Array(MULTIPART_THRESHOLD + 3 * 1024 * 1024).map((_, i) => (i * 7) % 251);
    const local = join(server.dataDir, "big.bin");
    writeFileSync(local, big);
    await store.take("media_attachments/2026/11/big.mp4", local);
    expect(await Bun.file(local).exists()).toBe(false);
    expect(await store.size("media_attachments/2026/11/big.mp4")).toBe(big.length);
    expect(await s3.bytes("media_attachments/2026/11/big.mp4")).toEqual(big);
    await store.delete("media_attachments/2026/11/big.mp4");
  });
});

describe("a private bucket (no S3_ALIAS_HOST)", () => {
  test("urls stay under PUBLIC_URL/system/, which redirects to a presigned URL of the object", async () => {
    const other = await startTestServer(s3.env({ alias: false }));
    try {
      const bob = await createUser(other, "bob");
      const m = (await bob.client.post("/api/v1/media", { multipart: form(await png()) })).body;
      expect(m.url).toStartWith(`${other.base}/system/media_attachments/`);
      const key = m.url.slice(`${other.base}/system/`.length);
      const res = await fetch(m.url, { redirect: "manual" });
      expect(res.status).toBe(302);
      const location = res.headers.get("location")!;
      expect(location).toStartWith(`${s3.publicBase}/${key}?`);
      expect(location).toContain("X-Amz-Signature=");
      expect(new Uint8Array(await (await fetch(m.url)).arrayBuffer())).toEqual(await s3.bytes(key));
    } finally {
      await other.close();
    }
  });
});

describe("a bucket that refuses", () => {
  test("a bucket that does not exist: 500 as Mastodon's unrescued S3 errors, no row, nothing left anywhere", async () => {
    const other = await startTestServer({ ...s3.env(), S3_BUCKET: "no-such-bucket" });
    try {
      const bob = await createUser(other, "bob");
      const before = await s3.keys();
      const res = await bob.client.post("/api/v1/media", { multipart: form(await png()) });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: "There was a problem processing your request" });
      expect(await mediaRows(other)).toBe(0);
      expect(mediaFiles(other)).toEqual([]);
      expect(await s3.keys()).toEqual(before);
    } finally {
      await other.close();
    }
  });

  test("a store that cannot be reached: 503 with Mastodon's words for a storage networking error, no row, no file", async () => {
    // A port that was just free: nothing listens there.
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const other = await startTestServer({ ...s3.env(), S3_ENDPOINT: `http://127.0.0.1:${port}` });
    try {
      const bob = await createUser(other, "bob");
      for (const path of ["/api/v1/media", "/api/v2/media"]) {
        const res = await bob.client.post(path, { multipart: form(await png()) });
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: "There was a temporary problem serving your request, please try again" });
      }
      const video = await bob.client.post("/api/v1/media", { multipart: form(await clips.mp4(), "clip.mp4") });
      expect(video.status).toBe(503);
      expect(await mediaRows(other)).toBe(0);
      expect(mediaFiles(other)).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("with serving threads (WEB_THREADS=2)", () => {
  test("both threads give the bucket's URLs and redirect /system/ to the bucket", async () => {
    const threaded = await startTestServer({ ...s3.env({ alias: false }), WEB_THREADS: "2" });
    try {
      const bob = await createUser(threaded, "bob");
      const m = (await bob.client.post("/api/v1/media", { multipart: form(await png()) })).body;
      const status = await postStatus(bob, { status: "threaded", media_ids: [m.id] });
      const key = m.url.slice(`${threaded.base}/system/`.length);
      // New connections until each thread has answered (told by X-Request-Id's prefix).
      const threads = new Set<string>();
      for (let i = 0; i < 200 && threads.size < 2; i++) {
        const read = await fetch(`${threaded.base}/api/v1/statuses/${status.id}`, { headers: { connection: "close" } });
        expect((await read.json()).media_attachments[0].url).toBe(m.url);
        const res = await fetch(m.url, { redirect: "manual", headers: { connection: "close" } });
        expect(res.status).toBe(302);
        expect(res.headers.get("location")).toStartWith(`${s3.publicBase}/${key}?`);
        threads.add(res.headers.get("x-request-id")!.split("-")[0]!);
      }
      expect(threads.size).toBe(2);
    } finally {
      await threaded.close();
    }
  });
});
