import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Create, Mention, Note, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A reply from another server whose thread is not stored here: asking for its context
// fetches the ancestors from their server, one by one up the chain, bounded.

let a: TestServer;
let alice: TestUser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
  receiver = await startReceiver("127.0.0.24");
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
});

const statusByUri = async (uri: string) => (await a.database.port.get<{ id: number }>("SELECT id FROM statuses WHERE uri = ?", [uri])) ?? null;

/** carol's notes, each replying to the one before; the last mentions alice and is delivered to her. */
async function thread(prefix: string, length: number, options: { loopTo?: string } = {}) {
  const uris: string[] = [];
  for (let i = 0; i < length; i++) {
    const parent = i === 0 ? (options.loopTo ?? null) : uris[i - 1]!;
    uris.push(receiver.serveNote(`${prefix}-${i}`, (id) => new Note({ id, attribution: new URL(receiver.actor), content: `<p>${prefix} ${i}</p>`, to: PUBLIC_COLLECTION, replyTarget: parent ? new URL(parent) : null })));
  }
  const last = uris[length - 1]!;
  const note = new Note({ id: new URL(last), attribution: new URL(receiver.actor), content: `<p>${prefix} last</p>`, to: PUBLIC_COLLECTION, replyTarget: length > 1 ? new URL(uris[length - 2]!) : null, tags: [new Mention({ href: new URL(`${a.base}/users/alice`) })] });
  await receiver.send({ id: `${a.base}/users/alice`, inbox: `${a.base}/users/alice/inbox` }, new Create({ id: new URL(`${last}/activity`), actor: new URL(receiver.actor), object: note, to: PUBLIC_COLLECTION }));
  const stored = await eventually(() => statusByUri(last), "the reply arrived");
  return { uris, id: String(stored.id) };
}

describe("threads of remote replies", () => {
  test("the context of a reply fetches its missing ancestors, which then show as its thread, counted", async () => {
    const { uris, id } = await thread("chain", 3);
    expect(await statusByUri(uris[0]!)).toBeNull();
    // Anonymous readers set off no fetch.
    const anonymous = await (await fetch(`${a.base}/api/v1/statuses/${id}/context`)).json();
    expect(anonymous.ancestors).toEqual([]);
    expect(await statusByUri(uris[1]!)).toBeNull();

    const context = await alice.client.get(`/api/v1/statuses/${id}/context`);
    expect(context.status).toBe(200);
    expect(context.body.ancestors.map((s: any) => s.uri)).toEqual([uris[0], uris[1]]);
    const shown = (await alice.client.get(`/api/v1/statuses/${id}`)).body;
    expect(shown.in_reply_to_id).toBe(context.body.ancestors[1].id);
    expect((await alice.client.get(`/api/v1/statuses/${context.body.ancestors[1].id}`)).body.replies_count).toBe(1);
    // The root's own context now shows the rest as descendants.
    const fromRoot = (await alice.client.get(`/api/v1/statuses/${context.body.ancestors[0].id}/context`)).body;
    expect(fromRoot.descendants.map((s: any) => s.uri)).toEqual([uris[1], uris[2]]);
  });

  test("a long chain is fetched ten at a time; a thread that loops ends", async () => {
    const long = await thread("long", 14);
    const first = (await alice.client.get(`/api/v1/statuses/${long.id}/context`)).body;
    expect(first.ancestors.map((s: any) => s.uri)).toEqual(long.uris.slice(3, 13));
    const second = (await alice.client.get(`/api/v1/statuses/${long.id}/context`)).body;
    expect(second.ancestors.map((s: any) => s.uri)).toEqual(long.uris.slice(0, 13));

    // loop-0 replies to loop-2, which replies to loop-1, which replies to loop-0.
    const loop = await thread("loop", 3, { loopTo: `${receiver.base}/notes/loop-2` });
    const context = await alice.client.get(`/api/v1/statuses/${loop.id}/context`);
    expect(context.status).toBe(200);
    expect(context.body.ancestors.map((s: any) => s.uri)).toEqual([loop.uris[0], loop.uris[1]]);
  });
});
