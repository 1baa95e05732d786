import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Create, Document, Mention, Note } from "@fedify/fedify/vocab";
import sharp from "sharp";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { mediaFiles } from "../support/files.ts";
import { startS3, type TestS3 } from "../support/s3.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The remote media cache (CACHE_REMOTE_MEDIA) with MEDIA_STORAGE=s3: the copies of remote
// statuses' images go to the bucket, are shown from its public URL, are counted against
// REMOTE_MEDIA_CACHE_MB from the bucket's sizes, and leave it when evicted.
let s3: TestS3;
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
  s3 = await startS3();
  a = await startTestServer({ ...s3.env(), HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true", CACHE_REMOTE_MEDIA: "true", REMOTE_MEDIA_CACHE_MB: "1" });
  alice = await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.16");
  files = Bun.serve({
    hostname: "127.0.0.17",
    port: 0,
    fetch(request) {
      const bytes = served.get(new URL(request.url).pathname);
      return bytes ? new Response(new Uint8Array(bytes), { headers: { "content-type": "image/png" } }) : new Response("not found", { status: 404 });
    },
  });
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
  files?.stop(true);
  await s3?.stop();
});

const fileUrl = (path: string) => `http://127.0.0.17:${files.port}${path}`;

/** Carol's note to alice with one image; resolves to the status id once stored. */
async function noteWith(name: string, path: string) {
  const id = new URL(`${receiver.base}/notes/${name}`);
  const to = new URL(`${a.base}/users/alice`);
  const note = new Note({ id, attribution: new URL(receiver.actor), content: `<p>${name}</p>`, to, tags: [new Mention({ href: to })], attachments: [new Document({ mediaType: "image/png", url: new URL(fileUrl(path)) })] });
  await receiver.send({ id: to.href, inbox: `${to.href}/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to }));
  const stored = await eventually(() => a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [id.href]), `${name} stored`);
  return String(stored.id);
}

const show = async (id: string) => (await alice.client.get(`/api/v1/statuses/${id}`)).body;
const inBucket = (m: { url: string }) => m.url.startsWith(`${s3.publicBase}/remote_media/`);
const keyOf = (url: string) => url.slice(`${s3.publicBase}/`.length);

describe("remote images copied into the bucket", () => {
  test("a remote status's image is copied to the bucket and shown from its public URL; past the bound the oldest copy leaves the bucket", async () => {
    served.set("/first.png", await noise(1));
    served.set("/second.png", await noise(2));
    const first = await noteWith("first", "/first.png");
    const copy = await eventually(async () => (await show(first)).media_attachments.find(inBucket), "the first copied");
    expect(copy.preview_url).toStartWith(`${s3.publicBase}/remote_previews/`);
    expect(copy.remote_url).toBe(fileUrl("/first.png"));
    const fetched = await fetch(copy.url);
    expect(fetched.status).toBe(200);
    expect((await sharp(new Uint8Array(await fetched.arrayBuffer())).metadata()).width).toBe(360);
    expect(await s3.keys()).toEqual(expect.arrayContaining([keyOf(copy.url), keyOf(copy.preview_url)]));
    expect(mediaFiles(a)).toEqual([]);
    // Each copy is about 780 KB with its preview: the second passes the 1 MB bound.
    const second = await noteWith("second", "/second.png");
    await eventually(async () => (await show(second)).media_attachments.find(inBucket), "the second copied");
    await eventually(async () => ((await show(first)).media_attachments[0].url === fileUrl("/first.png") ? true : null), "the first at its origin again");
    const keys = await s3.keys();
    expect(keys).not.toContain(keyOf(copy.url));
    expect(keys).not.toContain(keyOf(copy.preview_url));
  });
});
