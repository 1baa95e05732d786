import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signJsonLd } from "@fedify/fedify";
import { cliBeside } from "../support/cli.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { MASTODON_CONTEXT, startRawServer } from "../support/raw-server.ts";
import { startRelay, type Relay } from "../support/relay.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { GUESSED_NOTE } from "../../src/cli/relays.ts";

// A Mastodon relay on loopback: A subscribes with the command line, B through its services;
// the relay forwards what one sends to the other, as it came (its Linked Data signature and
// proof intact), signing the request with its own key. What it brings fills A's federated
// timeline and followed hashtags, never a home timeline for being relayed; a forwarded
// activity whose embedded signature does not verify, and anything through a relay that is not
// accepted, is dropped with nothing stored.

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

let a: TestServer;
let b: TestServer;
let relay: Relay;
let raw: Awaited<ReturnType<typeof startRawServer>>;
let alice: TestUser;
let bob: TestUser;
let dave: string;

const statusByUri = async (server: TestServer, uri: string) => (await server.database.port.get<{ id: number; visibility: string }>("SELECT id, visibility FROM statuses WHERE uri = ?", [uri])) ?? null;
const relayRow = async (server: TestServer, url: string) =>
  (await server.database.port.get<{
    state: string;
    actor_uri: string | null;
    received_count: number;
    last_activity_at: number | null;
  }>("SELECT state, actor_uri, received_count, last_activity_at FROM relays WHERE url = ?", [url])) ?? null;
const counts = (server: TestServer) => server.database.port.get("SELECT (SELECT count(*) FROM statuses) AS statuses, (SELECT count(*) FROM accounts) AS accounts");
const publicTimeline = async (user: TestUser) => (await user.client.get("/api/v1/timelines/public", { query: { limit: "40" } })).body as { uri: string; content: string }[];
const homeTimeline = async (user: TestUser) => (await user.client.get("/api/v1/timelines/home", { query: { limit: "40" } })).body as { uri: string; content: string }[];

/** A public Create by dave (of the raw server), signed by his key as Mastodon signs it (Linked Data Signature). */
async function daveCreate(name: string, extra: Record<string, unknown> = {}) {
  const id = `${dave}/statuses/${name}`;
  const create = {
    "@context": MASTODON_CONTEXT,
    id: `${id}/activity`,
    type: "Create",
    actor: dave,
    to: [PUBLIC],
    cc: [`${dave}/followers`],
    object: { id, type: "Note", attributedTo: dave, to: [PUBLIC], cc: [`${dave}/followers`], content: `<p>dave ${name}</p>`, published: new Date().toISOString(), ...extra },
  };
  return { uri: id, signed: (await signJsonLd(create, raw.privateKey, new URL(`${dave}#main-key`), {})) as Record<string, unknown> };
}

beforeAll(async () => {
  const env = { ALLOW_PRIVATE_ADDRESSES: "true" };
  [a, b, relay, raw] = await Promise.all([startTestServer({ HOST: "127.0.0.71", ...env }), startTestServer({ HOST: "127.0.0.72", ...env }), startRelay("127.0.0.73", "mastodon"), startRawServer("127.0.0.74")]);
  [alice, bob] = await Promise.all([createUser(a, "alice"), createUser(b, "bob")]);
  dave = raw.actor("dave", "dave", { followers: `${raw.base}/actors/dave/followers` });
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  relay?.stop();
  raw?.stop();
});

describe("subscribing to a Mastodon relay", () => {
  test("relays add sends the instance actor's Follow of the Public collection to the relay's inbox; its Accept makes it accepted, as list and federation status show", async () => {
    const cli = cliBeside(a);
    const add = await cli(["relays", "add", relay.inbox]);
    expect(add.stderr).toBe("");
    // Found out: no relay actor answers at an inbox's URL, and the CLI says the kind was taken so.
    expect([add.code, add.stdout]).toEqual([0, `Subscribing to a Mastodon relay (inbox ${relay.inbox}): Follow sent, pending until it answers\n${GUESSED_NOTE}\n`]);
    expect((await relayRow(a, relay.inbox))?.state).toBe("pending");

    const follow = await eventually(() => relay.of("Follow")[0], "the relay gets A's Follow", 20_000);
    expect(follow).toMatchObject({ type: "Follow", actor: `${a.base}/users/127.0.0.71`, object: PUBLIC });
    await eventually(async () => (await relayRow(a, relay.inbox))?.state === "accepted", "A takes the relay's Accept");
    expect((await relayRow(a, relay.inbox))?.actor_uri).toBe(relay.actor);

    const list = await cli(["relays", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^Relays:\nurl\tkind\tstate\tsince\tstatuses brought\tlast activity\tdeliveries\n${relay.inbox.replace(/\./g, "\\.")}\tmastodon\taccepted\t\\S+\t0\t-\tok\n$`));
    const status = await cli(["federation", "status"]);
    expect(status.stdout).toContain(`${relay.inbox}\tmastodon\taccepted\t`);
    // Adding it again changes nothing.
    expect((await cli(["relays", "add", relay.inbox])).stdout).toBe(`Already subscribed to ${relay.inbox} (accepted)\n`);
    expect(relay.of("Follow")).toHaveLength(1);
  });

  test("bad input: the command fails with a message and nothing changes", async () => {
    const cli = cliBeside(a);
    const before = await a.database.port.all("SELECT * FROM relays");
    const failures: [string[], string][] = [
      [["relays", "add"], "rookery: relays add needs the relay's URL: relays add <url> [--kind mastodon|litepub], relays remove <url>, or relays list\n"],
      [["relays", "add", "javascript:alert(1)"], "rookery: javascript:alert(1) is not an http(s) URL\n"],
      [["relays", "add", `${a.base}/inbox`], `rookery: ${a.base}/inbox is this server\n`],
      [["relays", "add", relay.inbox, "--kind", "smtp"], "rookery: --kind is mastodon (the URL is the relay's inbox) or litepub (the URL is its actor)\n"],
      [["relays", "add", `${raw.base}/no-actor`, "--kind", "litepub"], `rookery: no relay actor could be fetched at ${raw.base}/no-actor\n`],
      [["relays", "remove", `${raw.base}/inbox`], `rookery: ${raw.base}/inbox is not a relay of this server\n`],
      [["relays", "frobnicate"], 'rookery: unknown relays command "frobnicate"; use relays add <url> [--kind mastodon|litepub], relays remove <url>, or relays list\n'],
    ];
    for (const [args, stderr] of failures) expect(await cli(args)).toMatchObject({ code: 1, stderr });
    expect(await a.database.port.all("SELECT * FROM relays")).toEqual(before);
  });
});

describe("what a Mastodon relay brings", () => {
  beforeAll(async () => {
    await b.ctx.services.relays.add(relay.inbox);
    await eventually(async () => (await relayRow(b, relay.inbox))?.state === "accepted", "B's subscription accepted", 20_000);
  });

  test("B's public post goes to the relay signed (LD signature and proof), the relay forwards it, and it fills A's federated timeline, not alice's home", async () => {
    const posted = await postStatus(bob, { status: "hello from B through the relay", visibility: "public" });
    const create = await eventually(() => relay.of("Create").find((c) => c.object?.content?.includes("hello from B")), "the relay gets bob's Create", 20_000);
    expect(create.signature?.type).toBe("RsaSignature2017");
    expect(create.proof?.type).toBe("DataIntegrityProof");
    const uri = create.object.id as string;
    expect(uri).toBe(`${b.base}/users/bob/statuses/${posted.id}`);

    await eventually(async () => (await publicTimeline(alice)).some((s) => s.uri === uri), "bob's post in A's federated timeline", 20_000);
    expect((await statusByUri(a, uri))?.visibility).toBe("public");
    expect((await homeTimeline(alice)).some((s) => s.uri === uri)).toBe(false);
    const row = (await relayRow(a, relay.inbox))!;
    expect(row.received_count).toBe(1);
    expect(row.last_activity_at).not.toBeNull();
  });

  test("B's edit and deletion of a public post go through the relay too: A's copy changes, then goes", async () => {
    const posted = await postStatus(bob, { status: "to be edited", visibility: "public" });
    const uri = `${b.base}/users/bob/statuses/${posted.id}`;
    await eventually(() => statusByUri(a, uri), "the post on A", 20_000);
    expect((await bob.client.put(`/api/v1/statuses/${posted.id}`, { json: { status: "edited through the relay" } })).status).toBe(200);
    const contentOnA = async () => (await a.database.port.get<{ content_html: string }>("SELECT content_html FROM statuses WHERE uri = ?", [uri]))?.content_html ?? "";
    await eventually(async () => (await contentOnA()).includes("edited through the relay"), "the edit on A", 20_000);
    expect(relay.of("Update").some((u) => u.object?.id === uri)).toBe(true);
    expect((await bob.client.delete(`/api/v1/statuses/${posted.id}`)).status).toBe(200);
    await eventually(async () => (await statusByUri(a, uri)) === null, "the deletion on A", 20_000);
  });

  test("unlisted, private and direct posts do not go to relays", async () => {
    for (const visibility of ["unlisted", "private", "direct"]) await postStatus(bob, { status: `not for relays ${visibility}`, visibility });
    await b.federation!.idle();
    expect(relay.of("Create").filter((c) => String(c.object?.content).includes("not for relays"))).toEqual([]);
  });

  test("a public boost goes to the relay (Announce, and its Undo when taken back); an unlisted one does not", async () => {
    const posted = await postStatus(bob, { status: "boost me", visibility: "public" });
    const boosted = await bob.client.post(`/api/v1/statuses/${posted.id}/reblog`);
    expect(boosted.status).toBe(200);
    const activityId = `${b.base}/users/bob/statuses/${boosted.body.id}/activity`;
    const announce = await eventually(() => relay.of("Announce").find((x) => x.id === activityId), "the relay gets bob's Announce", 20_000);
    expect(announce).toMatchObject({ actor: `${b.base}/users/bob`, object: posted.uri, to: PUBLIC });
    expect((await bob.client.post(`/api/v1/statuses/${posted.id}/unreblog`)).status).toBe(200);
    const undo = await eventually(() => relay.of("Undo").find((x) => x.object?.id === activityId), "the relay gets the Undo of the Announce", 20_000);
    expect(undo.actor).toBe(`${b.base}/users/bob`);

    const quiet = await postStatus(bob, { status: "boost me quietly", visibility: "public" });
    const unlisted = await bob.client.post(`/api/v1/statuses/${quiet.id}/reblog`, { json: { visibility: "unlisted" } });
    expect(unlisted.body.visibility).toBe("unlisted");
    await b.federation!.idle();
    expect(relay.of("Announce").filter((x) => x.object === quiet.uri)).toEqual([]);
  });

  test("a relayed post with a hashtag alice follows reaches her home timeline, as any public post with it does", async () => {
    expect((await alice.client.post("/api/v1/tags/relaytag/follow")).status).toBe(200);
    await postStatus(bob, { status: "tagged #relaytag", visibility: "public" });
    await postStatus(bob, { status: "untagged, after the tagged one", visibility: "public" });
    const found = await eventually(async () => {
      const both = (await publicTimeline(alice)).filter((s) => s.content.includes("tagged"));
      return both.length === 2 ? both : null;
    }, "both posts on A", 20_000);
    const tagged = found.find((s) => s.content.includes("relaytag"))!.uri;
    const untagged = found.find((s) => !s.content.includes("relaytag"))!.uri;
    const home = (await homeTimeline(alice)).map((s) => s.uri);
    expect(home).toContain(tagged);
    expect(home).not.toContain(untagged);
  });

  test("a forwarded Create whose embedded signature does not verify (content changed on the way) is refused: 401, nothing stored", async () => {
    const original = relay.of("Create").find((c) => c.object?.content?.includes("hello from B"))!;
    const before = await counts(a);
    const objectId = `${original.object.id}-forged`;
    const tampered = { ...original, id: `${objectId}/activity`, object: { ...original.object, id: objectId, content: "<p>changed by the relay</p>" } };
    expect(await relay.post(`${a.base}/inbox`, tampered)).toMatchObject({ status: 401 });
    // Without any embedded signature or proof, the relay's own HTTP signature is no author's.
    const unsigned: Record<string, unknown> = { ...tampered, id: `${objectId}2/activity`, object: { ...tampered.object, id: `${objectId}2` } };
    delete unsigned.signature;
    delete unsigned.proof;
    expect(await relay.post(`${a.base}/inbox`, unsigned)).toMatchObject({ status: 401 });
    expect(await counts(a)).toEqual(before);
    expect(await statusByUri(a, objectId)).toBeNull();
  });

  test("a Mastodon-shaped Create of another server (LD-signed by its author) forwarded by the relay is stored; through a relay not accepted, it is not", async () => {
    const { uri, signed } = await daveCreate("1");
    expect((await relay.post(`${a.base}/inbox`, signed)).status).toBe(202);
    expect((await statusByUri(a, uri))?.visibility).toBe("public");

    // An actor elsewhere that names the relay's inbox as its own is no relay.
    const impostor = raw.actor("impostor", "impostor", { inbox: relay.inbox, endpoints: { sharedInbox: relay.inbox } });
    const third = await daveCreate("impostor");
    expect((await raw.post(`${a.base}/inbox`, impostor, third.signed)).status).toBe(202);
    expect(await statusByUri(a, third.uri)).toBeNull();

    // Another relay, which refused A's Follow: what it forwards concerns nobody here.
    const refusing = await startRelay("127.0.0.75", "mastodon");
    try {
      refusing.answer = "reject";
      await a.ctx.services.relays.add(refusing.inbox);
      await eventually(async () => (await relayRow(a, refusing.inbox))?.state === "refused", "the refusal taken", 20_000);
      const second = await daveCreate("2");
      const before = await counts(a);
      expect((await refusing.post(`${a.base}/inbox`, second.signed)).status).toBe(202);
      expect(await statusByUri(a, second.uri)).toBeNull();
      expect(await counts(a)).toEqual(before);
      expect((await a.ctx.services.relays.remove(refusing.inbox))?.state).toBe("refused");
    } finally {
      refusing.stop();
    }
  });

  test("a public post that is not public (addressed to followers) is not kept for being relayed", async () => {
    const { uri, signed } = await daveCreate("followers-only", { to: [`${dave}/followers`], cc: [] });
    const before = await counts(a);
    expect((await relay.post(`${a.base}/inbox`, { ...signed })).status).toBe(202);
    expect(await statusByUri(a, uri)).toBeNull();
    expect(await counts(a)).toEqual(before);
  });
});
