import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { MAX_UPLOAD_BYTES } from "../../src/http/body-limits.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mediaFiles, mediaRows } from "../support/files.ts";

/** How upload bodies are read, and how the files they leave are served. */
let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
});
afterAll(() => server.close());

const storedFiles = () => mediaFiles(server);

function png(width = 30, height = 20) {
  return sharp({ create: { width, height, channels: 3, background: "#3366aa" } }).png().toBuffer();
}

/** Noise, so that the compressed data is long and a cut lands inside the pixels. */
function noisy(format: "png" | "jpeg", width = 300, height = 200) {
  const image = sharp({ create: { width, height, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 40 } } });
  return (format === "png" ? image.png() : image.jpeg()).toBuffer();
}

function mediaForm(fields: Record<string, Uint8Array | string>): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) typeof v === "string" ? form.append(k, v) : form.append(k, new Blob([v as Uint8Array<ArrayBuffer>]), `${k}.bin`);
  return form;
}

/** Files under media/<kind>/ (media_attachments, media_uploads...). */
function filesOf(kind: string): string[] {
  return storedFiles().filter((f) => f.includes(`/${kind}/`));
}

/** A body sent without Content-Length (Transfer-Encoding: chunked), in the chunks given. */
function chunked(chunks: () => Iterable<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks()) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function multipartBytes(form: FormData): Promise<{ bytes: Uint8Array; type: string }> {
  const request = new Request("http://localhost/", { method: "POST", body: form });
  const type = request.headers.get("content-type")!;
  return { bytes: new Uint8Array(await request.arrayBuffer()), type };
}

describe("chunked bodies are counted as they arrive", () => {
  test("a chunked multipart upload under the limit is read and stored", async () => {
    const form = new FormData();
    form.append("file", new Blob([await png()]), "a.png");
    form.append("description", "sent in chunks");
    const { bytes, type } = await multipartBytes(form);
    const res = await fetch(`${server.base}/api/v1/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": type },
      body: chunked(function* () {
        for (let i = 0; i < bytes.length; i += 100) yield bytes.slice(i, i + 100);
      }),
      duplex: "half",
    } as RequestInit);
    const body = await res.json();
    expect(body).toMatchObject({ type: "image", description: "sent in chunks" });
    expect(res.status).toBe(200);
  });

  test("a chunked multipart upload past the limit is 413 JSON, and nothing is kept", async () => {
    const rows = await mediaRows(server);
    const files = storedFiles().length;
    const { bytes: head, type } = await multipartBytes((() => {
      const form = new FormData();
      form.append("file", new Blob([new Uint8Array(0)]), "big.png");
      return form;
    })());
    const megabyte = new Uint8Array(1024 * 1024).fill(7);
    const split = head.length - 50; // the file part's bytes go between its header and the closing boundary
    const res = await fetch(`${server.base}/api/v1/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": type, origin: "https://phanpy.social" },
      body: chunked(function* () {
        yield head.slice(0, split);
        for (let sent = 0; sent <= MAX_UPLOAD_BYTES; sent += megabyte.length) yield megabyte;
        yield head.slice(split);
      }),
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "Request body is too large" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await mediaRows(server)).toBe(rows);
    expect(storedFiles().length).toBe(files);
  });

  test("a chunked form past the form limit on a route that takes no uploads is 413, and no status is posted", async () => {
    const before = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.length;
    const res = await fetch(`${server.base}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/x-www-form-urlencoded" },
      body: chunked(function* () {
        yield new TextEncoder().encode("status=");
        for (let i = 0; i < 12; i++) yield new TextEncoder().encode("x".repeat(100_000));
      }),
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "Request body is too large" });
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.length).toBe(before);
  });
});

describe("an empty file input is an absent parameter", () => {
  test("Phanpy's profile form: empty avatar and header parts, and a new display name", async () => {
    const boundary = "----PhanpyFormBoundary7MA4YWxkTrZu0gW";
    const part = (headers: string, value: string) => `--${boundary}\r\n${headers}\r\n\r\n${value}\r\n`;
    const body =
      part('Content-Disposition: form-data; name="display_name"', "Alice from Phanpy") +
      part('Content-Disposition: form-data; name="note"', "Hello") +
      part('Content-Disposition: form-data; name="avatar"; filename=""\r\nContent-Type: application/octet-stream', "") +
      part('Content-Disposition: form-data; name="header"; filename=""\r\nContent-Type: application/octet-stream', "") +
      `--${boundary}--\r\n`;
    const before = (await alice.client.get("/api/v1/accounts/verify_credentials")).body;
    const res = await fetch(`${server.base}/api/v1/accounts/update_credentials`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${alice.token}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(res.status).toBe(200);
    const account = await res.json();
    expect(account.display_name).toBe("Alice from Phanpy");
    expect(account.note).toBe("<p>Hello</p>");
    expect(account.avatar).toBe(before.avatar);
    expect(account.header).toBe(before.header);
    expect((await alice.client.get("/api/v1/accounts/verify_credentials")).body.display_name).toBe("Alice from Phanpy");
  });

  test("an empty file part for media is a missing file", async () => {
    const rows = await mediaRows(server);
    const form = new FormData();
    form.append("file", new File([], ""));
    const res = await alice.client.post("/api/v1/media", { multipart: form });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation failed: File can't be blank" });
    expect(await mediaRows(server)).toBe(rows);
  });
});

describe("uploaded files are served to any origin", () => {
  test("media files, their short links, avatars, headers and the default pictures carry Access-Control-Allow-Origin: *", async () => {
    const form = new FormData();
    form.append("file", new Blob([await png()]), "a.png");
    const media = await alice.client.post("/api/v1/media", { multipart: form });
    expect(media.status).toBe(200);
    const status = await postStatus(alice, { status: "with a picture", media_ids: [media.body.id] });
    const profile = new FormData();
    profile.append("avatar", new Blob([await png(64, 64)]), "avatar.png");
    profile.append("header", new Blob([await png(300, 100)]), "header.png");
    const updated = await alice.client.patch("/api/v1/accounts/update_credentials", { multipart: profile });
    expect(updated.status).toBe(200);
    const other = await createUser(server, "plain");
    const plain = (await other.client.get("/api/v1/accounts/verify_credentials")).body;
    const urls = [media.body.url, media.body.preview_url, updated.body.avatar, updated.body.header, plain.avatar, plain.header];
    for (const url of urls) {
      expect(url).toStartWith(server.base);
      const res = await fetch(url, { headers: { origin: "https://phanpy.social" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
    const short = await fetch(status.media_attachments[0].text_url, { headers: { origin: "https://phanpy.social" }, redirect: "manual" });
    expect(short.status).toBe(302);
    expect(short.headers.get("access-control-allow-origin")).toBe("*");
  });
});

const INVALID = { error: "Validation failed: File content type is invalid, File is invalid" };
const PROCESSING_FAILED = { error: "Error processing thumbnail for uploaded media" };

describe("damaged images are refused, not stored as black", () => {
  async function damaged() {
    const fullPng = await noisy("png");
    const fullJpeg = await noisy("jpeg");
    return {
      // The signature, IHDR and the start of IDAT: the header says 300x200, the pixels are gone.
      "PNG header only": fullPng.subarray(0, 120),
      "PNG cut in half": fullPng.subarray(0, fullPng.length >> 1),
      "JPEG cut in half": fullJpeg.subarray(0, fullJpeg.length >> 1),
    };
  }

  test("v1 and v2 uploads and PUT with a new file: 422, nothing kept", async () => {
    const kept = await alice.client.post("/api/v1/media", { multipart: mediaForm({ file: await png() }) });
    expect(kept.status).toBe(200);
    for (const [name, bytes] of Object.entries(await damaged())) {
      const rows = await mediaRows(server);
      const files = storedFiles().length;
      for (const version of [1, 2]) {
        const res = await alice.client.post(`/api/v${version}/media`, { multipart: mediaForm({ file: bytes }) });
        expect({ name, version, status: res.status, body: res.body }).toEqual({ name, version, status: 422, body: INVALID });
      }
      const put = await alice.client.put(`/api/v1/media/${kept.body.id}`, { multipart: mediaForm({ file: bytes }) });
      expect({ name, status: put.status, body: put.body }).toEqual({ name, status: 422, body: INVALID });
      expect(await mediaRows(server)).toBe(rows);
      expect(storedFiles().length).toBe(files);
      expect((await alice.client.get(`/api/v1/media/${kept.body.id}`)).body.url).toBe(kept.body.url);
    }
  });

  test("v2 with a good thumbnail and a damaged file: 202, then the processing error Mastodon gives", async () => {
    const { "JPEG cut in half": bytes } = await damaged();
    const res = await alice.client.post("/api/v2/media", { multipart: mediaForm({ file: bytes, thumbnail: await png() }) });
    expect(res.status).toBe(202);
    await server.ctx.services.media.queue.idle();
    const after = await alice.client.get(`/api/v1/media/${res.body.id}`);
    expect(after.status).toBe(422);
    expect(after.body).toEqual(PROCESSING_FAILED);
    const described = await alice.client.put(`/api/v1/media/${res.body.id}`, { json: { description: "still broken" } });
    expect(described.status).toBe(422);
    expect(described.body).toEqual(PROCESSING_FAILED);
    expect(filesOf("media_uploads")).toEqual([]);
  });

  test("avatar and header: 422, the profile unchanged", async () => {
    const before = (await alice.client.get("/api/v1/accounts/verify_credentials")).body;
    for (const [name, bytes] of Object.entries(await damaged())) {
      for (const [field, label] of [["avatar", "Avatar"], ["header", "Header"]] as const) {
        const files = storedFiles().length;
        const res = await alice.client.patch("/api/v1/accounts/update_credentials", { multipart: mediaForm({ [field]: bytes, display_name: "not saved" }) });
        expect({ name, field, status: res.status }).toEqual({ name, field, status: 422 });
        expect(res.body.error).toStartWith("Validation failed: ");
        expect(res.body.error).toContain(`${label} is invalid`);
        expect(storedFiles().length).toBe(files);
      }
    }
    const after = (await alice.client.get("/api/v1/accounts/verify_credentials")).body;
    expect([after.display_name, after.avatar, after.header]).toEqual([before.display_name, before.avatar, before.header]);
  });
});

describe("PUT /api/v1/media/:id with a new file while the first is still processing", () => {
  async function raceAt(stage: "claimed" | "rendered") {
    const queue = server.ctx.services.media.queue;
    const hold = queue.hold(stage);
    const first = await alice.client.post("/api/v2/media", { multipart: mediaForm({ file: await noisy("jpeg", 900, 600), description: "first" }) });
    expect(first.status).toBe(202);
    await hold.reached;
    const second = await sharp({ create: { width: 120, height: 60, channels: 3, background: "#00ff00" } }).webp().toBuffer();
    const put = await alice.client.put(`/api/v1/media/${first.body.id}`, { multipart: mediaForm({ file: second, focus: "0.5,0.5" }) });
    expect(put.status).toBe(200);
    expect(put.body.meta.original.size).toBe("120x60");
    hold.release();
    await queue.idle();
    const after = await alice.client.get(`/api/v1/media/${first.body.id}`);
    expect(after.status).toBe(200);
    expect(after.body.url).toBe(put.body.url);
    expect(after.body.meta.original).toEqual(put.body.meta.original);
    expect(after.body.meta.focus).toEqual({ x: 0.5, y: 0.5 });
    expect(after.body.description).toBe("first");
    const served = await fetch(after.body.url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/webp");
    // The stale job left nothing behind: every processed file on disk belongs to a row.
    const referenced = (await server.database.port.all<{ file: string }>("SELECT file FROM media_attachments WHERE file IS NOT NULL")).map((r) => r.file);
    expect(filesOf("media_attachments").filter((f) => !referenced.some((r) => f.endsWith(r)))).toEqual([]);
    expect(filesOf("media_uploads")).toEqual([]);
  }

  test("the job has claimed the upload but not read it: the new file stands, not 'failed'", () => raceAt("claimed"));
  test("the job has rendered the old file: its result is dropped, the new file stands", () => raceAt("rendered"));
});

describe("an upload's body is read only for a caller with a valid token", () => {
  test("no token or a bad one: the route's 401 with Doorkeeper's header, given at the edge before the body is parsed; nothing kept", async () => {
    const rows = await mediaRows(server);
    for (const headers of [{}, { authorization: "Bearer not-a-token" }]) {
      let sent = 0;
      const megabyte = new Uint8Array(1024 * 1024).fill(1);
      const res = await fetch(`${server.base}/api/v1/media`, {
        method: "POST",
        headers: { ...headers, "content-type": "multipart/form-data; boundary=x", origin: "https://phanpy.social" },
        body: chunked(function* () {
          for (; sent < 100; sent++) yield megabyte;
        }),
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "The access token is invalid" });
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
    expect(await mediaRows(server)).toBe(rows);
  });
});
