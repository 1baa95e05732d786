import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept, Create } from "@fedify/fedify/vocab";
import { createUser, postStatus } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { freePort } from "../support/serve-process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

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

describe("the delivery queue survives a restart", () => {
  test("a Create queued when the server stopped is delivered once it is back, exactly once", async () => {
    const alice = await createUser(a, "alice");
    await receiver.follow(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`);
    await eventually(() => receiver.received.some((x) => x instanceof Accept), "follow accepted");

    // The queue stops first, as a crash would stop it: the delivery stays in the database.
    await a.federation!.stop();
    const post = await postStatus(alice, { status: "sent after the restart", visibility: "public" });
    await eventually(async () => (await a.federation!.queue.pending()) > 0, "the delivery is queued");
    expect(receiver.received.filter((x) => x instanceof Create)).toHaveLength(0);

    a = await a.restart();
    const create = await eventually(() => receiver.received.find((x): x is Create => x instanceof Create), "delivered after restart");
    expect(create.objectId?.href).toBe(post.uri);
    await eventually(async () => (await a.federation!.queue.pending()) === 0, "queue empty");
    expect(receiver.received.filter((x) => x instanceof Create)).toHaveLength(1);
  });
});
