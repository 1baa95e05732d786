import { afterEach, describe, expect, test } from "bun:test";
import { followRequests, follows, listAccounts, lists, polls, statuses } from "../../src/db/schema.ts";
import { registerConsequences } from "../../src/services/consequences.ts";
import { ConversationService } from "../../src/services/conversations.ts";
import type { Services } from "../../src/services/index.ts";
import { ListService } from "../../src/services/lists.ts";
import { NotificationService } from "../../src/services/notifications/notifications.ts";
import { NotificationPolicies } from "../../src/services/notifications/policy.ts";
import { Counters } from "../../src/services/statuses/counters.ts";
import { HomeFeedService } from "../../src/services/statuses/home-feed.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";
import { statusesOnPort } from "../support/statuses-on-port.ts";

/**
 * The event bus's `within` listeners on the database port (issue 31): what a post, a favourite
 * and a poll's end set off (counters, home feeds, lists, notifications) is written in the
 * emitter's transaction on SQLite and on PostgreSQL, by the table of consequences itself
 * (registerConsequences) over the listeners' services built on the arm's port. Their behaviour
 * over HTTP is tested beside this file (posting, actions, polls, timelines, notifications).
 */

afterEach(closePortArms);

/** Rows the arm's SQLite services wrote (accounts' follows and lists, statuses, polls), in the port's database too. */
async function copy(arm: PortArm) {
  if (arm.port.dialect !== "postgres") return;
  const tables = { follows, followRequests, lists, listAccounts, statuses, polls } as const;
  for (const name of Object.keys(tables) as (keyof typeof tables)[]) {
    const rows = await arm.t.database.port.orm.select().from(tables[name]);
    if (rows.length) await arm.port.orm.insert(arm.port.tables[name]).values(rows as never).onConflictDoNothing();
  }
}

/** The statuses family on the port, with the table of consequences registered on its bus over port-built listeners. */
function withConsequences(arm: PortArm) {
  const { t, port } = arm;
  const s = t.services;
  const family = statusesOnPort(arm);
  const policies = new NotificationPolicies(port, t.ids, t.clock);
  const notifications = new NotificationService(port, t.ids, t.clock, s.moderation, family.events, policies);
  const listeners = {
    ...s,
    notifications,
    notificationPolicies: policies,
    counters: new Counters(port, s.renderCache),
    homeFeed: new HomeFeedService(port, t.clock),
    lists: new ListService(port, t.ids, t.clock, family.events),
    conversations: new ConversationService(port, t.ids, notifications, family.events),
    polls: family.polls,
    // No transport here: pushes (push-port.test.ts), link cards and the media cache are not what this tests.
    pushDeliveries: { subscribe() {}, enqueue: async () => {} },
    linkCards: { subscribe() {} },
    remoteMediaCache: null,
  } as unknown as Services;
  registerConsequences(family.events, listeners, {});
  return family;
}

const notificationsOf = (arm: PortArm, accountId: number) =>
  arm.port.all<{ type: string; from: number; status: number | null }>('SELECT type, from_account_id AS "from", status_id AS "status" FROM notifications WHERE account_id = ? ORDER BY id', [accountId]);

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`the within listeners on ${arm.name}`, () => {
    test("a post by a followed account: counted, in the follower's home feed and list, the mentioned account notified", async () => {
      const a = await arm.open();
      const s = a.t.services;
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const carol = await a.mirror(await a.t.local("carol"));
      await s.follows.follow(bob.id, alice.id, {});
      const list = await s.lists.create(bob.id, { title: "close" });
      await s.lists.addMembers(bob.id, list.id, [alice.id]);
      await copy(a);
      const { posting } = withConsequences(a);
      const statusesBefore = Number((await a.port.get<{ n: number }>("SELECT statuses_count AS n FROM accounts WHERE id = ?", [alice.id]))!.n);

      const row = await posting.publish(await posting.prepare(alice.id, null, { text: "hello @carol" }));
      expect(await a.port.all("SELECT account_id FROM home_feed WHERE status_id = ? ORDER BY account_id", [row.id])).toEqual(
        [{ account_id: alice.id }, { account_id: bob.id }].sort((x, y) => x.account_id - y.account_id),
      );
      expect(await a.port.all("SELECT list_id FROM list_feed WHERE status_id = ?", [row.id])).toEqual([{ list_id: list.id }]);
      expect(await notificationsOf(a, carol.id)).toEqual([{ type: "mention", from: alice.id, status: row.id }]);
      expect(Number((await a.port.get<{ n: number }>("SELECT statuses_count AS n FROM accounts WHERE id = ?", [alice.id]))!.n)).toBe(statusesBefore + 1);

      // A direct message reaches only the mentioned (carol follows nobody: no feed), and opens her thread.
      const direct = await posting.publish(await posting.prepare(alice.id, null, { text: "@carol psst", visibility: "direct" }));
      expect(await a.port.all("SELECT account_id FROM home_feed WHERE status_id = ?", [direct.id])).toEqual([{ account_id: alice.id }]);
      expect((await a.port.all<{ account_id: number }>("SELECT account_id FROM account_conversations ORDER BY account_id")).map((r) => r.account_id)).toEqual([alice.id, carol.id].sort((x, y) => x - y));
    });

    test("a favourite counts and notifies, an unfavourite takes both back; a refused one changes nothing", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const status = await a.t.post(alice, { text: "like me" });
      await copy(a);
      const { actions } = withConsequences(a);
      const favourites = async () => Number((await a.port.get<{ n: number }>("SELECT favourites_count AS n FROM statuses WHERE id = ?", [status.id]))!.n);

      await actions.favourite(bob.id, status.id);
      expect(await favourites()).toBe(1);
      expect(await notificationsOf(a, alice.id)).toEqual([{ type: "favourite", from: bob.id, status: status.id }]);
      // Again: already favourited, neither counted nor notified twice.
      await actions.favourite(bob.id, status.id);
      expect(await favourites()).toBe(1);
      expect(await notificationsOf(a, alice.id)).toHaveLength(1);

      await actions.unfavourite(bob.id, status.id);
      expect(await favourites()).toBe(0);
      expect(await notificationsOf(a, alice.id)).toEqual([]);

      // An unknown status: 404, nothing counted or notified.
      const refused = await actions.favourite(bob.id, 999_999).then(
        () => null,
        (e: { status?: number }) => e,
      );
      expect(refused?.status).toBe(404);
      expect(await favourites()).toBe(0);
      expect(await notificationsOf(a, alice.id)).toEqual([]);
    });

    test("a poll's end notifies its author and its voters, once", async () => {
      const a = await arm.open();
      const alice = await a.mirror(await a.t.local("alice"));
      const bob = await a.mirror(await a.t.local("bob"));
      const carol = await a.mirror(await a.t.local("carol"));
      const status = await a.t.post(alice, { text: "which?", poll: { options: ["tea", "coffee"], expiresIn: 600 } });
      await copy(a);
      const { polls: pollService } = withConsequences(a);
      const poll = (await a.port.get<{ id: number }>("SELECT id FROM polls WHERE status_id = ?", [status.id]))!;
      await pollService.vote(bob.id, poll.id, ["0"]);
      await pollService.vote(carol.id, poll.id, ["1"]);

      a.t.clock.advance(600_000);
      await pollService.end(poll.id);
      await pollService.end(poll.id);
      for (const who of [alice, bob, carol]) expect(await notificationsOf(a, who.id)).toEqual([{ type: "poll", from: alice.id, status: status.id }]);
    });
  });
}
