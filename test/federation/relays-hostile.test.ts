import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signJsonLd } from "@fedify/fedify";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startRelay, type Relay } from "../support/relay.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// What others say around relays. Only the relay answers the instance actor's Follow of it.
// An activity signed with a Linked Data signature is believed whoever delivers it (Fedify
// checks the embedded signature, not the request's): a relay, or anyone who kept a copy, can
// send an author's old activities again, and a relay may deliver them out of order. What was
// said later by the author stands: an older Update does not undo a newer one (Mastodon's
// already_updated_more_recently?), and a post its author deleted is not brought back by its
// Create, nor taken when its Delete came first (Mastodon's tombstones).

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

let a: TestServer;
let relay: Relay;
let raw: Awaited<ReturnType<typeof startRawServer>>;
let other: Awaited<ReturnType<typeof startRawServer>>;
let alice: TestUser;
let dave: string;

const contentOf = async (uri: string) => (await a.database.port.get<{ content_html: string }>("SELECT content_html FROM statuses WHERE uri = ?", [uri]))?.content_html ?? null;
const editsOf = async (uri: string) =>
  (await a.database.port.get<{ n: number }>("SELECT count(*) AS n FROM status_edits WHERE status_id = (SELECT id FROM statuses WHERE uri = ?)", [uri]))!.n;

/** dave's Note `name` as he would write it at `at`, `content` its text. */
function note(name: string, content: string, extra: Record<string, unknown> = {}) {
  return { id: `${dave}/statuses/${name}`, type: "Note", attributedTo: dave, to: [PUBLIC], cc: [`${dave}/followers`], content: `<p>${content}</p>`, published: "2026-01-01T00:00:00Z", ...extra };
}

/** An activity of dave's (or another actor's of `server`), LD-signed by his key as Mastodon signs what it sends relays. */
async function signed(type: string, id: string, object: Record<string, unknown> | string, actor = dave, server = raw) {
  const activity = { "@context": MASTODON_CONTEXT, id, type, actor, to: [PUBLIC], cc: [`${actor}/followers`], object };
  return (await signJsonLd(activity, server.privateKey, new URL(`${actor}#main-key`), {})) as Record<string, unknown>;
}

const counts = () => a.database.port.get("SELECT (SELECT count(*) FROM statuses) AS statuses, (SELECT count(*) FROM tombstones) AS tombstones");

beforeAll(async () => {
  [a, relay, raw, other] = await Promise.all([
    startTestServer({ HOST: "127.0.0.150", ALLOW_PRIVATE_ADDRESSES: "true" }),
    startRelay("127.0.0.151", "mastodon"),
    startRawServer("127.0.0.152"),
    startRawServer("127.0.0.153"),
  ]);
  alice = await createUser(a, "alice");
  dave = raw.actor("dave", "dave", { followers: `${raw.base}/actors/dave/followers` });
  await a.ctx.services.relays.add(relay.inbox);
  await eventually(async () => (await a.database.port.get<{ state: string }>("SELECT state FROM relays"))?.state === "accepted", "the relay's Accept", 20_000);
});
afterAll(async () => {
  await a?.close();
  relay?.stop();
  raw?.stop();
  other?.stop();
});

describe("old activities sent again", () => {
  test("an older Update of a relayed post, sent again after a newer one, changes nothing; the newer one stands", async () => {
    const uri = `${dave}/statuses/edited`;
    expect((await relay.post(`${a.base}/inbox`, await signed("Create", `${uri}/activity`, note("edited", "first")))).status).toBe(202);
    expect(await contentOf(uri)).toBe("<p>first</p>");
    const older = await signed("Update", `${uri}#updates/1`, note("edited", "second", { updated: "2026-01-02T00:00:00Z" }));
    const newer = await signed("Update", `${uri}#updates/2`, note("edited", "third", { updated: "2026-01-03T00:00:00Z" }));
    expect((await relay.post(`${a.base}/inbox`, newer)).status).toBe(202);
    expect(await contentOf(uri)).toBe("<p>third</p>");
    const edits = await editsOf(uri);

    // The older one, late through the relay, and again by a stranger who kept it.
    expect((await relay.post(`${a.base}/inbox`, older)).status).toBe(202);
    const mallory = raw.actor("mallory", "mallory");
    expect((await raw.post(`${a.base}/inbox`, mallory, older)).status).toBe(202);
    expect(await contentOf(uri)).toBe("<p>third</p>");
    expect(await editsOf(uri)).toBe(edits);
    const shown = await alice.client.get("/api/v1/timelines/public");
    expect(shown.body.find((s: any) => s.uri === uri)?.content).toBe("<p>third</p>");
  });

  test("a relayed post deleted by its author is not brought back by its Create sent again, through the relay or by anyone", async () => {
    const uri = `${dave}/statuses/deleted`;
    const create = await signed("Create", `${uri}/activity`, note("deleted", "soon gone"));
    expect((await relay.post(`${a.base}/inbox`, create)).status).toBe(202);
    expect(await contentOf(uri)).toBe("<p>soon gone</p>");
    expect((await relay.post(`${a.base}/inbox`, await signed("Delete", `${uri}#delete`, { id: uri, type: "Tombstone" }))).status).toBe(202);
    expect(await contentOf(uri)).toBeNull();

    const before = await counts();
    expect((await relay.post(`${a.base}/inbox`, create)).status).toBe(202);
    expect((await raw.post(`${a.base}/inbox`, raw.actor("mallory", "mallory"), create)).status).toBe(202);
    expect(await contentOf(uri)).toBeNull();
    expect(await counts()).toEqual(before);
    // Nor by a search that resolves it (the author's server lying, or a copy elsewhere).
    raw.serve("/actors/dave/statuses/deleted", { "@context": MASTODON_CONTEXT, ...note("deleted", "back from the dead") });
    const found = await alice.client.get("/api/v2/search", { query: { q: uri, resolve: "true", type: "statuses" } });
    expect(found.body.statuses).toEqual([]);
    expect(await contentOf(uri)).toBeNull();
  });

  test("a Delete that arrives before its Create keeps the post out; a Delete of another server's post keeps nothing out", async () => {
    const uri = `${dave}/statuses/late`;
    expect((await relay.post(`${a.base}/inbox`, await signed("Delete", `${uri}#delete`, { id: uri, type: "Tombstone" }))).status).toBe(202);
    expect((await relay.post(`${a.base}/inbox`, await signed("Create", `${uri}/activity`, note("late", "deleted before it came")))).status).toBe(202);
    expect(await contentOf(uri)).toBeNull();

    // dave says erin's next post is deleted: erin's server alone speaks for it.
    const erin = other.actor("erin", "erin", { followers: `${other.base}/actors/erin/followers` });
    const erins = `${erin}/statuses/1`;
    const before = await counts();
    expect((await relay.post(`${a.base}/inbox`, await signed("Delete", `${dave}/statuses/x#delete`, { id: erins, type: "Tombstone" }))).status).toBe(202);
    expect(await counts()).toEqual(before);
    const object = { id: erins, type: "Note", attributedTo: erin, to: [PUBLIC], cc: [`${erin}/followers`], content: "<p>erin's</p>", published: "2026-01-01T00:00:00Z" };
    expect((await relay.post(`${a.base}/inbox`, await signed("Create", `${erins}/activity`, object, erin, other))).status).toBe(202);
    expect(await contentOf(erins)).toBe("<p>erin's</p>");
  });
});

describe("answers to the Follow of a relay", () => {
  test("an Accept or a Reject of it from another server than the relay's changes nothing; the relay's own Accept is taken", async () => {
    const second = await startRelay("127.0.0.154", "mastodon");
    try {
      second.answer = "none";
      await a.ctx.services.relays.add(second.inbox);
      const follow = await eventually(() => second.of("Follow")[0], "the Follow at the relay", 20_000);
      const state = async () => (await a.database.port.get<{ state: string; actor_uri: string | null }>("SELECT state, actor_uri FROM relays WHERE url = ?", [second.inbox]))!.state;
      const mallory = raw.actor("mallory", "mallory");
      for (const type of ["Accept", "Reject"]) {
        const res = await raw.post(`${a.base}/inbox`, mallory, { id: `${mallory}#${type}`, type, object: follow.id });
        expect(res.status).toBe(202);
        expect(await state()).toBe("pending");
      }
      // Nor does the Follow embedded whole, as some relays quote it.
      expect((await raw.post(`${a.base}/inbox`, mallory, { id: `${mallory}#accept-embedded`, type: "Accept", object: follow })).status).toBe(202);
      expect(await state()).toBe("pending");
      const forwarded = await signed("Create", `${dave}/statuses/through-second/activity`, note("through-second", "not yet"));
      expect((await second.post(`${a.base}/inbox`, forwarded)).status).toBe(202);
      expect(await contentOf(`${dave}/statuses/through-second`)).toBeNull();

      expect((await second.post(`${a.base}/inbox`, { "@context": "https://www.w3.org/ns/activitystreams", id: `${second.actor}#accept`, type: "Accept", actor: second.actor, object: follow.id })).status).toBe(202);
      expect(await state()).toBe("accepted");
    } finally {
      second.stop();
    }
  });
});

describe("attachments of a relayed post", () => {
  test("hostile blurhashes and focal points under a valid Linked Data signature are refused or clamped as from anyone; the good ones are kept", async () => {
    const HASH = "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH";
    const context = [...MASTODON_CONTEXT, { toot: "http://joinmastodon.org/ns#", blurhash: "toot:blurhash", focalPoint: { "@container": "@list", "@id": "toot:focalPoint" } }];
    const doc = (name: string, extra: Record<string, unknown>) => ({ type: "Document", mediaType: "image/png", url: `https://files.example/${name}.png`, ...extra });
    const uri = `${dave}/statuses/pictures`;
    const object = {
      ...note("pictures", "pictures"),
      attachment: [
        doc("number", { blurhash: 5, focalPoint: ["0.5", "0.5"] }),
        doc("components", { blurhash: `~${"0".repeat(43)}`, focalPoint: [3, -7] }),
        doc("markup", { blurhash: "<script>alert(1)</script>", focalPoint: [0.1] }),
        doc("huge", { blurhash: "U".repeat(10_000), focalPoint: Array.from({ length: 100 }, (_, i) => i / 100) }),
        doc("good", { blurhash: HASH, focalPoint: [0.25, -0.5] }),
      ],
    };
    const activity = { "@context": context, id: `${uri}/activity`, type: "Create", actor: dave, to: [PUBLIC], cc: [`${dave}/followers`], object };
    const create = (await signJsonLd(activity, raw.privateKey, new URL(`${dave}#main-key`), {})) as Record<string, unknown>;
    expect((await relay.post(`${a.base}/inbox`, create)).status).toBe(202);
    const shown = (await alice.client.get("/api/v1/timelines/public")).body.find((s: any) => s.uri === uri);
    expect(shown.media_attachments.map((m: any) => [new URL(m.url).pathname, m.blurhash, m.meta.focus ?? null])).toEqual([
      ["/number.png", null, null],
      ["/components.png", null, { x: 1, y: -1 }],
      ["/markup.png", null, null],
      ["/huge.png", null, null],
      ["/good.png", HASH, { x: 0.25, y: -0.5 }],
    ]);
  });
});
