import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mediaFiles, processedAfterHold, mediaRows } from "../support/files.ts";
import { drain } from "../support/wait.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const INVALID = { error: "Validation failed: File content type is invalid, File is invalid" };

async function jpegWithExif(width = 1200, height = 800) {
  return sharp({ create: { width, height, channels: 3, background: "#3366aa" } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .withExif({ IFD0: { Copyright: "Alice" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 0/1", GPSLongitudeRef: "W", GPSLongitude: "0/1 7/1 0/1" } })
    .toBuffer();
}

function upload(user: TestUser, bytes: Uint8Array, fields: Record<string, string | Blob> = {}, options: { version?: 1 | 2; name?: string; type?: string } = {}) {
  const form = new FormData();
  form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type: options.type ?? "application/octet-stream" }), options.name ?? "upload.bin");
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return user.client.post(`/api/v${options.version ?? 1}/media`, { multipart: form });
}

const storedFiles = () => mediaFiles(server);

async function fetchImage(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return { type: res.headers.get("content-type"), meta: await sharp(Buffer.from(await res.arrayBuffer())).metadata() };
}

describe("POST /api/v1/media", () => {
  test("a JPEG: oriented, stripped of EXIF and GPS, previewed, blurhashed", async () => {
    const res = await upload(alice, await jpegWithExif(), { description: "A blue field", focus: "0.5,-0.25" }, { name: "photo.png", type: "image/png" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["id", "type", "url", "preview_url", "remote_url", "preview_remote_url", "text_url", "meta", "description", "blurhash"]);
    const m = res.body;
    expect(m.type).toBe("image");
    expect(m.description).toBe("A blue field");
    expect(m.remote_url).toBeNull();
    expect(m.text_url).toMatch(new RegExp(`^${server.base}/media/[A-Za-z0-9_-]{19}$`));
    // 4x4 components: 1 + 1 + 4 + 2 x 15 characters.
    expect(m.blurhash).toMatch(/^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{36}$/);
    expect(m.meta.original).toEqual({ width: 800, height: 1200, size: "800x1200", aspect: 800 / 1200 });
    expect(m.meta.small.width * m.meta.small.height).toBeLessThanOrEqual(230_400);
    expect(m.meta.small.aspect).toBeCloseTo(800 / 1200, 2);
    expect(m.meta.focus).toEqual({ x: 0.5, y: -0.25 });
    expect(Object.keys(m.meta)).toEqual(["original", "small", "focus"]);

    const original = await fetchImage(m.url);
    expect(original.type).toBe("image/jpeg");
    expect([original.meta.width, original.meta.height]).toEqual([800, 1200]);
    expect(original.meta.exif).toBeUndefined();
    expect(original.meta.orientation).toBeUndefined();
    const preview = await fetchImage(m.preview_url);
    expect([preview.meta.width, preview.meta.height]).toEqual([m.meta.small.width, m.meta.small.height]);
    expect(preview.meta.exif).toBeUndefined();
  });

  test("PNG with alpha, a still GIF and WebP keep their formats; an animated GIF becomes gifv", async () => {
    const png = await sharp({ create: { width: 300, height: 200, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 0.5 } } }).png().toBuffer();
    const pngRes = await upload(alice, png);
    expect(pngRes.status).toBe(200);
    const pngFile = await fetchImage(pngRes.body.url);
    expect(pngFile.type).toBe("image/png");
    expect(pngFile.meta.hasAlpha).toBe(true);

    const frame = (color: string) => sharp({ create: { width: 120, height: 80, channels: 3, background: color } }).png().toBuffer();
    const gif = await sharp([await frame("#ff0000"), await frame("#0000ff")], { join: { animated: true } }).gif().toBuffer();
    const gifRes = await upload(alice, gif);
    expect(gifRes.body.type).toBe("gifv");
    expect(gifRes.body.url).toMatch(/\.mp4$/);
    const still = await sharp(await frame("#00ff00")).gif().toBuffer();
    const stillRes = await upload(alice, still);
    expect(stillRes.body.type).toBe("image");
    expect((await fetchImage(stillRes.body.url)).type).toBe("image/gif");

    const webp = await sharp({ create: { width: 1920, height: 1080, channels: 3, background: "#00aa00" } }).webp().toBuffer();
    const webpRes = await upload(alice, webp);
    expect((await fetchImage(webpRes.body.url)).type).toBe("image/webp");
    expect(webpRes.body.meta.small).toEqual({ width: 640, height: 360, size: "640x360", aspect: 640 / 360 });
  });

  test("the original is capped at 8,294,400 pixels and never enlarged", async () => {
    const big = await sharp({ create: { width: 5000, height: 4000, channels: 3, background: "#222222" } }).jpeg().toBuffer();
    const res = await upload(alice, big);
    expect(res.body.meta.original.width * res.body.meta.original.height).toBeLessThanOrEqual(8_294_400);
    expect(res.body.meta.original.aspect).toBeCloseTo(1.25, 2);
    const tiny = await sharp({ create: { width: 20, height: 10, channels: 3, background: "#fff" } }).png().toBuffer();
    const small = await upload(alice, tiny);
    expect(small.body.meta.original).toEqual({ width: 20, height: 10, size: "20x10", aspect: 2 });
    expect(small.body.meta.small).toEqual(small.body.meta.original);
  });

  test("refused uploads: 422 with Mastodon's words, and nothing kept", async () => {
    const rows = await mediaRows(server);
    const files = storedFiles().length;
    const random = await upload(alice, crypto.getRandomValues(new Uint8Array(4096)));
    expect(random.status).toBe(422);
    expect(random.body).toEqual(INVALID);
    const fakePng = await upload(alice, new TextEncoder().encode("<svg onload=alert(1)>not a png</svg>"), {}, { name: "cat.png", type: "image/png" });
    expect(fakePng.status).toBe(422);
    expect(fakePng.body).toEqual(INVALID);
    const huge = await sharp({ create: { width: 10000, height: 10000, channels: 3, background: "#000" } }).png({ compressionLevel: 9 }).toBuffer();
    const bomb = await upload(alice, huge);
    expect(bomb.status).toBe(422);
    expect(bomb.body).toEqual({ error: "10000x10000 images are not supported" });
    const tooBig = await upload(alice, new Uint8Array(16 * 1024 * 1024));
    expect(tooBig.status).toBe(422);
    expect(tooBig.body).toEqual({ error: "Validation failed: File must be less than 16 MB, File file size must be less than 16 MB" });
    const none = await alice.client.post("/api/v1/media", { multipart: new FormData() });
    expect(none.status).toBe(422);
    expect(none.body).toEqual({ error: "Validation failed: File can't be blank" });
    const jpeg = await jpegWithExif(40, 40);
    for (const [fields, message] of [
      [{ description: "d".repeat(1501) }, "Validation failed: Description is too long (maximum is 1500 characters)"],
      [{ focus: "2,0" }, "Validation failed: Focus must be two numbers from -1.0 to 1.0, as x,y"],
      [{ focus: "abc" }, "Validation failed: Focus must be two numbers from -1.0 to 1.0, as x,y"],
      [{ focus: "0.1" }, "Validation failed: Focus must be two numbers from -1.0 to 1.0, as x,y"],
    ] as const) {
      const res = await upload(alice, jpeg, fields);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: message });
    }
    expect(await mediaRows(server)).toBe(rows);
    expect(storedFiles().length).toBe(files);
  });

  test("auth: 401 without a token, 403 without write:media", async () => {
    const jpeg = await jpegWithExif(40, 40);
    const form = new FormData();
    form.append("file", new Blob([jpeg]), "a.jpg");
    const anonymous = await new Client(server.base).post("/api/v1/media", { multipart: form });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: "The access token is invalid" });
    const reader = await createUser(server, "reader", { scopes: "read write:statuses" });
    const scoped = await upload(reader, jpeg);
    expect(scoped.status).toBe(403);
    expect(scoped.body).toEqual({ error: "This action is outside the authorized scopes" });
  });
});

describe("POST /api/v2/media and GET /api/v1/media/:id", () => {
  test("202 with url null and a ready preview; 206 while processing, then 200", async () => {
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 30 } } }).jpeg().toBuffer();
    // Held once rendered and before it is stored, so that "while processing" is certain.
    const hold = server.ctx.services.media.queue.hold("rendered");
    const res = await upload(alice, big, { description: "noise" }, { version: 2 });
    expect(res.status).toBe(202);
    expect(res.body.url).toBeNull();
    expect(res.body.preview_url).toMatch(/\/system\/media_previews\//);
    expect(res.body.blurhash).toBeTruthy();
    expect(res.body.meta.original).toEqual({ width: 3325, height: 2493, size: "3325x2493", aspect: 3325 / 2493 });
    expect((await fetch(res.body.preview_url)).status).toBe(200);
    const after = await processedAfterHold(server, alice.client, res.body.id, hold);
    expect(after.body.url).toMatch(/\/system\/media_attachments\//);
    expect(after.body.meta.original).toEqual(res.body.meta.original);
    expect((await fetchImage(after.body.url)).meta.width).toBe(3325);
    expect(storedFiles().some((f) => f.includes("media_uploads"))).toBe(false);
  });

  test("a restart resumes unfinished processing", async () => {
    await server.ctx.services.media.queue.stop();
    const res = await upload(alice, await jpegWithExif(600, 400), {}, { version: 2 });
    expect(res.status).toBe(202);
    server = await server.restart();
    alice.client = new Client(server.base, alice.token);
    bob.client = new Client(server.base, bob.token);
    await server.ctx.services.media.queue.idle();
    const after = await alice.client.get(`/api/v1/media/${res.body.id}`);
    expect(after.status).toBe(200);
    expect(after.body.url).not.toBeNull();
  });

  test("other users' and unknown media are 404", async () => {
    const mine = await upload(alice, await jpegWithExif(40, 40));
    for (const [client, id] of [[bob.client, mine.body.id], [alice.client, "999999"], [alice.client, "abc"]] as const) {
      const get = await client.get(`/api/v1/media/${id}`);
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ error: "Record not found" });
      const put = await client.put(`/api/v1/media/${id}`, { json: { description: "mine now" } });
      expect(put.status).toBe(404);
      expect(put.body).toEqual({ error: "Record not found" });
    }
    expect((await alice.client.get(`/api/v1/media/${mine.body.id}`)).body.description).toBeNull();
  });
});

describe("PUT /api/v1/media/:id", () => {
  test("description, focus, a custom thumbnail, a new file", async () => {
    const res = await upload(alice, await jpegWithExif(900, 600));
    const id = res.body.id;
    const described = await alice.client.put(`/api/v1/media/${id}`, { form: { description: "Now described", focus: "-1,1" } });
    expect(described.status).toBe(200);
    expect(described.body.description).toBe("Now described");
    expect(described.body.meta.focus).toEqual({ x: -1, y: 1 });
    expect(Object.keys(described.body.meta)).toEqual(["focus", "original", "small"]);

    const thumb = await sharp({ create: { width: 500, height: 500, channels: 3, background: "#ff0000" } }).png().toBuffer();
    const form = new FormData();
    form.append("thumbnail", new Blob([thumb]), "t.png");
    const thumbed = await alice.client.put(`/api/v1/media/${id}`, { multipart: form });
    expect(thumbed.status).toBe(200);
    expect(thumbed.body.preview_url).not.toBe(res.body.preview_url);
    expect(thumbed.body.blurhash).not.toBe(res.body.blurhash);
    expect(thumbed.body.meta.small).toEqual({ width: 480, height: 480, size: "480x480", aspect: 1 });
    expect(thumbed.body.url).toBe(res.body.url);
    expect((await fetch(res.body.preview_url)).status).toBe(404);

    const replacement = new FormData();
    replacement.append("file", new Blob([await sharp({ create: { width: 100, height: 50, channels: 3, background: "#00ff00" } }).webp().toBuffer()]), "new.webp");
    const refiled = await alice.client.put(`/api/v1/media/${id}`, { multipart: replacement });
    expect(refiled.status).toBe(200);
    expect(refiled.body.meta.original.size).toBe("100x50");
    expect((await fetchImage(refiled.body.url)).type).toBe("image/webp");

    const bad = new FormData();
    bad.append("file", new Blob([new Uint8Array(64).fill(1)]), "x.jpg");
    const refused = await alice.client.put(`/api/v1/media/${id}`, { multipart: bad });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(INVALID);
    expect((await alice.client.get(`/api/v1/media/${id}`)).body.url).toBe(refiled.body.url);
  });
});

describe("attaching media to statuses", () => {
  test("in the order given, marked sensitive with the status; then no longer editable", async () => {
    const a = await upload(alice, await jpegWithExif(60, 40), { description: "first" });
    const b = await upload(alice, await jpegWithExif(40, 60), { description: "second" });
    const status = await postStatus(alice, { status: "two pictures", media_ids: [b.body.id, a.body.id], sensitive: true });
    expect(status.media_attachments.map((m: { id: string }) => m.id)).toEqual([b.body.id, a.body.id]);
    expect(status.media_attachments[0].description).toBe("second");
    expect(status.sensitive).toBe(true);
    const read = await new Client(server.base).get(`/api/v1/statuses/${status.id}`);
    expect(read.body.media_attachments.map((m: { url: string }) => m.url)).toEqual([b.body.url, a.body.url]);

    for (const res of [await alice.client.get(`/api/v1/media/${a.body.id}`), await alice.client.put(`/api/v1/media/${a.body.id}`, { json: { description: "too late" } })]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    const again = await alice.client.post("/api/v1/statuses", { json: { status: "reuse", media_ids: [a.body.id] } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ error: `Media ${a.body.id} not found or already attached to another post` });
    const deletion = await alice.client.delete(`/api/v1/media/${a.body.id}`);
    expect(deletion.status).toBe(422);
    expect(deletion.body).toEqual({ error: "Media attachment is currently used by a status" });
  });

  test("text_url leads to the original once the status is public, and to nothing before or when private", async () => {
    const open = await upload(alice, await jpegWithExif(30, 20));
    const hidden = await upload(alice, await jpegWithExif(20, 30));
    const follow = (url: string) => fetch(url, { redirect: "manual" });
    const before = await follow(open.body.text_url);
    expect(before.status).toBe(404);
    expect(await before.json()).toEqual({ error: "Record not found" });
    await postStatus(alice, { status: "public picture", media_ids: [open.body.id] });
    await postStatus(alice, { status: "private picture", media_ids: [hidden.body.id], visibility: "private" });
    const after = await follow(open.body.text_url);
    expect(after.status).toBe(302);
    expect(after.headers.get("location")).toBe(open.body.url);
    expect((await follow(hidden.body.text_url)).status).toBe(404);
    expect((await follow(`${server.base}/media/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    expect(open.body.text_url).not.toBe(hidden.body.text_url);
  });

  test("only text, only media, or both; never someone else's media", async () => {
    const pic = await upload(alice, await jpegWithExif(50, 50));
    const mediaOnly = await postStatus(alice, { media_ids: [pic.body.id] });
    expect(mediaOnly.content).toBe("");
    expect(mediaOnly.media_attachments.length).toBe(1);
    const bobs = await upload(bob, await jpegWithExif(50, 50));
    const theft = await alice.client.post("/api/v1/statuses", { form: { status: "mine?", "media_ids[]": bobs.body.id } });
    expect(theft.status).toBe(422);
    expect(theft.body).toEqual({ error: `Media ${bobs.body.id} not found or already attached to another post` });
  });

  test("a still-processing attachment may be attached; its url appears once processed", async () => {
    const big = await sharp({ create: { width: 3000, height: 3000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 100, sigma: 40 } } }).jpeg().toBuffer();
    const pending = await upload(alice, big, {}, { version: 2 });
    const status = await postStatus(alice, { status: "posted early", media_ids: [pending.body.id] });
    const anonymous = new Client(server.base);
    const early = (await anonymous.get(`/api/v1/statuses/${status.id}`)).body.media_attachments[0];
    expect(early.preview_url).not.toBeNull();
    await server.ctx.services.media.queue.idle();
    const late = (await anonymous.get(`/api/v1/statuses/${status.id}`)).body.media_attachments[0];
    expect(late.url).toMatch(/\/system\/media_attachments\//);
  });

  test("delete and redraft: the media come back in the DELETE answer and can be reused", async () => {
    const pic = await upload(alice, await jpegWithExif(70, 70), { description: "keep me" });
    const status = await postStatus(alice, { status: "draft one", media_ids: [pic.body.id] });
    const deleted = await alice.client.delete(`/api/v1/statuses/${status.id}`);
    expect(deleted.body.media_attachments.map((m: { id: string }) => m.id)).toEqual([pic.body.id]);
    expect(deleted.body.text).toBe("draft one");
    const redraft = await postStatus(alice, { status: deleted.body.text, media_ids: deleted.body.media_attachments.map((m: { id: string }) => m.id) });
    expect(redraft.media_attachments[0].description).toBe("keep me");
  });
});

describe("cleanup", () => {
  test("unattached media go after a day, with their files; attached ones stay", async () => {
    const loose = await upload(alice, await jpegWithExif(30, 30));
    const kept = await upload(alice, await jpegWithExif(30, 30));
    await postStatus(alice, { status: "keeps its media", media_ids: [kept.body.id] });
    const looseFile = loose.body.url;
    server.clock.advance(25 * 60 * 60 * 1000);
    await drain(server);
    expect((await alice.client.get(`/api/v1/media/${loose.body.id}`)).status).toBe(404);
    expect((await fetch(looseFile)).status).toBe(404);
    expect((await fetch(kept.body.url)).status).toBe(200);
  });
});
