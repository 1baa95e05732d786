import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accept } from "@fedify/fedify/vocab";
import { federationStatus } from "../../src/federation/cli-report.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startReceiver } from "../support/fedify-receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { cli } from "../support/serve-process.ts";

// Deliveries that hold: a server that is down gets its copy when it is back (retried on the
// server's clock, 30 s then doubling, at most 6 h apart), one down for days is given up on
// after 16 attempts, and an inbox that answers 410 Gone loses its follow.

let a: TestServer;
let alice: TestUser;

beforeAll(async () => {
  a = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true" });
  alice = await createUser(a, "alice");
});
afterAll(async () => {
  await a?.close();
});

async function follower(host: string) {
  const receiver = await startReceiver(host);
  await receiver.follow(`${a.base}/users/alice`, `${a.base}/users/alice/inbox`);
  await eventually(() => receiver.received.some((x) => x instanceof Accept), "follow accepted");
  return receiver;
}
/** The POSTs of a status's Create (a failed attempt may be two: Fedify knocks again with the other signature spec). */
const posts = (receiver: Awaited<ReturnType<typeof startReceiver>>, uri: string) => receiver.posts.filter((p) => p.type === "Create" && p.id === `${uri}/activity`);
/** Failed delivery attempts to the receiver's domain, as A recorded them (one per attempt). */
const failures = async (receiver: Awaited<ReturnType<typeof startReceiver>>) =>
  ((await a.federation!.kv.get<{ failures: number }>(["rookery", "delivery-failure", new URL(receiver.base).host])) ?? { failures: 0 }).failures;
const pending = () => a.federation!.queue.pending();

describe("delivery that holds", () => {
  test("a server down gets its copy once it is back, at the retry's time; `rookery federation status` shows the wait and the failing domain", async () => {
    const carol = await follower("127.0.0.31");
    try {
      carol.down = true;
      const post = await postStatus(alice, { status: "are you there?", visibility: "public" });
      await eventually(async () => (await failures(carol)) === 1, "the first attempt");
      await a.federation!.idle();
      expect(await pending()).toBe(1);
      const status = await federationStatus(a.database.port, a.clock);
      expect(status).toContain("1 message(s) waiting, 0 due now, 1 held for a retry");
      expect(status).toContain(`${new URL(carol.base).host}\t1\t503\t`);
      // The same from the command line, beside the running server.
      const printed = cli(a.dataDir, ["federation", "status"]);
      expect(printed).toContain("1 held for a retry");
      expect(printed).toContain(`${new URL(carol.base).host}\t1\t503\t`);

      carol.down = false;
      // Not before its time: 20 s on, nothing more was tried.
      const tried = posts(carol, post.uri).length;
      a.clock.advance(20_000);
      await a.federation!.idle();
      expect(posts(carol, post.uri)).toHaveLength(tried);
      a.clock.advance(15_000);
      await eventually(() => posts(carol, post.uri).some((p) => p.answered === 202), "delivered on the retry", 15_000);
      await a.federation!.idle();
      expect(posts(carol, post.uri).filter((p) => p.answered === 202)).toHaveLength(1);
      expect(await failures(carol)).toBe(1);
      expect(await pending()).toBe(0);
    } finally {
      carol.stop();
    }
  });

  test("a server down for days is tried 16 times over about two days, then given up", async () => {
    const dave = await follower("127.0.0.32");
    try {
      dave.down = true;
      const post = await postStatus(alice, { status: "into the void", visibility: "public" });
      await eventually(async () => (await failures(dave)) === 1, "the first attempt");
      const started = a.clock.now();
      // Each hop of 6 hours (the longest delay) lets the next attempt run; idle() waits for it.
      for (let hop = 0; hop < 40 && (await pending()) > 0; hop++) {
        a.clock.advance(6 * 3_600_000 + 1000);
        await a.federation!.idle();
      }
      expect(await pending()).toBe(0);
      expect(await failures(dave)).toBe(16);
      expect(posts(dave, post.uri).every((p) => p.answered === 503)).toBe(true);
      expect(a.clock.now() - started).toBeGreaterThan(24 * 3_600_000);
    } finally {
      dave.stop();
    }
  });

  test("an inbox that answers 410 Gone is not retried, and its account stops following alice", async () => {
    const erin = await follower("127.0.0.33");
    try {
      const before = (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count;
      erin.inboxStatus = 410;
      const post = await postStatus(alice, { status: "hello?", visibility: "public" });
      await eventually(async () => (await alice.client.get(`/api/v1/accounts/${alice.id}`)).body.followers_count === before - 1, "erin pruned");
      await a.federation!.idle();
      // Nothing waits for erin's inbox (the followers of earlier tests, now gone quiet, may still have retries queued).
      const inbox = `${erin.base}/inbox`;
      const queued = await a.database.port.all<{ message: string }>("SELECT message FROM fedify_messages");
      expect(queued.filter((row) => JSON.parse(row.message).inbox === inbox)).toEqual([]);
      expect(await failures(erin)).toBe(1);
      expect(posts(erin, post.uri).every((p) => p.answered === 410)).toBe(true);
      const followers = (await alice.client.get(`/api/v1/accounts/${alice.id}/followers`)).body.map((f: any) => f.acct);
      expect(followers).not.toContain(`carol@${new URL(erin.base).host}`);
    } finally {
      erin.stop();
    }
  });
});
