import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { ApiError } from "../../src/errors.ts";
import { EventBus } from "../../src/infra/events.ts";
import { RemoteAccounts } from "../../src/services/remote/accounts.ts";
import { FederationDomains } from "../../src/services/remote/domains.ts";
import { GoneAccounts } from "../../src/services/remote/gone-accounts.ts";
import { FederationInbox } from "../../src/services/remote/inbox.ts";
import { remoteActorInput } from "../support/remote-actor-input.ts";
import { followsOnPort } from "../support/follows-on-port.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Follows made by several tasks at once (issue 31): a double tap of Follow, the same Follow
 * delivered twice, a request authorized twice, a Move heard twice. On PostgreSQL each task finds
 * the pair absent; the unique pair keeps one row, and only the task that wrote it counts it and
 * tells it. Run on both databases (on SQLite the tasks take turns).
 */

afterEach(closePortArms);

const TIMES = 5;
const outcome = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, sql: string, params: unknown[] = []) => Number((await arm.port.get<{ n: number }>(sql, params))!.n);

function family(arm: PortArm) {
  const services = followsOnPort(arm);
  const told: string[] = [];
  for (const type of ["follow.created", "follow_request.created", "follow_request.authorized"] as const) services.events.within(type, (e) => void told.push(`${type} ${e.accountId}->${e.targetAccountId}`));
  return { ...services, told };
}

async function counts(arm: PortArm, id: number) {
  const row = await arm.port.get<{ followers: number; following: number }>("SELECT followers_count AS followers, following_count AS following FROM accounts WHERE id = ?", [id]);
  return { followers: Number(row!.followers), following: Number(row!.following) };
}

const actor = (uri: string) => remoteActorInput(uri, { displayName: "" });

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`follows made at once on ${arm.name}`, () => {
    test("five follows of one account at once (a double tap): one follow, counted and told once; each answered following, the options given kept", async () => {
      const a = await arm.open();
      const [alice, bob] = [await a.mirror(await a.t.local("alice")), await a.mirror(await a.t.local("bob"))];
      const { follows, told } = family(a);
      const results = await Promise.allSettled(Array.from({ length: TIMES }, () => follows.follow(alice.id, bob.id, { notify: true })));
      expect(results.map((r) => r.status)).toEqual(Array(TIMES).fill("fulfilled"));
      for (const r of results) expect((r as PromiseFulfilledResult<unknown>).value).toMatchObject({ id: bob.id, following: true, notifying: true, requested: false });
      expect(await count(a, "SELECT count(*) AS n FROM follows WHERE account_id = ? AND target_account_id = ?", [alice.id, bob.id])).toBe(1);
      expect([await counts(a, alice.id), await counts(a, bob.id)]).toEqual([
        { followers: 0, following: 1 },
        { followers: 1, following: 0 },
      ]);
      expect(told).toEqual([`follow.created ${alice.id}->${bob.id}`]);
    });

    test("five follows of a locked account and of a remote one at once: one request each, told once; each answered requested", async () => {
      const a = await arm.open();
      const [alice, carol] = [await a.mirror(await a.t.local("alice")), await a.mirror(await a.t.local("carol"))];
      const zoe = await a.mirror(await a.t.remote("zoe", "remote.example"));
      await a.port.orm.update(a.port.tables.accounts).set({ locked: true }).where(eq(a.port.tables.accounts.id, carol.id));
      const { follows, told } = family(a);
      const results = await Promise.allSettled([carol, zoe].flatMap((target) => Array.from({ length: TIMES }, () => follows.follow(alice.id, target.id, {}))));
      expect(results.map((r) => r.status)).toEqual(Array(2 * TIMES).fill("fulfilled"));
      for (const r of results) expect((r as PromiseFulfilledResult<unknown>).value).toMatchObject({ following: false, requested: true });
      expect(await a.port.all("SELECT target_account_id FROM follow_requests WHERE account_id = ? ORDER BY target_account_id", [alice.id])).toEqual(
        [carol.id, zoe.id].sort((x, y) => x - y).map((id) => ({ target_account_id: id })),
      );
      expect(told.sort()).toEqual([`follow_request.created ${alice.id}->${carol.id}`, `follow_request.created ${alice.id}->${zoe.id}`].sort());
    });

    test("a request authorized five times at once: one follow, counted and told once; the others find it answered (404)", async () => {
      const a = await arm.open();
      const [alice, carol] = [await a.mirror(await a.t.local("alice")), await a.mirror(await a.t.local("carol"))];
      await a.port.orm.update(a.port.tables.accounts).set({ locked: true }).where(eq(a.port.tables.accounts.id, carol.id));
      const { follows, told } = family(a);
      await follows.follow(alice.id, carol.id, {});
      const refusals = await Promise.all(Array.from({ length: TIMES }, () => outcome(follows.authorizeRequest(carol.id, alice.id))));
      expect(refusals.filter((e) => e === null)).toHaveLength(1);
      expect(refusals.filter((e) => e !== null).map((e) => e!.status)).toEqual(Array(TIMES - 1).fill(404));
      expect(await count(a, "SELECT count(*) AS n FROM follows")).toBe(1);
      expect(await count(a, "SELECT count(*) AS n FROM follow_requests")).toBe(0);
      expect(await counts(a, carol.id)).toEqual({ followers: 1, following: 0 });
      expect(told.filter((e) => e.startsWith("follow_request.authorized"))).toEqual([`follow_request.authorized ${alice.id}->${carol.id}`]);
    });

    test("a Move heard twice at once (the same Move delivered twice): every follower follows the new account once, counted once, none left behind", async () => {
      const a = await arm.open();
      const [old, next] = [await a.mirror(await a.t.local("old")), await a.mirror(await a.t.local("next"))];
      const fans = await Promise.all(["fan1", "fan2", "fan3"].map(async (n) => a.mirror(await a.t.local(n))));
      const { follows, moves } = family(a);
      for (const fan of fans) await follows.follow(fan.id, old.id, { reblogs: false });
      const results = await Promise.allSettled([moves.move(old.id, next.id), moves.move(old.id, next.id)]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(await a.port.all("SELECT account_id, show_reblogs FROM follows WHERE target_account_id = ? ORDER BY account_id", [next.id])).toEqual(
        fans.map((f) => f.id).sort((x, y) => x - y).map((id) => ({ account_id: id, show_reblogs: a.port.dialect === "postgres" ? false : 0 })),
      );
      expect(await count(a, "SELECT count(*) AS n FROM follows WHERE target_account_id = ?", [old.id])).toBe(0);
      expect([await counts(a, old.id), await counts(a, next.id)]).toEqual([
        { followers: 0, following: 0 },
        { followers: fans.length, following: 0 },
      ]);
    });

    test("the same remote Follow of a known actor handled five times at once (delivered twice, Fedify's idempotency read before either wrote): one follow, counted and told once, every answer Accept, none Reject", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const { follows, moderation, told } = family(a);
      const s = a.t.services;
      const gone = new GoneAccounts(a.port, follows, s.removal);
      const domains = new FederationDomains(a.port, a.t.ids, a.t.clock, new EventBus(a.port), false, "rookery.test", gone);
      await domains.load();
      const remote = new RemoteAccounts(a.port, a.t.ids, a.t.clock, new EventBus(a.port), domains, null, gone);
      // What a Follow touches is on the port (the follower's row, the follow); the rest is the arm's SQLite services, untouched by it.
      const inbox = new FederationInbox(s.federationActors, remote, follows, s.removal, s.reader, moderation, s.remoteNotes, gone);
      // Known already (its first sightings at once are remote-account-races-port's): the Follows go straight to the pair.
      await remote.upsert(actor("https://remote.example/users/zed"));
      const results = await Promise.allSettled(Array.from({ length: TIMES }, () => inbox.follow(actor("https://remote.example/users/zed"), alice)));
      expect(results.map((r) => r.status)).toEqual(Array(TIMES).fill("fulfilled"));
      const zed = (await remote.byUri("https://remote.example/users/zed"))!;
      for (const r of results) expect((r as PromiseFulfilledResult<unknown>).value).toEqual({ followerId: zed.id, answer: "Accept", kept: true });
      expect(await count(a, "SELECT count(*) AS n FROM accounts WHERE domain = 'remote.example'")).toBe(1);
      expect(await count(a, "SELECT count(*) AS n FROM follows WHERE account_id = ? AND target_account_id = ?", [zed.id, alice.id])).toBe(1);
      expect(await counts(a, alice.id)).toEqual({ followers: 1, following: 0 });
      expect(told).toEqual([`follow.created ${zed.id}->${alice.id}`]);

      // A follower alice blocks is still refused with Reject, nothing stored.
      const yves = (await remote.upsert(actor("https://remote.example/users/yves")))!;
      await moderation.block(alice.id, yves.id);
      expect(await inbox.follow(actor("https://remote.example/users/yves"), alice)).toEqual({ followerId: yves.id, answer: "Reject", kept: false });
      expect(await count(a, "SELECT count(*) AS n FROM follows WHERE account_id = ?", [yves.id])).toBe(0);
    });
  });
}
