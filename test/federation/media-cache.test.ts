import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Create, Document, Mention, Note, Video } from "@fedify/fedify/vocab";
import sharp from "sharp";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// CACHE_REMOTE_MEDIA: a server that copies the images of remote statuses, bounded to 1 MB in
// all, and a file server on another loopback address that serves what the remote notes attach.
let a: TestServer;
let alice: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let files: ReturnType<typeof Bun.serve>;
const served = new Map<string, Uint8Array<ArrayBuffer>>();

/** Random pixels do not compress: about 390 KB as PNG, and the same again for its preview. */
const noise = (seed: number) => {
  let x = seed;
  const pixels = new Uint8Array(360 * 360 * 3).map(() => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x & 255;
  });
  return sharp(pixels, { raw: { width: 360, height: 360, channels: 3 } }).png({ compressionLevel: 9 }).toBuffer();
};

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true", CACHE_REMOTE_MEDIA: "true", REMOTE_MEDIA_CACHE_MB: "1" });
  alice = await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.14");
  files = Bun.serve({
    hostname: "127.0.0.15",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      // Bytes without end and without Content-Length: only the cap stops the reading.
      if (path === "/endless.png") return new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(64 * 1024)) }), { headers: { "content-type": "image/png" } });
      const bytes = served.get(path);
      return bytes ? new Response(new Uint8Array(bytes), { headers: { "content-type": "image/png" } }) : new Response("not found", { status: 404 });
    },
  });
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
  files?.stop(true);
});

const fileUrl = (path: string) => `http://127.0.0.15:${files.port}${path}`;

/** Carol's note to alice with these attachments; resolves to the status as alice sees it once stored. */
async function noteWith(name: string, attachments: (Document | Video)[]) {
  const id = new URL(`${receiver.base}/notes/${name}`);
  const to = new URL(`${a.base}/users/alice`);
  const note = new Note({ id, attribution: new URL(receiver.actor), content: `<p>${name}</p>`, to, tags: [new Mention({ href: to })], attachments });
  await receiver.send({ id: to.href, inbox: `${to.href}/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to }));
  const stored = await eventually(() => a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [id.href]), `${name} stored`);
  return String(stored.id);
}

const show = async (id: string) => (await alice.client.get(`/api/v1/statuses/${id}`)).body;
const cachedHere = (m: { url: string }) => m.url.startsWith(`${a.base}/system/remote_media/`);
const fileOf = (url: string) => join(a.dataDir, "media", new URL(url).pathname.replace(/^\/system\//, ""));

describe("remote images copied here (CACHE_REMOTE_MEDIA)", () => {
  test("an image is re-encoded here without its EXIF and shown from here, remote_url naming its origin; too large, not an image, or a video: left at its origin", async () => {
    const withGps = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#aa6633" } })
      .jpeg()
      .withExifMerge({ IFD0: { Make: "SecretCam", Model: "GPS inside" } })
      .toBuffer();
    expect((await sharp(withGps).metadata()).exif).toBeDefined();
    served.set("/photo.jpg", withGps);
    served.set("/fake.png", Buffer.from("<html>not an image</html>"));
    const id = await noteWith("pictures", [
      new Document({ mediaType: "image/png", url: new URL(fileUrl("/endless.png")), name: "endless" }),
      new Document({ mediaType: "image/png", url: new URL(fileUrl("/fake.png")), name: "fake" }),
      new Video({ mediaType: "video/mp4", url: new URL(fileUrl("/clip.mp4")), name: "clip" }),
      new Document({ mediaType: "image/jpeg", url: new URL(fileUrl("/photo.jpg")), name: "a photo" }),
    ]);
    // Images are copied in their order: once the last is here, the others were tried.
    const status = await eventually(async () => {
      const s = await show(id);
      return cachedHere(s.media_attachments[3]) ? s : null;
    }, "the photo copied here");
    const [endless, fake, clip, photo] = status.media_attachments;
    expect([endless.url, fake.url, clip.url]).toEqual([fileUrl("/endless.png"), fileUrl("/fake.png"), fileUrl("/clip.mp4")]);
    expect(photo).toMatchObject({
      type: "image",
      remote_url: fileUrl("/photo.jpg"),
      preview_url: expect.stringMatching(new RegExp(`^${a.base}/system/remote_previews/`)),
      description: "a photo",
      meta: { original: { width: 800, height: 600, size: "800x600", aspect: 800 / 600 }, small: { width: 553, height: 415, size: "553x415" } },
      blurhash: expect.any(String),
    });
    const copy = await fetch(photo.url);
    expect(copy.status).toBe(200);
    const metadata = await sharp(new Uint8Array(await copy.arrayBuffer())).metadata();
    expect([metadata.width, metadata.height, metadata.exif]).toEqual([800, 600, undefined]);
  });

  test("past REMOTE_MEDIA_CACHE_MB the oldest copies go, files and all, and show at their origin again", async () => {
    served.set("/first.png", await noise(1));
    served.set("/second.png", await noise(2));
    const first = await noteWith("first", [new Document({ mediaType: "image/png", url: new URL(fileUrl("/first.png")) })]);
    const firstCopy = await eventually(async () => (await show(first)).media_attachments.find(cachedHere), "the first copied");
    // The photo of the test before and the first picture fit in 1 MB; with the second they do not.
    expect(existsSync(fileOf(firstCopy.url))).toBe(true);
    const second = await noteWith("second", [new Document({ mediaType: "image/png", url: new URL(fileUrl("/second.png")) })]);
    await eventually(async () => (await show(second)).media_attachments.find(cachedHere), "the second copied");
    const evicted = await eventually(async () => {
      const m = (await show(first)).media_attachments[0];
      return m.url === fileUrl("/first.png") ? m : null;
    }, "the first at its origin again");
    expect(evicted.remote_url).toBe(fileUrl("/first.png"));
    expect(existsSync(fileOf(firstCopy.url))).toBe(false);
    expect(existsSync(fileOf(firstCopy.preview_url))).toBe(false);
  });
});
