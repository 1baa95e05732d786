import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept, Create } from "@fedify/fedify/vocab";
import { OUTBOUND_EVENTS } from "../../src/federation/lazy.ts";
import { subscribe, type Outbound } from "../../src/federation/outbound/index.ts";
import { Sender } from "../../src/federation/outbound/sender.ts";
import type { EventBus } from "../../src/infra/events.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import { eventually, getAp } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { freePort } from "../support/serve-process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Fedify is loaded at the first thing that needs it (src/federation/lazy.ts), not at start-up:
// what comes first must still be answered and sent as if it had always been there.

let a: TestServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // A fixed port: after the restart the server must be the same origin (its key ids are URLs).
  const port = freePort("127.0.0.2");
  a = await startTestServer({ HOST: "127.0.0.2", PORT: String(port), PUBLIC_URL: `http://127.0.0.2:${port}`, ALLOW_PRIVATE_ADDRESSES: "true" });
  receiver = await startReceiver("127.0.0.6");
});
afterAll(async () => {
  await a?.close();
  receiver?.stop();
});

describe("Fedify loaded at first use", () => {
  test("start-up, the client API and WebFinger do not load it, nor a post with nobody elsewhere to send it to; the first actor request does, and is answered", async () => {
    const alice = await createUser(a, "alice");
    expect((await alice.client.get("/api/v1/instance")).status).toBe(200);
    expect((await alice.client.get("/api/v1/timelines/public")).status).toBe(200);
    // The server knows no account of another server and no relay: the Create would go nowhere.
    await postStatus(alice, { status: "an island's post", visibility: "public" });
    // WebFinger is src/http/instance.ts's, without Fedify.
    const wf = await getAp(`${a.base}/.well-known/webfinger?resource=acct:alice@${new URL(a.base).host}`);
    expect(wf.status).toBe(200);
    expect(wf.body.links.find((l: { rel: string }) => l.rel === "self")).toEqual({ rel: "self", type: "application/activity+json", href: `${a.base}/users/alice` });
    expect(a.federation!.loaded()).toBe(false);

    const actor = await getAp(`${a.base}/users/alice`);
    expect(actor.status).toBe(200);
    expect(actor.body).toMatchObject({ id: `${a.base}/users/alice`, type: "Person", preferredUsername: "alice", inbox: `${a.base}/users/alice/inbox` });
    expect(actor.body.publicKey.publicKeyPem).toStartWith("-----BEGIN PUBLIC KEY-----");
    expect(a.federation!.loaded()).toBe(true);
  });

  test("after a restart, the first post (which loads it) reaches a remote follower, once", async () => {
    const alice = await createUser(a, "alice2");
    await receiver.follow(`${a.base}/users/alice2`, `${a.base}/users/alice2/inbox`);
    await eventually(() => receiver.received.some((x) => x instanceof Accept), "follow accepted");

    a = await a.restart();
    expect(a.federation!.loaded()).toBe(false);
    // The same origin and database: alice's token still signs her in.
    const post = await postStatus(alice, { status: "the first post after a restart", visibility: "public" });
    const create = await eventually(() => receiver.received.find((x): x is Create => x instanceof Create), "delivered");
    expect(create.objectId?.href).toBe(post.uri);
    expect(a.federation!.loaded()).toBe(true);
    await a.federation!.idle();
    expect(await a.federation!.queue.pending()).toBe(0);
    expect(receiver.received.filter((x) => x instanceof Create)).toHaveLength(1);
  });
});

test("every event outbound/ listens to is forwarded before Fedify is loaded (OUTBOUND_EVENTS)", () => {
  const heard: string[] = [];
  const recorder = { afterCommit: (type: string) => void heard.push(type) } as unknown as Pick<EventBus, "afterCommit">;
  // Registering reads no more than the sender of what it is given; the listeners would.
  subscribe(recorder, { sender: new Sender() } as Outbound);
  expect(heard.length).toBeGreaterThan(20);
  expect([...new Set(heard)].sort()).toEqual([...OUTBOUND_EVENTS].sort());
});
