import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cliBeside } from "../support/cli.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startRelay, type Relay } from "../support/relay.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A LitePub relay on loopback (as activityrelay and Pleroma's relays serve LitePub servers):
// the instance actor follows the relay's actor, the relay follows it back, and what one
// subscriber sends the relay Announces to the others, who fetch the object from its origin.
// The relay is no account here and boosts nothing; what it announces fills the federated
// timeline when it is public and its origin is one this server federates with.

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

let a: TestServer;
let b: TestServer;
let relay: Relay;
let raw: Awaited<ReturnType<typeof startRawServer>>;
let alice: TestUser;
let bob: TestUser;

const statusByUri = async (server: TestServer, uri: string) => (await server.database.port.get<{ id: number; visibility: string }>("SELECT id, visibility, reblog_of_id FROM statuses WHERE uri = ?", [uri])) ?? null;
const relayRow = async (server: TestServer, url: string) =>
  (await server.database.port.get<{
    kind: string;
    inbox_url: string;
    state: string;
    actor_uri: string | null;
    received_count: number;
  }>("SELECT kind, inbox_url, state, actor_uri, received_count FROM relays WHERE url = ?", [url])) ?? null;
const counts = (server: TestServer) =>
  server.database.port.get("SELECT (SELECT count(*) FROM statuses) AS statuses, (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM statuses WHERE reblog_of_id IS NOT NULL) AS boosts");
const publicTimeline = async (user: TestUser) => (await user.client.get("/api/v1/timelines/public", { query: { limit: "40" } })).body as { uri: string; content: string }[];

beforeAll(async () => {
  const env = { ALLOW_PRIVATE_ADDRESSES: "true" };
  [a, b, relay, raw] = await Promise.all([startTestServer({ HOST: "127.0.0.81", ...env }), startTestServer({ HOST: "127.0.0.82", ...env }), startRelay("127.0.0.83", "litepub"), startRawServer("127.0.0.84")]);
  [alice, bob] = await Promise.all([createUser(a, "alice"), createUser(b, "bob")]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  relay?.stop();
  raw?.stop();
});

describe("a LitePub relay", () => {
  test("relays add with the relay's actor finds it is a LitePub relay, follows that actor, and takes its Accept; its follow back is accepted; it is no account here", async () => {
    const cli = cliBeside(a);
    const add = await cli(["relays", "add", relay.actor]);
    expect(add.stderr).toBe("");
    expect([add.code, add.stdout]).toEqual([0, `Subscribing to a LitePub relay (actor ${relay.actor}, inbox ${relay.inbox}): Follow sent, pending until it answers\n`]);
    expect(await relayRow(a, relay.actor)).toMatchObject({ kind: "litepub", inbox_url: relay.inbox, actor_uri: relay.actor, state: "pending" });

    const follow = await eventually(() => relay.of("Follow")[0], "the relay gets the instance actor's Follow", 20_000);
    expect(follow).toMatchObject({ actor: `${a.base}/users/127.0.0.81`, object: relay.actor });
    await eventually(async () => (await relayRow(a, relay.actor))?.state === "accepted", "the relay's Accept taken");
    // The relay's own Follow of the instance actor is accepted, quoting it.
    const accept = await eventually(() => relay.of("Accept")[0], "A accepts the relay's follow back");
    expect(accept).toMatchObject({ actor: `${a.base}/users/127.0.0.81`, object: { type: "Follow", actor: relay.actor, object: `${a.base}/users/127.0.0.81` } });
    expect(await a.database.port.get("SELECT id FROM accounts WHERE uri = ?", [relay.actor])).toBeUndefined();
    expect((await cli(["relays", "list"])).stdout).toContain(`${relay.actor}\tlitepub\taccepted\t`);
  });

  test("B's public post goes to the relay, which announces it; A fetches it from B and shows it in the federated timeline, boosted by nobody", async () => {
    await b.ctx.services.relays.add(relay.actor);
    await eventually(async () => (await relayRow(b, relay.actor))?.state === "accepted", "B subscribed", 20_000);
    const before = (await counts(a)) as { boosts: number };
    const posted = await postStatus(bob, { status: "announced by the relay", visibility: "public" });
    const uri = `${b.base}/users/bob/statuses/${posted.id}`;
    await eventually(() => relay.of("Create").some((c) => c.object?.id === uri), "the relay gets bob's Create", 20_000);
    await eventually(async () => (await publicTimeline(alice)).some((s) => s.uri === uri), "bob's post on A", 20_000);
    expect((await statusByUri(a, uri))?.visibility).toBe("public");
    expect(((await counts(a)) as { boosts: number }).boosts).toBe(before.boosts);
    expect(await a.database.port.get("SELECT id FROM accounts WHERE uri = ?", [relay.actor])).toBeUndefined();
    expect((await relayRow(a, relay.actor))?.received_count).toBe(1);
  });

  test("an announced object that is not public, or on a domain A blocks, is not kept; a second Announce of a known one changes nothing", async () => {
    const note = (path: string, to: string[]) =>
      raw.serve(path, { "@context": MASTODON_CONTEXT, id: `${raw.base}${path}`, type: "Note", attributedTo: `${raw.base}/actors/erin`, to, content: "<p>erin</p>" });
    raw.actor("erin", "erin", { followers: `${raw.base}/actors/erin/followers` });
    const followersOnly = note("/notes/followers", [`${raw.base}/actors/erin/followers`]);
    const before = await counts(a);
    expect(await relay.announce(followersOnly)).toEqual(expect.arrayContaining([202]));
    expect(await statusByUri(a, followersOnly)).toBeNull();
    // Objects named by other than http(s) URLs: never fetched, nothing kept (a data: URL would carry a Note of its own making).
    const known = await counts(a);
    const forged = { "@context": MASTODON_CONTEXT, id: `${raw.base}/notes/forged`, type: "Note", attributedTo: `${raw.base}/actors/erin`, to: [PUBLIC], content: "<p>forged</p>" };
    for (const object of ["file:///etc/passwd", `data:application/activity+json,${encodeURIComponent(JSON.stringify(forged))}`, "ftp://127.0.0.84/note"]) {
      for (const status of await relay.announce(object)) expect([202, 400]).toContain(status);
      expect(await statusByUri(a, object)).toBeNull();
    }
    expect(await statusByUri(a, forged.id)).toBeNull();
    expect(await counts(a)).toEqual(known);

    const blocked = note("/notes/public", [PUBLIC]);
    await a.ctx.services.federationDomains.block("127.0.0.84");
    try {
      expect(await relay.announce(blocked)).toEqual(expect.arrayContaining([202]));
      expect(await statusByUri(a, blocked)).toBeNull();
      expect(await counts(a)).toEqual(before);
    } finally {
      await a.ctx.services.federationDomains.unblock("127.0.0.84");
    }
    // Once the domain is federated with again, the same public note is taken.
    await relay.announce(blocked);
    expect((await statusByUri(a, blocked))?.visibility).toBe("public");
    const after = await counts(a);
    await relay.announce(blocked);
    expect(await counts(a)).toEqual(after);
  });

  test("relays remove sends Undo of the Follow; what the relay announces afterwards is not taken", async () => {
    const follow = relay.of("Follow").find((f) => f.actor === `${a.base}/users/127.0.0.81`)!;
    const removed = await cliBeside(a)(["relays", "remove", relay.actor]);
    expect([removed.code, removed.stdout]).toEqual([0, `Unsubscribed from ${relay.actor}: Undo of the Follow sent\n`]);
    const undo = await eventually(() => relay.of("Undo").find((u) => u.actor === `${a.base}/users/127.0.0.81`), "the relay gets the Undo", 20_000);
    expect(undo.object).toMatchObject({ id: follow.id, type: "Follow", object: relay.actor });
    expect(await relayRow(a, relay.actor)).toBeNull();
    expect((await cliBeside(a)(["relays", "list"])).stdout).toBe("No relays.\n");

    const late = raw.serve("/notes/late", { "@context": MASTODON_CONTEXT, id: `${raw.base}/notes/late`, type: "Note", attributedTo: `${raw.base}/actors/erin`, to: [PUBLIC], content: "<p>late</p>" });
    await relay.post(`${a.base}/inbox`, { "@context": "https://www.w3.org/ns/activitystreams", id: `${relay.base}/activities/late`, type: "Announce", actor: relay.actor, object: late, to: [PUBLIC] });
    expect(await statusByUri(a, late)).toBeNull();
  });
});
