import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { ApiError } from "../../src/errors.ts";
import { NotificationService } from "../../src/services/notifications/notifications.ts";
import { NotificationPolicies } from "../../src/services/notifications/policy.ts";
import { followsOnPort } from "../support/follows-on-port.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Follows, follow requests, blocks, mutes, domain blocks and follower moves on the database port
 * (issue 31): the same services run on SQLite and on PostgreSQL. Their behaviour over HTTP and
 * federation is tested in accounts.test.ts, federation/blocks.test.ts, domain-blocks.test.ts and
 * the moves tests; this holds their SQL on both databases.
 */

afterEach(closePortArms);

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

const family = followsOnPort;

async function counts(arm: PortArm, id: number) {
  const row = await arm.port.get<{ followers: number; following: number }>("SELECT followers_count AS followers, following_count AS following FROM accounts WHERE id = ?", [id]);
  return { followers: Number(row!.followers), following: Number(row!.following) };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`follows, blocks and mutes on ${arm.name}`, () => {
    test("follows and requests: made, updated, listed, authorized, rejected, undone; bad input changes nothing", async () => {
      const a = await arm.open();
      const [alice, bob, carol] = [await a.mirror(await a.t.local("alice")), await a.mirror(await a.t.local("bob")), await a.mirror(await a.t.local("carol"))];
      await a.port.orm.update(a.port.tables.accounts).set({ locked: true }).where(eq(a.port.tables.accounts.id, carol.id));
      const { follows } = family(a);

      const rel = await follows.follow(alice.id, bob.id, { notify: true, languages: ["en"] });
      expect(rel).toMatchObject({ id: bob.id, following: true, notifying: true, showingReblogs: true, languages: ["en"], requested: false });
      expect(await counts(a, alice.id)).toEqual({ followers: 0, following: 1 });
      expect(await counts(a, bob.id)).toEqual({ followers: 1, following: 0 });
      // Following again updates the options, not the counters.
      expect(await follows.follow(alice.id, bob.id, { reblogs: false })).toMatchObject({ following: true, showingReblogs: false, notifying: true });
      expect(await counts(a, bob.id)).toEqual({ followers: 1, following: 0 });
      await follows.follow(bob.id, alice.id, {});
      expect((await follows.relationships(alice.id, [bob.id, carol.id, bob.id])).map((r) => [r.id, r.following, r.followedBy])).toEqual([
        [bob.id, true, true],
        [carol.id, false, false],
        [bob.id, true, true],
      ]);

      // Bad input: oneself, nobody, invalid languages: refused, nothing stored.
      expect((await rejection(follows.follow(alice.id, alice.id, {})))?.status).toBe(404);
      expect((await rejection(follows.follow(alice.id, 404, {})))?.status).toBe(404);
      const invalid = await rejection(follows.follow(alice.id, carol.id, { languages: ["not a language"] }));
      expect([invalid?.status, invalid?.message]).toEqual([422, "Validation failed: Languages is invalid"]);
      expect((await rejection(follows.unfollow(alice.id, 404)))?.status).toBe(404);
      expect(await count(a, "follows")).toBe(2);
      expect(await count(a, "follow_requests")).toBe(0);

      // A locked account gets requests: listed, rejected, authorized.
      expect(await follows.follow(alice.id, carol.id, {})).toMatchObject({ following: false, requested: true });
      expect(await follows.follow(bob.id, carol.id, { notify: true })).toMatchObject({ requested: true, notifying: true });
      const pending = await follows.pendingRequests(carol.id, { limit: 10 });
      // The credential account's follow_requests_count, counted up to its cap.
      expect([await follows.pendingRequestCount(carol.id, 40), await follows.pendingRequestCount(carol.id, 1)]).toEqual([pending.length, 1]);
      expect(pending.map((p) => p.account.username)).toEqual(["bob", "alice"]);
      expect(pending[0]!.account).toMatchObject({ id: bob.id, locked: false });
      expect((await follows.pendingRequests(carol.id, { limit: 1, minId: pending[1]!.cursor })).map((p) => p.account.username)).toEqual(["bob"]);
      expect(await follows.rejectRequest(carol.id, alice.id)).toMatchObject({ requestedBy: false, followedBy: false });
      expect((await rejection(follows.rejectRequest(carol.id, alice.id)))?.status).toBe(404);
      expect(await follows.authorizeRequest(carol.id, bob.id)).toMatchObject({ followedBy: true, requestedBy: false });
      expect((await rejection(follows.authorizeRequest(carol.id, bob.id)))?.status).toBe(404);
      expect(await follows.relationship(bob.id, carol.id)).toMatchObject({ following: true, notifying: true });
      expect(await counts(a, carol.id)).toEqual({ followers: 1, following: 0 });

      expect((await follows.listFollows(bob.id, "following", { limit: 10 })).map((r) => r.account.username)).toEqual(["carol", "alice"]);
      expect((await follows.listFollows(bob.id, "followers", { limit: 10 })).map((r) => r.account.username)).toEqual(["alice"]);
      expect((await follows.listFollows(bob.id, "following", { limit: 10 }, new Set([carol.id]))).map((r) => r.account.username)).toEqual(["alice"]);
      // Alice follows bob, who follows carol: bob is a familiar follower of carol's to alice.
      const familiar = await follows.familiarFollowers(alice.id, [carol]);
      expect(familiar.get(carol.id)!.map((f) => f.username)).toEqual(["bob"]);

      expect(await follows.unfollow(alice.id, bob.id)).toMatchObject({ following: false, followedBy: true });
      expect(await counts(a, bob.id)).toEqual({ followers: 0, following: 2 });
      expect(await counts(a, alice.id)).toEqual({ followers: 1, following: 0 });
    });

    test("blocks and mutes: a block severs follows both ways and refuses follows; mutes expire; both listed and undone", async () => {
      const a = await arm.open();
      const [alice, bob, carol] = [await a.mirror(await a.t.local("alice")), await a.mirror(await a.t.local("bob")), await a.mirror(await a.t.local("carol"))];
      const { follows, moderation } = family(a);
      await follows.follow(alice.id, bob.id, {});
      await follows.follow(bob.id, alice.id, {});

      expect(await moderation.block(alice.id, bob.id)).toMatchObject({ blocking: true, following: false, followedBy: false });
      expect(await follows.relationship(bob.id, alice.id)).toMatchObject({ blockedBy: true, following: false });
      expect(await count(a, "follows")).toBe(0);
      expect(await counts(a, alice.id)).toEqual({ followers: 0, following: 0 });
      // Blocked either way: no follow, nothing stored.
      expect((await rejection(follows.follow(bob.id, alice.id, {})))?.status).toBe(403);
      expect((await rejection(follows.follow(alice.id, bob.id, {})))?.status).toBe(403);
      expect((await rejection(moderation.block(alice.id, 404)))?.status).toBe(404);
      expect(await count(a, "follows")).toBe(0);
      expect(await count(a, "blocks")).toBe(1);
      await moderation.block(alice.id, bob.id);
      expect(await count(a, "blocks")).toBe(1);
      expect((await moderation.listBlocks(alice.id, { limit: 10 })).map((r) => r.account.username)).toEqual(["bob"]);
      expect(await moderation.unblock(alice.id, bob.id)).toMatchObject({ blocking: false });
      expect(await moderation.listBlocks(alice.id, { limit: 10 })).toEqual([]);

      expect(await moderation.mute(alice.id, carol.id, { notifications: false, durationSeconds: 60 })).toMatchObject({ muting: true, mutingNotifications: false });
      // Muting again updates the mute in place.
      expect(await moderation.mute(alice.id, carol.id, {})).toMatchObject({ muting: true, mutingNotifications: true });
      await moderation.mute(alice.id, bob.id, { durationSeconds: 60 });
      expect(await count(a, "mutes")).toBe(2);
      const muted = await moderation.listMutes(alice.id, { limit: 10 });
      expect(muted.map((m) => [m.account.username, m.expiresAt])).toEqual([
        ["bob", a.t.clock.now() + 60_000],
        ["carol", null],
      ]);
      expect((await rejection(moderation.mute(alice.id, 404, {})))?.status).toBe(404);
      expect(await count(a, "mutes")).toBe(2);
      a.t.clock.advance(61_000);
      expect((await moderation.listMutes(alice.id, { limit: 10 })).map((m) => m.account.username)).toEqual(["carol"]);
      expect(await follows.relationship(alice.id, bob.id)).toMatchObject({ muting: false });
      expect(await moderation.unmute(alice.id, carol.id)).toMatchObject({ muting: false });
      expect(await moderation.listMutes(alice.id, { limit: 10 })).toEqual([]);
    });

    test("domain blocks: the follows with accounts there end, the relationship shows it; a bad domain changes nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const far = await a.mirror(await a.t.remote("far", "far.example"));
      const ported = await a.mirror(await a.t.remote("ported", "far.example:8443"));
      const near = await a.mirror(await a.t.remote("near", "near.example"));
      const { follows, domainBlocks } = family(a);
      await follows.follow(far.id, alice.id, {});
      await follows.follow(ported.id, alice.id, {});
      await follows.follow(near.id, alice.id, {});
      await follows.follow(alice.id, far.id, {});
      expect(await follows.relationship(alice.id, far.id)).toMatchObject({ requested: true, followedBy: true, domainBlocking: false });

      const invalid = await rejection(domainBlocks.block(alice.id, "not a domain"));
      expect([invalid?.status, invalid?.message]).toEqual([422, "Validation failed: Domain is invalid"]);
      expect((await rejection(domainBlocks.block(alice.id, " ")))?.message).toBe("Validation failed: Domain can't be blank");
      expect(await count(a, "account_domain_blocks")).toBe(0);

      await domainBlocks.block(alice.id, "FAR.example");
      await domainBlocks.block(alice.id, "far.example");
      await domainBlocks.block(alice.id, "other.example");
      expect((await domainBlocks.list(alice.id, { limit: 10 })).map((b) => b.domain)).toEqual(["other.example", "far.example"]);
      expect((await follows.relationships(alice.id, [far.id, ported.id, near.id])).map((r) => [r.domainBlocking, r.followedBy, r.requested])).toEqual([
        [true, false, true],
        [true, false, false],
        [false, true, false],
      ]);
      expect(await counts(a, alice.id)).toEqual({ followers: 1, following: 0 });

      await domainBlocks.unblock(alice.id, "far.example");
      await domainBlocks.unblock(alice.id, "not a domain");
      expect((await domainBlocks.list(alice.id, { limit: 10 })).map((b) => b.domain)).toEqual(["other.example"]);
      expect(await follows.relationship(alice.id, far.id)).toMatchObject({ domainBlocking: false });
    });

    test("silences: a blocked, a muted or a domain-blocked unfollowed sender's notification is held; a followed one there and a mute of the feed only are not", async () => {
      const a = await arm.open();
      const [rita, bob, carol, dave] = [await a.mirror(await a.t.local("rita")), await a.mirror(await a.t.local("bob")), await a.mirror(await a.t.local("carol")), await a.mirror(await a.t.local("dave"))];
      const far = await a.mirror(await a.t.remote("far", "far.example"));
      const friend = await a.mirror(await a.t.remote("friend", "far.example"));
      const { moderation, domainBlocks, events } = family(a);
      const notifications = new NotificationService(a.port, a.t.ids, a.t.clock, moderation, events, new NotificationPolicies(a.port, a.t.ids, a.t.clock));
      await moderation.block(rita.id, bob.id);
      await moderation.mute(rita.id, carol.id, {});
      await moderation.mute(rita.id, dave.id, { notifications: false });
      await domainBlocks.block(rita.id, "far.example");
      // Followed after the block (which ended any follow there): a sender she follows is heard.
      await a.port.orm.insert(a.port.tables.follows).values({ id: a.t.ids.next(), accountId: rita.id, targetAccountId: friend.id, createdAt: a.t.clock.now() });

      const silenced = async (from: number) => moderation.silences(rita.id, from);
      expect([await silenced(bob.id), await silenced(carol.id), await silenced(dave.id), await silenced(far.id), await silenced(friend.id)]).toEqual([true, true, false, true, false]);
      // Blocking is one way: bob still hears from rita.
      expect(await moderation.silences(bob.id, rita.id)).toBe(false);

      expect(await notifications.notify(rita.id, bob.id, "follow")).toBeNull();
      expect(await notifications.notify(rita.id, carol.id, "follow")).toBeNull();
      expect(await notifications.notify(rita.id, far.id, "follow")).toBeNull();
      expect(await count(a, "notifications")).toBe(0);
      expect((await notifications.notify(rita.id, dave.id, "follow"))?.fromAccountId).toBe(dave.id);
      expect((await notifications.notify(rita.id, friend.id, "follow"))?.fromAccountId).toBe(friend.id);
      expect(await count(a, "notifications")).toBe(2);
    });

    test("a move: local followers follow the new account, blockers and muters block and mute it", async () => {
      const a = await arm.open();
      const [old, next, fan, blocker, muter] = await Promise.all(["old", "next", "fan", "blocker", "muter"].map(async (n) => a.mirror(await a.t.local(n))));
      const { follows, moderation, moves } = family(a);
      await follows.follow(fan!.id, old!.id, { notify: true });
      await moderation.block(blocker!.id, old!.id);
      await moderation.mute(muter!.id, old!.id, { notifications: false });

      expect(await moves.move(old!.id, next!.id)).toBe(1);
      expect(await follows.relationship(fan!.id, next!.id)).toMatchObject({ following: true, notifying: true });
      expect(await follows.relationship(fan!.id, old!.id)).toMatchObject({ following: false });
      expect(await follows.relationship(blocker!.id, next!.id)).toMatchObject({ blocking: true });
      expect(await follows.relationship(muter!.id, next!.id)).toMatchObject({ muting: true, mutingNotifications: false });
      // Moving again changes nothing more.
      expect(await moves.move(old!.id, next!.id)).toBe(0);
      expect(await count(a, "blocks")).toBe(2);
    });
  });
}
