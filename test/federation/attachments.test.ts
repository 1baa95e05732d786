import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifyJsonLd } from "@fedify/fedify";
import { Create, Document } from "@fedify/fedify/vocab";
import { getDocumentLoader } from "@fedify/vocab-runtime";
import sharp from "sharp";
import { remoteBlurhash } from "../../src/media-files/hints.ts";
import { clips, removeClips } from "../support/clips.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Attachments as Mastodon sends and reads them (its ActivityPub::NoteSerializer::
// MediaAttachmentSerializer and Parser::MediaAttachmentParser): a Document with mediaType, url,
// name, blurhash, focalPoint [x, y] and its size; `toot:blurhash` and `toot:focalPoint` (a
// @list) defined in the @context, since Mastodon reads both by their plain keys.

/** The @context Mastodon writes its notes in, with the two attachment terms. */
const MASTODON_NOTE_CONTEXT = ["https://www.w3.org/ns/activitystreams", { toot: "http://joinmastodon.org/ns#", blurhash: "toot:blurhash", focalPoint: { "@container": "@list", "@id": "toot:focalPoint" } }];
const HASH = "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH";

let a: TestServer;
let alice: TestUser;
let raw: Awaited<ReturnType<typeof startRawServer>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  raw = await startRawServer("127.0.0.46");
});
afterAll(async () => {
  await a?.close();
  raw?.stop();
  removeClips();
});

const aliceUri = () => `${a.base}/users/alice`;
const inbox = () => `${a.base}/users/alice/inbox`;
const statusByUri = (uri: string) => a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri]);

/** A note from `actor` to alice with these attachments, posted in `context`; answers it as alice's API shows it. */
async function received(actor: string, id: string, attachment: Record<string, unknown>[], context: unknown = MASTODON_CONTEXT) {
  const note = { id, type: "Note", attributedTo: actor, to: [aliceUri()], content: "<p>pictures</p>", tag: [{ type: "Mention", href: aliceUri() }], attachment };
  const res = await raw.post(inbox(), actor, { "@context": context, id: `${id}/activity`, type: "Create", to: [aliceUri()], object: note });
  expect(res.status).toBe(202);
  const stored = await eventually(() => statusByUri(id), `${id} on A`);
  const shown = await alice.client.get(`/api/v1/statuses/${stored.id}`);
  expect(shown.status).toBe(200);
  expect(shown.body.content).toBe("<p>pictures</p>");
  return shown.body.media_attachments as { url: string; blurhash: string | null; meta: { focus?: { x: number; y: number } } }[];
}

const hints = (media: { url: string; blurhash: string | null; meta: { focus?: unknown } }[]) => media.map((m) => [new URL(m.url).pathname, m.blurhash, m.meta.focus ?? null]);

describe("attachments sent as Mastodon sends them", () => {
  test("a follower on another server receives the Note's picture as a Document with its blurhash, focalPoint [x, y] and size, both terms defined in the @context and under the Linked Data signature", async () => {
    const dave = raw.actor("dave", "dave");
    expect((await raw.post(inbox(), dave, { id: `${dave}#follows/1`, type: "Follow", object: aliceUri() })).status).toBe(202);
    await eventually(() => raw.received.some((r) => r.body?.type === "Accept"), "alice accepts dave");

    const png = await sharp({ create: { width: 300, height: 120, channels: 3, background: "#aa3366" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "wide.png");
    form.append("description", "A wide red field");
    form.append("focus", "-0.3,0.6");
    const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
    const post = await postStatus(alice, { status: "Crop me well", visibility: "public", media_ids: [media.id] });

    const create = await eventually(() => raw.received.find((r) => r.body?.type === "Create" && r.body.object?.id === post.uri)?.body, "the Create at dave's inbox");
    expect([create.object.attachment].flat()).toEqual([{ type: "Document", mediaType: "image/png", url: media.url, name: "A wide red field", blurhash: media.blurhash, focalPoint: [-0.3, 0.6], width: 300, height: 120 }]);
    // Mastodon would keep the hash (its own check), and reads both keys as its context defines them.
    expect(remoteBlurhash(media.blurhash)).toBe(media.blurhash);
    const terms = create["@context"].find((c: unknown) => typeof c === "object" && c !== null && "toot" in c);
    expect(terms).toMatchObject({ toot: "http://joinmastodon.org/ns#", blurhash: "toot:blurhash", focalPoint: { "@container": "@list", "@id": "toot:focalPoint" } });
    // Relays and forwarders check the Linked Data signature over the expanded document: it covers the new terms.
    const loader = getDocumentLoader({ allowPrivateAddress: true });
    expect(create.signature).toBeDefined();
    expect(await verifyJsonLd(create, { documentLoader: loader, contextLoader: loader })).toBe(true);
    const forged = structuredClone(create);
    forged.object.attachment = [{ ...[create.object.attachment].flat()[0], focalPoint: [0.9, 0.9] }];
    expect(await verifyJsonLd(forged, { documentLoader: loader, contextLoader: loader })).toBe(false);
    // A JSON-LD reader sees toot:focalPoint as the ordered pair.
    const parsed = await Create.fromJsonLd(create, { documentLoader: loader, contextLoader: loader });
    const [document] = await Array.fromAsync((await parsed.getObject({ documentLoader: loader, contextLoader: loader }))!.getAttachments());
    expect(document).toBeInstanceOf(Document);
    expect([(document as Document).focalPoint, (document as Document).blurhash]).toEqual([[-0.3, 0.6], media.blurhash]);
  });

  test("a video goes with its duration (ISO 8601, as Mastodon writes it) and its custom thumbnail as the Document's icon", async () => {
    // dave follows alice since the test above.
    const thumb = await sharp({ create: { width: 80, height: 60, channels: 3, background: "#3366aa" } }).jpeg().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([(await clips.mp4()) as Uint8Array<ArrayBuffer>]), "clip.mp4");
    form.append("thumbnail", new Blob([thumb]), "thumb.jpg");
    form.append("description", "A test card");
    const media = (await alice.client.post("/api/v1/media", { multipart: form })).body;
    expect(media.type).toBe("video");
    const post = await postStatus(alice, { status: "Watch", visibility: "public", media_ids: [media.id] });

    const create = await eventually(() => raw.received.find((r) => r.body?.type === "Create" && r.body.object?.id === post.uri)?.body, "the Create at dave's inbox");
    const [document] = [create.object.attachment].flat();
    const seconds = Math.round(media.meta.original.duration * 1000) / 1000;
    expect(document).toEqual({
      type: "Document",
      mediaType: "video/mp4",
      url: media.url,
      name: "A test card",
      blurhash: media.blurhash,
      width: 320,
      height: 240,
      duration: `PT${seconds}S`,
      icon: { type: "Image", mediaType: "image/jpeg", url: media.preview_url },
    });
  });
});

describe("attachments read as Mastodon reads them", () => {
  test("blurhash and focalPoint are read by their plain keys whether the sender's @context defines them or not, and through JSON-LD otherwise", async () => {
    const erin = raw.actor("erin", "erin");
    const doc = (name: string, extra: Record<string, unknown>) => ({ type: "Document", mediaType: "image/png", url: `https://files.example/${name}.png`, ...extra });
    // Terms defined (Mastodon's context), as a list or as a plain term; and undefined (read by their keys, as Mastodon does).
    expect(hints(await received(erin, `${raw.base}/notes/defined`, [doc("listed", { blurhash: HASH, focalPoint: [0.25, -0.75] })], MASTODON_NOTE_CONTEXT))).toEqual([["/listed.png", HASH, { x: 0.25, y: -0.75 }]]);
    const plain = ["https://www.w3.org/ns/activitystreams", { toot: "http://joinmastodon.org/ns#", blurhash: "toot:blurhash", focalPoint: "toot:focalPoint" }];
    expect(hints(await received(erin, `${raw.base}/notes/plain`, [doc("plain", { blurhash: HASH, focalPoint: [-0.1, 0.1] })], plain))).toEqual([["/plain.png", HASH, { x: -0.1, y: 0.1 }]]);
    expect(hints(await received(erin, `${raw.base}/notes/undefined`, [doc("bare", { blurhash: HASH, focalPoint: [0.5, 0.5] })]))).toEqual([["/bare.png", HASH, { x: 0.5, y: 0.5 }]]);
    // No plain keys, the terms written as compact IRIs: read through the JSON-LD.
    const prefixed = doc("prefixed", { "toot:blurhash": HASH, "toot:focalPoint": { "@list": [0.3, 0.4] } });
    expect(hints(await received(erin, `${raw.base}/notes/prefixed`, [prefixed], ["https://www.w3.org/ns/activitystreams", { toot: "http://joinmastodon.org/ns#" }]))).toEqual([["/prefixed.png", HASH, { x: 0.3, y: 0.4 }]]);
  });

  test("hostile blurhashes are refused and out-of-range focal points clamped, as Mastodon's checks would; the note and its other attachments stand", async () => {
    const frank = raw.actor("frank", "frank");
    const doc = (name: string, extra: Record<string, unknown>) => ({ type: "Document", mediaType: "image/png", url: `https://files.example/${name}.png`, ...extra });
    const attachments = [
      doc("number", { blurhash: 5, focalPoint: ["0.5", "0.5"] }),
      // '~' says 2x10 components: Mastodon keeps at most 5x5 (the length fits the components, so only that refuses it).
      doc("components", { blurhash: `~${"0".repeat(43)}`, focalPoint: [3, -7] }),
      doc("short", { blurhash: HASH.slice(0, 20), focalPoint: [0.5] }),
      doc("huge", { blurhash: "U".repeat(100_000), focalPoint: Array.from({ length: 10_000 }, () => 0.5) }),
      doc("markup", { blurhash: "<script>alert(1)</script>", focalPoint: { x: 0.1, y: 0.2 } }),
      doc("lists", { blurhash: [HASH, HASH], focalPoint: [[0.1, 0.2], [0.3, 0.4]] }),
      doc("good", { blurhash: HASH, focalPoint: [1, -1] }),
    ];
    for (const [path, context] of [["/notes/hostile-defined", MASTODON_NOTE_CONTEXT], ["/notes/hostile-undefined", MASTODON_CONTEXT]] as const) {
      const media = await received(frank, `${raw.base}${path}`, attachments, context);
      expect(hints(media)).toEqual([
        ["/number.png", null, null],
        ["/components.png", null, { x: 1, y: -1 }],
        ["/short.png", null, null],
        ["/huge.png", null, null],
        ["/markup.png", null, null],
        ["/lists.png", null, null],
        ["/good.png", HASH, { x: 1, y: -1 }],
      ]);
    }
    // Nothing else was made of them: two notes, seven attachments each.
    expect(await a.database.port.get("SELECT count(*) AS n FROM media_attachments WHERE remote_url LIKE 'https://files.example/%' AND status_id IN (SELECT id FROM statuses WHERE uri LIKE ?)", [`${raw.base}/notes/hostile-%`])).toEqual({ n: 14 });
  });
});
