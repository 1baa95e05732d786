import { afterEach, describe, expect, test } from "bun:test";
import type { DatabasePort } from "../../src/db/port.ts";
import { ApiError } from "../../src/errors.ts";
import { EventBus } from "../../src/infra/events.ts";
import { TimerWheel } from "../../src/infra/timer-wheel.ts";
import { AccountHistory } from "../../src/services/remote/account-history.ts";
import { QuoteChecks } from "../../src/services/remote/quote-checks.ts";
import { Relays } from "../../src/services/remote/relays.ts";
import { Tombstones } from "../../src/services/remote/tombstones.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * The remote family's leaves on the database port (issue 31): relays, tombstones and quote
 * checks, the same services on SQLite and on PostgreSQL, for what their routes, the CLI, the
 * inbound handlers, the outbound recipients and the wheel call.
 */

afterEach(closePortArms);

const PUBLIC_URL = "http://rookery.test";

function relaysOn({ t, port }: PortArm, refused: string[] = []) {
  return new Relays(port, t.ids, t.clock, new EventBus(port), (u) => refused.some((d) => u.includes(d)), null, PUBLIC_URL);
}

async function refused(run: () => Promise<unknown>, status: number, error: string) {
  const e = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(ApiError);
  expect([(e as ApiError).status, (e as ApiError).message]).toEqual([status, error]);
}

/** A remote account, its status and a quote of it, in the port's database (a quote check names a quote). */
async function aQuote(port: DatabasePort, arm: PortArm, name = "zoe"): Promise<number> {
  const author = await arm.mirror(await arm.t.remote(name, "m.example"));
  const statusId = arm.t.ids.next();
  const now = arm.t.clock.now();
  await port.run("INSERT INTO statuses (id, account_id, visibility, conversation_id, created_at) VALUES (?, ?, ?, ?, ?)", [statusId, author.id, "public", statusId, now]);
  const quoteId = arm.t.ids.next();
  await port.run("INSERT INTO quotes (id, status_id, account_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", [quoteId, statusId, author.id, now, now]);
  return quoteId;
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the remote family's leaves on ${arm.name}`, () => {
    test("relays: added (Mastodon's, by inbox), listed, answered only from the relay's own server, known as an actor once accepted, removed", async () => {
      const a = await arm.open();
      const relays = relaysOn(a);
      expect(await relays.list()).toEqual([]);
      const added = await relays.add(" https://relay.example/inbox ", "mastodon");
      expect(added).toMatchObject({ created: true, guessed: false, relay: { url: "https://relay.example/inbox", kind: "mastodon", inboxUrl: "https://relay.example/inbox", state: "pending", actorUri: null } });
      const again = await relays.add("https://relay.example/inbox", "mastodon");
      expect([again.created, again.relay.id]).toEqual([false, added.relay.id]);
      expect((await relays.list()).map((r) => r.url)).toEqual(["https://relay.example/inbox"]);

      const follow = added.relay.followActivityId;
      expect(await relays.answered(`${PUBLIC_URL}/elsewhere`, "https://relay.example/actor", true)).toBe(false);
      // Another server's word for the relay's Follow is nobody's business, and changes nothing.
      expect(await relays.answered(follow, "https://evil.example/actor", true)).toBe(true);
      expect((await relays.list())[0]).toMatchObject({ state: "pending", actorUri: null });
      expect(await relays.isRelayActor("https://relay.example/actor")).toBe(false);

      a.t.clock.advance(1000);
      expect(await relays.answered(follow, "https://relay.example/actor", true)).toBe(true);
      expect((await relays.list())[0]).toMatchObject({ state: "accepted", actorUri: "https://relay.example/actor", stateChangedAt: a.t.clock.now() });
      expect(await relays.isRelayActor("https://relay.example/actor")).toBe(true);
      expect(await relays.isRelayActor("https://relay.example/other")).toBe(false);

      expect(await relays.remove("https://relay.example/inbox")).toMatchObject({ id: added.relay.id, state: "accepted" });
      expect(await relays.list()).toEqual([]);
      expect(await relays.remove("https://relay.example/inbox")).toBeNull();
    });

    test("relays: the accepted ones are delivered to and known by their actor, but not one on a refused domain; a pending one is neither", async () => {
      const a = await arm.open();
      const relays = relaysOn(a, ["blocked.example"]);
      expect(await relays.accepted()).toEqual([]);
      const open = (await relays.add("https://relay.example/inbox", "mastodon")).relay;
      const pending = (await relays.add("https://pending.example/inbox", "mastodon")).relay;
      expect(await relays.answered(open.followActivityId, "https://relay.example/actor", true)).toBe(true);
      // Accepted before its domain was refused (the rule is the test's: it refuses from now on).
      const later = (await relays.add("https://later.example/inbox", "mastodon")).relay;
      expect(await relays.answered(later.followActivityId, "https://blocked.example/actor", true)).toBe(true);
      await a.port.run("UPDATE relays SET actor_uri = ?, state = 'accepted' WHERE id = ?", ["https://blocked.example/actor", later.id]);
      expect((await relays.accepted()).map((r) => [r.id, r.state, r.actorUri])).toEqual([[open.id, "accepted", "https://relay.example/actor"]]);
      expect((await relays.byActor("https://relay.example/actor"))?.id).toBe(open.id);
      expect(await relays.byActor("https://blocked.example/actor")).toBeNull();
      expect(await relays.byActor("https://pending.example/actor")).toBeNull();
      expect((await relays.list()).find((r) => r.id === pending.id)?.state).toBe("pending");
    });

    test("relays: a refused one asked again becomes pending under a new Follow IRI", async () => {
      const a = await arm.open();
      const relays = relaysOn(a);
      const { relay } = await relays.add("https://relay.example/inbox", "mastodon");
      expect(await relays.answered(relay.followActivityId, "https://relay.example/actor", false)).toBe(true);
      expect((await relays.list())[0]!.state).toBe("refused");
      const asked = await relays.add("https://relay.example/inbox", "mastodon");
      expect(asked).toMatchObject({ created: true, relay: { id: relay.id, state: "pending" } });
      expect(asked.relay.followActivityId).not.toBe(relay.followActivityId);
      expect(await relays.list()).toHaveLength(1);
    });

    test("relays: a refused one asked again twice at once sends one Follow, whose IRI is the one stored", async () => {
      const a = await arm.open();
      const events = new EventBus(a.port);
      const relays = new Relays(a.port, a.t.ids, a.t.clock, events, () => false, null, PUBLIC_URL);
      const { relay } = await relays.add("https://relay.example/inbox", "mastodon");
      await relays.answered(relay.followActivityId, "https://relay.example/actor", false);
      const sent: string[] = [];
      events.within("relay.subscribed", (e) => void sent.push(e.relay.followActivityId));
      const both = await Promise.all([relays.add("https://relay.example/inbox", "mastodon"), relays.add("https://relay.example/inbox", "mastodon")]);
      expect(both.map((r) => r.created).sort()).toEqual([false, true]);
      const [stored] = await relays.list();
      expect(stored).toMatchObject({ state: "pending" });
      expect(sent).toEqual([stored!.followActivityId]);
      for (const r of both) expect(r.relay.followActivityId).toBe(stored!.followActivityId);
    });

    test("relays: what cannot be a relay is refused with the reason, and nothing is stored", async () => {
      const a = await arm.open();
      const relays = relaysOn(a, ["blocked.example"]);
      await relays.add("https://relay.example/inbox", "mastodon");
      const before = await relays.list();
      await refused(() => relays.add("ftp://relay.example/inbox"), 422, "ftp://relay.example/inbox is not an http(s) URL");
      await refused(() => relays.add(`${PUBLIC_URL}/inbox`), 422, `${PUBLIC_URL}/inbox is this server`);
      await refused(() => relays.add("https://blocked.example/inbox"), 422, "blocked.example is a domain this server does not federate with");
      await refused(() => relays.add("https://other.example/actor", "litepub"), 422, "federation is off (FEDERATION=off): relays cannot be reached");
      await refused(() => relays.remove("not a url"), 422, "not a url is not an http(s) URL");
      expect(await relays.list()).toEqual(before);
    });

    test("tombstones: a deleted IRI is known as such; another is not", async () => {
      const a = await arm.open();
      const { t, port } = a;
      const tombstones = new Tombstones(port, t.clock);
      const author = await a.mirror(await t.remote("zoe", "m.example"));
      expect(await tombstones.has("https://m.example/users/zoe/statuses/1")).toBe(false);
      await tombstones.add("https://m.example/users/zoe/statuses/1", author.id);
      // Added twice (a Delete delivered again): the first stands.
      await tombstones.add("https://m.example/users/zoe/statuses/1", author.id);
      expect(await tombstones.has("https://m.example/users/zoe/statuses/1")).toBe(true);
      expect(await tombstones.has("https://m.example/users/zoe/statuses/2")).toBe(false);
    });

    test("quote checks: a waiting check is read, put off by the backoff after each failure, dropped past the bound, and restored onto the wheel", async () => {
      const a = await arm.open();
      const { t, port } = a;
      const wheel = new TimerWheel(t.clock);
      const fired: string[] = [];
      wheel.handle("quote-check", (id) => void fired.push(id));
      const checks = new QuoteChecks(port, t.clock, wheel);
      const quoteId = await aQuote(port, a);
      const dueAt = t.clock.now() + 60_000;
      await port.run("INSERT INTO quote_checks (quote_id, attempts, due_at) VALUES (?, ?, ?)", [quoteId, 0, dueAt]);

      expect(await checks.waiting(quoteId)).toEqual({ attempts: 0, dueAt });
      expect(await checks.waiting(quoteId + 1)).toBeUndefined();
      // Nothing waits for an unknown quote: nothing is made for it.
      await checks.again(quoteId + 1);
      expect(await checks.waiting(quoteId + 1)).toBeUndefined();

      await checks.restore();
      t.clock.advance(61_000);
      await wheel.idle();
      expect(fired).toEqual([String(quoteId)]);

      await checks.again(quoteId);
      // The first failure: 15 s (Mastodon's backoff with no retry yet).
      expect(await checks.waiting(quoteId)).toEqual({ attempts: 1, dueAt: t.clock.now() + 15_000 });
      await checks.again(quoteId);
      await checks.again(quoteId);
      expect((await checks.waiting(quoteId))?.attempts).toBe(3);
      await checks.again(quoteId);
      expect(await checks.waiting(quoteId)).toBeUndefined();
      expect(await port.all("SELECT quote_id FROM quote_checks")).toEqual([]);
      wheel.stop();
    });

    test("account history: a little-known profile opened while federation is off is counted, and nothing is fetched or marked", async () => {
      const a = await arm.open();
      const { t, port } = a;
      const s = t.services;
      const history = new AccountHistory(port, t.clock, s.accounts, s.remoteNotes, s.federationActors, s.statusActions, null);
      const far = await a.mirror(await t.remote("far", "m.example"));
      await port.run("INSERT INTO statuses (id, account_id, visibility, conversation_id, created_at) VALUES (?, ?, 'public', ?, ?)", [t.ids.next(), far.id, 1, t.clock.now()]);
      await history.viewed(far.id);
      await history.viewed(far.id + 1);
      await history.idle();
      expect(await port.all("SELECT account_id FROM history_fetches")).toEqual([]);
    });

    test("quote checks: scheduled once (a second schedule keeps the first), on the wheel; a stale stamped quote is checked again within six hours, a fresh one or one without a stamp is not", async () => {
      const a = await arm.open();
      const { t, port } = a;
      const wheel = new TimerWheel(t.clock);
      const fired: string[] = [];
      wheel.handle("quote-check", (id) => void fired.push(id));
      const checks = new QuoteChecks(port, t.clock, wheel);
      const quoteId = await aQuote(port, a);
      await checks.schedule(quoteId, t.clock.now() + 1000);
      await checks.schedule(quoteId, t.clock.now() + 5000);
      expect(await checks.waiting(quoteId)).toEqual({ attempts: 0, dueAt: t.clock.now() + 1000 });
      t.clock.advance(1500);
      await wheel.idle();
      expect(fired).toEqual([String(quoteId)]);
      await checks.settled(quoteId);

      const quote = (await port.get<{ id: number }>("SELECT id FROM quotes WHERE id = ?", [quoteId]))!;
      const base = { id: quote.id, statusId: 0, accountId: 0, quotedStatusId: 1, quotedAccountId: 1, quotedUri: "https://q.example/1", approvalUri: "https://q.example/stamps/1", activityUri: null, legacy: false, state: "accepted", createdAt: 0 };
      const week = 7 * 24 * 60 * 60 * 1000;
      await checks.refreshIfStale({ ...base, updatedAt: t.clock.now() - week + 60_000 });
      await checks.refreshIfStale({ ...base, approvalUri: null, updatedAt: 0 });
      await checks.refreshIfStale({ ...base, state: "rejected", updatedAt: 0 });
      expect(await checks.waiting(quoteId)).toBeUndefined();
      await checks.refreshIfStale({ ...base, updatedAt: t.clock.now() - week - 1 });
      const due = (await checks.waiting(quoteId))!.dueAt - t.clock.now();
      expect(due >= 0 && due <= 6 * 60 * 60 * 1000).toBe(true);
      wheel.stop();
    });

    test("quote checks: settled, the check goes", async () => {
      const a = await arm.open();
      const { t, port } = a;
      const wheel = new TimerWheel(t.clock);
      const checks = new QuoteChecks(port, t.clock, wheel);
      const [first, second] = [await aQuote(port, a, "zoe"), await aQuote(port, a, "yan")];
      await port.run("INSERT INTO quote_checks (quote_id, attempts, due_at) VALUES (?, 0, ?), (?, 2, ?)", [first, t.clock.now() + 1000, second, t.clock.now() + 2000]);
      await checks.settled(first);
      expect(await checks.waiting(first)).toBeUndefined();
      expect(await checks.waiting(second)).toEqual({ attempts: 2, dueAt: t.clock.now() + 2000 });
    });
  });
}
