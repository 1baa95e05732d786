import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { openArchive } from "../../src/services/archive/files.ts";
import { collect } from "../../src/services/archive/streams.ts";
import { cliBeside } from "../support/cli.ts";
import { mediaFiles } from "../support/files.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { signedIn } from "../support/pages.ts";
import { createStaff } from "../support/staff.ts";
import { startS3, type TestS3 } from "../support/s3.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// With MEDIA_STORAGE=s3, what is not an attachment goes to the bucket too: profile pictures and
// custom emojis; and the archive export reads its media back from there.
let s3: TestS3;
let server: TestServer;
let alice: TestUser;
const work = mkdtempSync(join(tmpdir(), "rookery-s3-kept-"));

beforeAll(async () => {
  s3 = await startS3();
  server = await startTestServer(s3.env());
  alice = await createUser(server, "alice");
});
afterAll(async () => {
  await server?.close();
  await s3?.stop();
  rmSync(work, { recursive: true, force: true });
});

const png = (colour: string, width = 64, height = 64) => sharp({ create: { width, height, channels: 3, background: colour } }).png().toBuffer();
const keyOf = (url: string) => url.slice(`${s3.publicBase}/`.length);

async function setAvatar(colour: string) {
  const form = new FormData();
  form.append("avatar", new File([await png(colour)], "me.png", { type: "image/png" }));
  const res = await alice.client.patch("/api/v1/accounts/update_credentials", { multipart: form });
  expect(res.status).toBe(200);
  return res.body.avatar as string;
}

describe("profile pictures and emojis in the bucket", () => {
  test("an avatar goes to the bucket and is shown from there; a new one replaces it there", async () => {
    const first = await setAvatar("#ff0000");
    expect(first).toStartWith(`${s3.publicBase}/avatars/`);
    const served = await fetch(first);
    expect(served.headers.get("content-type")).toBe("image/webp");
    expect((await sharp(new Uint8Array(await served.arrayBuffer())).metadata()).width).toBe(400);
    const second = await setAvatar("#00ff00");
    const keys = await s3.keys("avatars/");
    expect(keys).toEqual([keyOf(second)]);
    expect(mediaFiles(server)).toEqual([]);
  });

  test("a custom emoji added with the command line is kept in the bucket and listed with its URLs there; removed, its objects go", async () => {
    const image = join(work, "blob.png");
    writeFileSync(image, await png("#123456", 32, 32));
    const cli = cliBeside(server);
    const added = await cli(["emoji", "add", "blobcat", image]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const list = (await alice.client.get("/api/v1/custom_emojis")).body;
    const blobcat = list.find((e: { shortcode: string }) => e.shortcode === "blobcat");
    expect(blobcat.url).toStartWith(`${s3.publicBase}/custom_emojis/`);
    expect(blobcat.static_url).toStartWith(`${s3.publicBase}/custom_emojis/`);
    expect(await s3.keys("custom_emojis/")).toEqual([keyOf(blobcat.url), keyOf(blobcat.static_url)].sort());
    expect((await fetch(blobcat.url)).status).toBe(200);
    const removed = await cli(["emoji", "remove", "blobcat"]);
    expect(removed.code).toBe(0);
    expect(await s3.keys("custom_emojis/")).toEqual([]);
  });
});

describe("the archive export", () => {
  test("the archive holds the attachments and the avatar read back from the bucket, byte for byte", async () => {
    const avatar = await setAvatar("#0000ff");
    const form = new FormData();
    form.append("file", new File([await png("#ff8800", 50, 40)], "orange.png", { type: "image/png" }));
    const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
    await postStatus(alice, { status: "an orange rectangle", media_ids: [media.id] });
    const res = await fetch(`${server.base}/api/v1/exports/archive.zip`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(res.status).toBe(200);
    const path = join(work, "archive.zip");
    writeFileSync(path, new Uint8Array(await res.arrayBuffer()));
    const files = new Map<string, Uint8Array>();
    const archive = await openArchive(path);
    await archive.scan(() => true, async (file, _size, body) => void files.set(file, await collect(body, 1e8, file)));
    await archive.close();
    const key = keyOf(media.url);
    expect(files.get(key)).toEqual(await s3.bytes(key));
    expect(files.get("avatar.webp")).toEqual(await s3.bytes(keyOf(avatar)));
    const outbox = JSON.parse(new TextDecoder().decode(files.get("outbox.json")!));
    const note = outbox.orderedItems.find((i: { object?: { content?: string } }) => i.object?.content?.includes("orange"));
    expect([note.object.attachment].flat()[0].url).toBe(key);
  });
});

describe("the federation health page", () => {
  test("names the bucket the media are in instead of adding up a folder that holds none", async () => {
    await createStaff(server, "adam", "admin");
    const admin = await signedIn(server, "adam");
    const page = await admin.get("/admin/federation");
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<tr><th scope="row">Media</th><td>in the bucket ${s3.bucket} (MEDIA_STORAGE=s3): its size is in the store's console;`);
    expect(page.text).not.toContain("Remote media cache");
  });
});
