import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signRequest } from "@fedify/fedify";
import sharp from "sharp";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { AP, eventually, getAp, startFederatedPair } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import type { TestServer } from "../support/server.ts";

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let bob: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const statusByUri = (server: TestServer, uri: string) => server.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri]);

beforeAll(async () => {
  // Remote media shown at their own server's URL (the copies made by default are media-cache.test.ts's).
  [a, b] = await startFederatedPair({ CACHE_REMOTE_MEDIA: "false" });
  alice = await createUser(a, "alice");
  bob = await createUser(b, "bob");
  receiver = await startReceiver("127.0.0.8");
  const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
  await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
  await eventually(async () => (await bob.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteAlice.id) } })).body[0]?.following === true, "bob follows alice");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  receiver?.stop();
});

describe("media travels with statuses", () => {
  test("alice's picture reaches bob's home at A's URL, with its alt text, size, blurhash and focal point; the Note carries it as Mastodon's Document", async () => {
    const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: "#3366aa" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "field.png");
    form.append("description", "A blue field");
    form.append("focus", "0.5,-0.25");
    const media = await alice.client.post("/api/v1/media", { multipart: form });
    expect(media.status).toBe(200);
    expect(media.body.blurhash).toEqual(expect.any(String));
    const post = await postStatus(alice, { status: "Look!", visibility: "public", media_ids: [media.body.id] });

    const note = await getAp(post.uri);
    // Compact JSON-LD writes a single attachment without its array.
    expect([note.body.attachment].flat()).toEqual([{ type: "Document", mediaType: "image/png", url: media.body.url, name: "A blue field", blurhash: media.body.blurhash, focalPoint: [0.5, -0.25], width: 320, height: 200 }]);

    const shown = await eventually(async () => (await bob.client.get("/api/v1/timelines/home")).body.find((s: any) => s.uri === post.uri), "the post in bob's home");
    expect(shown.media_attachments).toEqual([
      {
        id: expect.any(String),
        type: "image",
        url: media.body.url,
        preview_url: media.body.url,
        remote_url: media.body.url,
        preview_remote_url: null,
        text_url: null,
        meta: { original: { width: 320, height: 200, size: "320x200", aspect: 1.6 }, focus: { x: 0.5, y: -0.25 } },
        description: "A blue field",
        // A's own hash, not computed again on B (which keeps no copy).
        blurhash: media.body.blurhash,
      },
    ]);
    // Not downloaded: B keeps no file of it.
    expect(await b.database.port.all("SELECT file, preview, remote_url FROM media_attachments")).toEqual([{ file: null, preview: null, remote_url: media.body.url }]);
  });

  test("a Mastodon-shaped note's attachments keep their type, blurhash and focal point (clamped within -1..1); unsafe URLs and non-documents are dropped", async () => {
    const noteId = `${receiver.base}/notes/media`;
    const body = JSON.stringify({
      "@context": ["https://www.w3.org/ns/activitystreams", { toot: "http://joinmastodon.org/ns#", blurhash: "toot:blurhash", focalPoint: { "@container": "@list", "@id": "toot:focalPoint" } }],
      id: `${noteId}/activity`,
      type: "Create",
      actor: receiver.actor,
      to: [`${a.base}/users/alice`],
      object: {
        id: noteId,
        type: "Note",
        attributedTo: receiver.actor,
        to: [`${a.base}/users/alice`],
        content: "<p>pictures for you</p>",
        tag: [{ type: "Mention", href: `${a.base}/users/alice` }],
        attachment: [
          { type: "Document", mediaType: "image/jpeg", url: "https://files.example/cat.jpg", name: "a cat", blurhash: "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH", focalPoint: [-0.5, 0.25], width: 640, height: 480 },
          { type: "Document", mediaType: "video/mp4", url: "https://files.example/clip.mp4", name: "a clip", blurhash: "<script>", focalPoint: [3, 0] },
          { type: "Document", mediaType: "image/png", url: "javascript:alert(1)" },
          { type: "Note", content: "not an attachment" },
        ],
      },
    });
    const request = new Request(`${a.base}/users/alice/inbox`, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
    const res = await fetch(await signRequest(request, receiver.privateKey, receiver.keyId));
    expect(res.status).toBe(202);
    const stored = await eventually(() => statusByUri(a, noteId), "carol's note on A");
    const shown = (await alice.client.get(`/api/v1/statuses/${stored.id}`)).body;
    expect(shown.media_attachments.map((m: any) => [m.type, m.url, m.description, m.blurhash, m.meta])).toEqual([
      ["image", "https://files.example/cat.jpg", "a cat", "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH", { original: { width: 640, height: 480, size: "640x480", aspect: 640 / 480 }, focus: { x: -0.5, y: 0.25 } }],
      ["video", "https://files.example/clip.mp4", "a clip", null, { focus: { x: 1, y: 0 } }],
    ]);
    expect(shown.media_attachments[1].preview_url).toBeNull();
  });
});

describe("custom emojis of other servers", () => {
  test("a note's and an actor's Emoji tags show as their emojis, at their own server's URLs; malformed ones are left out", async () => {
    const { Emoji, Image, Note, Create, Mention } = await import("@fedify/fedify/vocab");
    const emoji = (name: string, url: string) => new Emoji({ id: new URL(`${receiver.base}/emojis/${encodeURIComponent(name)}`), name, icon: new Image({ url: new URL(url), mediaType: "image/png" }) });
    receiver.profile = { name: "Carol :blobcat:", tags: [emoji(":blobcat:", "https://files.example/blobcat.png"), emoji(":bad code:", "https://files.example/x.png")] };
    // A has stored carol already (the test above): her server tells it of the new profile.
    await receiver.updateProfile(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`);
    const id = new URL(`${receiver.base}/notes/emoji`);
    const note = new Note({
      id,
      attribution: new URL(receiver.actor),
      content: "<p>hello :wave: :js:</p>",
      to: new URL(`${a.base}/users/alice`),
      tags: [new Mention({ href: new URL(`${a.base}/users/alice`) }), emoji(":wave:", "https://files.example/wave.png"), emoji(":js:", "javascript:alert(1)")],
    });
    await receiver.send({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` }, new Create({ id: new URL(`${id.href}/activity`), actor: new URL(receiver.actor), object: note, to: new URL(`${a.base}/users/alice`) }));
    const stored = await eventually(() => statusByUri(a, id.href), "carol's note on A");
    const shown = (await alice.client.get(`/api/v1/statuses/${stored.id}`)).body;
    expect(shown.emojis).toEqual([{ shortcode: "wave", url: "https://files.example/wave.png", static_url: "https://files.example/wave.png", visible_in_picker: false }]);
    // The Update and the Create may be handled in either order on A: wait for the new name.
    const account = await eventually(async () => {
      const body = (await alice.client.get(`/api/v1/accounts/${shown.account.id}`)).body;
      return body.display_name === "Carol :blobcat:" ? body : null;
    }, "carol's new name on A");
    expect(account.emojis).toEqual([{ shortcode: "blobcat", url: "https://files.example/blobcat.png", static_url: "https://files.example/blobcat.png", visible_in_picker: false }]);
  });
});
