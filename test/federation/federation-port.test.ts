import { afterEach, describe, expect, test } from "bun:test";
import { Temporal } from "@js-temporal/polyfill";
import { ManualClock } from "../../src/clock.ts";
import { deliveryQueueReport, federationStatus, relaysReport } from "../../src/federation/cli-report.ts";
import { failureKey, type DeliveryFailure } from "../../src/federation/failures.ts";
import { InstanceActor, storedInstanceActorKeys } from "../../src/federation/instance-actor.ts";
import { AccountKeys } from "../../src/federation/keys.ts";
import { PortKvStore } from "../../src/federation/kv.ts";
import { PortMessageQueue } from "../../src/federation/queue.ts";
import { IdGenerator } from "../../src/ids.ts";
import { EventBus } from "../../src/infra/events.ts";
import { OutgoingHttp } from "../../src/net/outgoing.ts";
import { Relays } from "../../src/services/remote/relays.ts";
import { loadInstanceKeys } from "../../src/services/instance-keys.ts";
import { postgresAvailable } from "../support/postgres.ts";
import { closePortArms, freshPostgresPort, freshSqlitePort } from "../support/port-arms.ts";

/**
 * The federation family on the database port (issue 31): the keys that sign what Rookery
 * sends (accounts', the instance actor's, the instance's own), the delivery queue's report and
 * the relays' list run on SQLite and on PostgreSQL alike. Fedify's store and queue themselves
 * are run on both by pg-kv.test.ts and pg-queue.test.ts; the behaviour over HTTP by the rest of
 * test/federation.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await closePortArms();
});



const outgoing = new OutgoingHttp({
  allowPrivateAddresses: true,
  refusesHost: () => false,
  resolve: async () => ["127.0.0.1"],
  userAgent: "test",
  limits: { firstByteMs: 1000, totalMs: 1000, maxPerHost: 1, maxTotal: 1 },
});

const jwk = (key: CryptoKey) => crypto.subtle.exportKey("jwk", key);

for (const [name, open, skip] of [
  ["SQLite", freshSqlitePort, false],
  ["PostgreSQL", freshPostgresPort, !postgresAvailable],
] as const) {
  describe.skipIf(skip)(`the federation family on ${name}`, () => {
    test("an account's key pairs are made once, stored, and read back by another process's AccountKeys", async () => {
      const port = await open();
      const clock = new ManualClock(1_764_000_000_000);
      const alice = 2 ** 45;
      await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, ?, ?)", [alice, "alice", clock.now()]);
      const keys = new AccountKeys(port, clock);
      // Two first asks at once make one pair of each kind.
      const [made, again] = await Promise.all([keys.keyPairs(alice), keys.keyPairs(alice)]);
      expect(made.map((k) => k.algorithm)).toEqual(["RSASSA-PKCS1-v1_5", "Ed25519"]);
      expect(again).toBe(made);
      expect(await port.all("SELECT algorithm, created_at FROM account_keys ORDER BY algorithm")).toEqual([
        { algorithm: "Ed25519", created_at: clock.now() },
        { algorithm: "RSASSA-PKCS1-v1_5", created_at: clock.now() },
      ]);
      const read = await new AccountKeys(port, clock).keyPairs(alice);
      expect(await Promise.all(read.map((k) => jwk(k.publicKey)))).toEqual(await Promise.all(made.map((k) => jwk(k.publicKey))));
    });

    test("key pairs for an account that does not exist are refused and nothing is stored", async () => {
      const port = await open();
      const keys = new AccountKeys(port, new ManualClock(5));
      const refused = await keys.keyPairs(404).catch((e: Error) => e);
      expect(String((refused as Error).cause ?? refused)).toMatch(/foreign key/i);
      expect(await port.all("SELECT * FROM account_keys")).toEqual([]);
    });

    test("the instance actor's keys and the instance's own keys are made on first need and then kept", async () => {
      const port = await open();
      expect(await storedInstanceActorKeys(port)).toEqual([]);
      const pairs = await new InstanceActor(port, "rookery.example").keyPairs();
      expect(pairs).toHaveLength(2);
      const stored = await storedInstanceActorKeys(port);
      expect(stored.map((k) => k.kty)).toEqual(["RSA", "OKP"]);
      // Another process's actor reads the same pairs, and makes none.
      const other = await new InstanceActor(port, "rookery.example").keyPairs();
      expect(await jwk(other[0]!.publicKey)).toEqual(await jwk(pairs[0]!.publicKey));
      expect(await storedInstanceActorKeys(port)).toEqual(stored);

      const first = await loadInstanceKeys(port);
      expect(first.secret.length).toBe(48);
      expect(first.vapidPublicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
      const second = await loadInstanceKeys(port);
      expect(second).toEqual(first);
      expect((await port.get<{ n: number }>("SELECT count(*) AS n FROM instance_settings"))!.n).toBe(4);
    });

    test("the delivery queue's report counts what is due and held, names failing domains, and lists the relays", async () => {
      const port = await open();
      const clock = new ManualClock(1_764_000_000_000);
      const empty = await deliveryQueueReport(port, clock);
      expect(empty).toEqual({ total: 0, due: 0, retrying: 0, nextAt: null, failing: [] });
      expect(await relaysReport(port, clock)).toBe("No relays.\n");

      const queue = new PortMessageQueue(port, clock, outgoing);
      await queue.enqueue({ type: "outbox", inbox: "https://up.example/inbox" });
      await queue.enqueue({ type: "outbox", inbox: "https://down.example/inbox" }, { delay: Temporal.Duration.from({ minutes: 10 }) });
      const failure: DeliveryFailure = { domain: "down.example", failures: 3, lastStatus: 503, lastError: "503 Service Unavailable", lastAt: clock.now() };
      await new PortKvStore(port, clock).set([...failureKey("down.example")], failure);
      await port.run(
        "INSERT INTO relays (id, url, kind, inbox_url, state, follow_activity_id, created_at, state_changed_at, received_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [1, "https://down.example/actor", "litepub", "https://down.example/inbox", "accepted", "https://rookery.example/follow/1", clock.now(), clock.now(), 7],
      );

      expect(await deliveryQueueReport(port, clock)).toEqual({ total: 2, due: 1, retrying: 1, nextAt: clock.now() + 10 * 60_000, failing: [failure] });
      const status = await federationStatus(port, clock);
      expect(status).toContain("Queue: 2 message(s) waiting, 1 due now, 1 held for a retry");
      expect(status).toContain("down.example\t3\t503\t");
      expect(await relaysReport(port, clock)).toContain("https://down.example/actor\tlitepub\taccepted\t");
      expect(await relaysReport(port, clock)).toContain("failing: 3 failed attempt(s)");
    });

    test("a relay added by several at once (two commands, a double submit): stored once, announced once, the others answered the stored one", async () => {
      const port = await open();
      const clock = new ManualClock(1_764_000_000_000);
      const events = new EventBus(port);
      const subscribed: number[] = [];
      events.within("relay.subscribed", (e) => void subscribed.push(e.relay.id));
      const relays = new Relays(port, new IdGenerator(clock), clock, events, () => false, null, "https://rookery.example");
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => relays.add("https://relay.example/inbox", "mastodon")));
      expect(results.map((r) => r.status)).toEqual(Array(4).fill("fulfilled"));
      const answers = results.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<Relays["add"]>>>).value);
      const [stored] = await relays.list();
      expect(answers.filter((a) => a.created)).toHaveLength(1);
      for (const a of answers) expect(a.relay).toEqual(stored!);
      expect(subscribed).toEqual([stored!.id]);
      expect(await relays.list()).toHaveLength(1);
    });
  });
}
