import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signJsonLd } from "@fedify/fedify";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startRelay, type Relay } from "../support/relay.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// An activity signed with a Linked Data signature is believed whoever delivers it (Fedify
// checks the embedded signature, not the request's): a relay, or anyone who kept a copy, can
// send an author's old activities again, and a relay may deliver them out of order. What was
// said later by the author stands: an older Update does not undo a newer one (Mastodon's
// already_updated_more_recently?).

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

let a: TestServer;
let relay: Relay;
let raw: Awaited<ReturnType<typeof startRawServer>>;
let alice: TestUser;
let dave: string;

const contentOf = (uri: string) => (a.database.sqlite.query("SELECT content_html FROM statuses WHERE uri = ?").get(uri) as { content_html: string } | null)?.content_html ?? null;
const editsOf = (uri: string) =>
  (a.database.sqlite.query("SELECT count(*) AS n FROM status_edits WHERE status_id = (SELECT id FROM statuses WHERE uri = ?)").get(uri) as { n: number }).n;

/** dave's Note `name` as he would write it at `at`, `content` its text. */
function note(name: string, content: string, extra: Record<string, unknown> = {}) {
  return { id: `${dave}/statuses/${name}`, type: "Note", attributedTo: dave, to: [PUBLIC], cc: [`${dave}/followers`], content: `<p>${content}</p>`, published: "2026-01-01T00:00:00Z", ...extra };
}

/** An activity of dave's, LD-signed by his key as Mastodon signs what it sends relays. */
async function signed(type: string, id: string, object: Record<string, unknown>) {
  const activity = { "@context": MASTODON_CONTEXT, id, type, actor: dave, to: [PUBLIC], cc: [`${dave}/followers`], object };
  return (await signJsonLd(activity, raw.privateKey, new URL(`${dave}#main-key`), {})) as Record<string, unknown>;
}

beforeAll(async () => {
  [a, relay, raw] = await Promise.all([startTestServer({ HOST: "127.0.0.150", ALLOW_PRIVATE_ADDRESSES: "true" }), startRelay("127.0.0.151", "mastodon"), startRawServer("127.0.0.152")]);
  alice = await createUser(a, "alice");
  dave = raw.actor("dave", "dave", { followers: `${raw.base}/actors/dave/followers` });
  await a.ctx.services.relays.add(relay.inbox);
  await eventually(() => (a.database.sqlite.query("SELECT state FROM relays").get() as { state: string } | null)?.state === "accepted", "the relay's Accept", 20_000);
});
afterAll(async () => {
  await a?.close();
  relay?.stop();
  raw?.stop();
});

describe("old activities sent again", () => {
  test("an older Update of a relayed post, sent again after a newer one, changes nothing; the newer one stands", async () => {
    const uri = `${dave}/statuses/edited`;
    expect((await relay.post(`${a.base}/inbox`, await signed("Create", `${uri}/activity`, note("edited", "first")))).status).toBe(202);
    expect(contentOf(uri)).toBe("<p>first</p>");
    const older = await signed("Update", `${uri}#updates/1`, note("edited", "second", { updated: "2026-01-02T00:00:00Z" }));
    const newer = await signed("Update", `${uri}#updates/2`, note("edited", "third", { updated: "2026-01-03T00:00:00Z" }));
    expect((await relay.post(`${a.base}/inbox`, newer)).status).toBe(202);
    expect(contentOf(uri)).toBe("<p>third</p>");
    const edits = editsOf(uri);

    // The older one, late through the relay, and again by a stranger who kept it.
    expect((await relay.post(`${a.base}/inbox`, older)).status).toBe(202);
    const mallory = raw.actor("mallory", "mallory");
    expect((await raw.post(`${a.base}/inbox`, mallory, older)).status).toBe(202);
    expect(contentOf(uri)).toBe("<p>third</p>");
    expect(editsOf(uri)).toBe(edits);
    const shown = await alice.client.get("/api/v1/timelines/public");
    expect(shown.body.find((s: any) => s.uri === uri)?.content).toBe("<p>third</p>");
  });
});
