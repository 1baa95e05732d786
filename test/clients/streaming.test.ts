import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient, createStreamingAPIClient, type mastodon } from "masto";
import generator, { type Entity, type WebSocketInterface } from "megalodon";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { drain, eventually } from "../support/wait.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
});
afterAll(() => server.close());

/** The next event of a masto.js subscription matching `match`. */
async function next(subscription: mastodon.streaming.Subscription, match: (e: mastodon.streaming.Event) => boolean) {
  for await (const event of subscription) if (match(event)) return event;
  throw new Error("subscription ended");
}

async function waitForSubscriptions(count: number) {
  const subscriptions = () => [...server.streaming.hub.connections()].reduce((n, c) => n + c.subscriptions.size, 0);
  await eventually(() => subscriptions() >= count, `${count} subscriptions`);
  expect(subscriptions()).toBe(count);
}

/** The first `count` events of a subscription. */
async function collect(subscription: mastodon.streaming.Subscription, count: number) {
  const out: mastodon.streaming.Event[] = [];
  for await (const event of subscription) {
    out.push(event);
    if (out.length === count) break;
  }
  return out;
}

describe("masto.js streaming", () => {
  test("receives updates, notifications and deletes through the URL the instance advertises", async () => {
    const rest = createRestAPIClient({ url: server.base, accessToken: bob.token });
    const instance = await rest.v2.instance.fetch();
    const streaming = createStreamingAPIClient({ streamingApiUrl: instance.configuration.urls.streaming, accessToken: bob.token });
    try {
      const user = streaming.user.subscribe();
      const tag = streaming.hashtag.subscribe({ tag: "MastoTest" });
      const local = streaming.public.local.subscribe();

      // masto.js iterators see only what arrives while they wait: start waiting first.
      const userEvents = collect(user, 3);
      const tagged = next(tag, (e) => e.event === "update");
      const fromLocal = next(local, (e) => e.event === "update");
      // masto.js connects after a one-second back-off and subscribes as iteration starts.
      await waitForSubscriptions(3);
      const posted = await postStatus(alice, { status: "#mastotest hello @bob" });
      const tagEvent = await tagged;
      expect(tagEvent.event === "update" && tagEvent.payload.content).toContain("hello");
      const localEvent = await fromLocal;
      expect(localEvent.event === "update" && localEvent.payload.account.id).toBe(alice.id);
      // Everything the post announced has gone out before the delete.
      await drain(server);
      await alice.client.delete(`/api/v1/statuses/${posted.id}`);
      const events = await userEvents;
      const update = events.find((e) => e.event === "update");
      expect(update?.event === "update" && update.payload.id).toBe(posted.id);
      const note = events.find((e) => e.event === "notification");
      expect(note?.event === "notification" && note.payload.type).toBe("mention");
      const deleted = events.find((e) => e.event === "delete");
      expect(deleted?.payload).toBe(posted.id);
      for (const s of [user, tag, local]) s.unsubscribe();
    } finally {
      streaming.close();
    }
  });
});

describe("megalodon streaming", () => {
  test("user and local streams deliver updates with the token in the query", async () => {
    const client = generator("mastodon", server.base, bob.token);
    // Each socket's listeners are attached as soon as it exists: the first starts connecting
    // while the second is made (megalodon reads /api/v1/instance first), and its "connect"
    // could otherwise fire before anyone listens.
    const sockets: WebSocketInterface[] = [];
    const received: Promise<Entity.Status>[] = [];
    const connected: Promise<unknown>[] = [];
    const listen = (socket: WebSocketInterface) => {
      sockets.push(socket);
      connected.push(new Promise((resolve) => socket.on("connect", resolve)));
      received.push(
        new Promise<Entity.Status>((resolve, reject) => {
          socket.on("update", (status: Entity.Status) => resolve(status));
          socket.on("error", (e: Error) => reject(e));
        }),
      );
    };
    try {
      listen(await client.userStreaming());
      listen(await client.localStreaming());
      await Promise.all(connected);
      const posted = await postStatus(alice, { status: "megalodon hears this" });
      for (const status of await Promise.all(received)) expect(status.id).toBe(posted.id);
    } finally {
      for (const socket of sockets) socket.stop();
    }
  });
});
