import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import generator from "megalodon";
import { createReadStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
});
afterAll(() => server.close());

const picture = () => sharp({ create: { width: 800, height: 600, channels: 3, background: "#aa5500" } }).jpeg().toBuffer();

test("masto.js: v2 upload, its polling until the url appears, then a post with the media", async () => {
  const client = createRestAPIClient({ url: server.base, accessToken: alice.token });
  const attachment = await client.v2.media.create({ file: new Blob([await picture()], { type: "image/jpeg" }), description: "via masto" });
  expect(attachment.url).toBeTruthy();
  expect(attachment.type).toBe("image");
  const updated = await client.v1.media.$select(attachment.id).update({ focus: "0.2,0.3" });
  expect(updated.meta?.focus).toEqual({ x: 0.2, y: 0.3 });
  const status = await client.v1.statuses.create({ status: "with a picture", mediaIds: [attachment.id], sensitive: true });
  expect(status.mediaAttachments[0]?.description).toBe("via masto");
  expect(status.sensitive).toBe(true);
});

test("megalodon: upload and post", async () => {
  const client = generator("mastodon", server.base, alice.token);
  // megalodon posts with the form-data package, which reads a Node stream.
  const path = join(server.dataDir, "megalodon-upload.jpg");
  writeFileSync(path, await picture());
  const uploaded = await client.uploadMedia(createReadStream(path), { description: "via megalodon" });
  const id = (uploaded.data as { id: string }).id;
  await server.ctx.services.media.queue.idle();
  const status = await client.postStatus("megalodon picture", { media_ids: [id] });
  expect((status.data as { media_attachments: { id: string }[] }).media_attachments[0]?.id).toBe(id);
});
