import { afterEach, describe, expect, test } from "bun:test";
import { notificationRequests, notifications, statuses } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { EventBus } from "../../src/infra/events.ts";
import { NotificationService } from "../../src/services/notifications/notifications.ts";
import { NotificationPolicies } from "../../src/services/notifications/policy.ts";
import { closePortArms, portArms, type PortArm } from "../support/port-arms.ts";

/**
 * Notifications on the database port (issue 31): what the routes read and write (the flat and
 * grouped lists, a group, dismiss, clear, the policy, its requests accepted and dismissed) runs on
 * SQLite and on PostgreSQL. Their behaviour over HTTP is tested beside this file; this holds their
 * SQL on both databases. Creating a notification stays synchronous (a `within` listener, on the
 * arm's SQLite services): on PostgreSQL its rows are copied over, as the accounts are mirrored.
 */

afterEach(closePortArms);

async function copy(arm: PortArm, name: "statuses" | "notifications" | "notificationRequests") {
  if (arm.port.dialect !== "postgres") return;
  const rows = await arm.t.database.port.orm.select().from({ statuses, notifications, notificationRequests }[name]);
  if (rows.length) await arm.port.orm.insert(arm.port.tables[name]).values(rows as never).onConflictDoNothing();
}

const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as ApiError);
const count = async (arm: PortArm, table: string) => Number((await arm.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

async function family(a: PortArm) {
  const policies = new NotificationPolicies(a.port, a.t.ids, a.t.clock);
  const events = new EventBus(a.port);
  const merged: number[] = [];
  events.afterCommit("notifications.merged", (e) => void merged.push(e.accountId));
  const service = new NotificationService(a.port, a.t.ids, a.t.clock, a.t.services.moderation, events, policies);
  return { policies, service, merged };
}

for (const arm of portArms) {
  describe.skipIf(arm.skip)(`notifications on ${arm.name}`, () => {
    test("the flat and grouped lists, a notification, a group and its senders, dismissed and cleared; another's is 404 and changes nothing", async () => {
      const a = await arm.open();
      const rita = await a.mirror(await a.t.local("rita"));
      const bob = await a.mirror(await a.t.local("bob"));
      const carol = await a.mirror(await a.t.local("carol"));
      const dave = await a.mirror(await a.t.local("dave"));
      const status = await a.t.post(rita, { text: "hello" });
      const notify = a.t.services.notifications;
      const follow = (await notify.notify(rita.id, bob.id, "follow"))!;
      const favBob = (await notify.notify(rita.id, bob.id, "favourite", status.id))!;
      const favCarol = (await notify.notify(rita.id, carol.id, "favourite", status.id))!;
      const mention = await a.t.post(dave, { text: "@rita hi", visibility: "public" });
      await copy(a, "statuses");
      await copy(a, "notifications");
      const { service } = await family(a);

      const all = await service.list(rita.id, { page: { limit: 40 } });
      expect(all.map((n) => n.type)).toEqual(["mention", "favourite", "favourite", "follow"]);
      expect(all[0]).toMatchObject({ fromAccountId: dave.id, statusId: mention.id, filtered: false });
      expect((await service.list(rita.id, { page: { limit: 40 }, types: ["favourite", "nonsense"] })).map((n) => n.id)).toEqual([favCarol.id, favBob.id]);
      expect((await service.list(rita.id, { page: { limit: 40 }, excludeTypes: ["favourite", "mention"] })).map((n) => n.id)).toEqual([follow.id]);
      expect(await service.list(rita.id, { page: { limit: 40 }, types: ["nonsense"] })).toEqual([]);
      expect((await service.list(rita.id, { page: { limit: 40 }, fromAccountId: bob.id })).map((n) => n.id)).toEqual([favBob.id, follow.id]);
      expect((await service.list(rita.id, { page: { limit: 1, minId: follow.id } })).map((n) => n.id)).toEqual([favBob.id]);
      expect((await service.list(rita.id, { page: { limit: 2, maxId: favCarol.id } })).map((n) => n.id)).toEqual([favBob.id, follow.id]);
      expect(await service.get(rita.id, follow.id)).toEqual(follow);

      // Grouped: the two favourites of the status are one group, with both senders, newest first.
      const where = await service.filters(rita.id, {});
      if (where === "none") throw new Error("no filter expected");
      const groups = await service.groups.page(rita.id, { page: { limit: 40 }, where });
      expect(groups.map((g) => [g.key.split("-")[0], g.count, g.sampleAccountIds])).toEqual([
        ["ungrouped", 1, [dave.id]],
        ["favourite", 2, [carol.id, bob.id]],
        ["follow", 1, [bob.id]],
      ]);
      const favourites = groups[1]!;
      expect(favourites.page).toEqual({ minId: favBob.id, latestAt: favCarol.createdAt });
      expect(await service.groups.countAfter(rita.id, follow.id, 100, where)).toBe(2);
      expect((await service.groups.one(rita.id, favourites.key, where)).count).toBe(2);
      expect(await service.groups.accountIds(rita.id, favourites.key, where)).toEqual([carol.id, bob.id]);

      // Hidden senders (muted, notifications kept) leave the lists, flat and grouped; the rows stay.
      await a.t.services.moderation.mute(rita.id, dave.id, { notifications: false });
      expect((await service.list(rita.id, { page: { limit: 40 } })).map((n) => n.type)).toEqual(["favourite", "favourite", "follow"]);
      const hiding = await service.filters(rita.id, {});
      expect((await service.groups.page(rita.id, { page: { limit: 40 }, where: hiding === "none" ? undefined : hiding })).length).toBe(2);
      await a.t.services.moderation.unmute(rita.id, dave.id);

      // Bad input: another's notification or group, an unknown group key; nothing changes.
      expect((await rejection(service.get(bob.id, follow.id)))?.status).toBe(404);
      expect((await rejection(service.dismiss(bob.id, follow.id)))?.status).toBe(404);
      expect((await rejection(service.groups.one(bob.id, favourites.key, undefined)))?.status).toBe(404);
      expect((await rejection(service.groups.accountIds(rita.id, "ungrouped-nonsense", undefined)))?.status).toBe(404);
      await service.groups.dismiss(bob.id, favourites.key);
      expect(await count(a, "notifications")).toBe(4);

      await service.dismiss(rita.id, follow.id);
      expect((await rejection(service.get(rita.id, follow.id)))?.status).toBe(404);
      await service.groups.dismiss(rita.id, favourites.key);
      expect((await service.list(rita.id, { page: { limit: 40 } })).map((n) => n.id)).toEqual([all[0]!.id]);
      await service.clear(rita.id);
      expect(await service.list(rita.id, { page: { limit: 40 } })).toEqual([]);
      expect(await count(a, "notifications")).toBe(0);
    });

    test("the policy read and changed, a bad level refused with nothing changed; requests listed, accepted (regrouped) and dismissed", async () => {
      const a = await arm.open();
      const rita = await a.mirror(await a.t.local("rita"));
      const whisperer = await a.mirror(await a.t.local("whisperer"));
      const pest = await a.mirror(await a.t.local("pest"));
      // Private mentions from senders rita does not follow are held back by default; with
      // for_not_following, a favourite too (it opens no request, but its sender's takes it in).
      const own = await a.t.post(rita, { text: "mine" });
      await a.t.services.notificationPolicies.update(rita.id, { for_not_following: "filter" });
      await a.t.post(whisperer, { text: "@rita psst", visibility: "direct" });
      const favourite = (await a.t.services.notifications.notify(rita.id, whisperer.id, "favourite", own.id))!;
      expect(favourite).toMatchObject({ filtered: true, groupKey: null });
      await a.t.post(pest, { text: "@rita buy now", visibility: "direct" });
      await a.t.post(pest, { text: "@rita buy now!", visibility: "direct" });
      await copy(a, "statuses");
      await copy(a, "notifications");
      await copy(a, "notificationRequests");
      const { policies, service, merged } = await family(a);

      expect(await policies.get(rita.id)).toMatchObject({ for_private_mentions: "filter", for_new_accounts: "accept" });
      expect(await policies.update(rita.id, { for_not_following: "filter" })).toMatchObject({ for_not_following: "filter", for_private_mentions: "filter" });
      expect(await policies.get(rita.id)).toMatchObject({ for_not_following: "filter" });
      const refused = await rejection(policies.update(rita.id, { for_new_accounts: "maybe" }));
      expect({ status: refused?.status, message: refused?.message }).toEqual({ status: 422, message: "Validation failed: For new accounts is not included in the list" });
      expect(await policies.get(rita.id)).toMatchObject({ for_not_following: "filter", for_new_accounts: "accept" });
      expect(await count(a, "notification_policies")).toBe(1);

      expect(await policies.summary(rita.id)).toEqual({ pending_requests_count: 2, pending_notifications_count: 3 });
      const requests = await policies.listRequests(rita.id, { limit: 40 });
      expect(requests.map((r) => [r.fromAccountId, r.notificationsCount])).toEqual([
        [pest.id, 2],
        [whisperer.id, 1],
      ]);
      expect((await policies.listRequests(rita.id, { limit: 1, minId: requests[1]!.id })).map((r) => r.id)).toEqual([requests[0]!.id]);
      expect(await policies.request(rita.id, requests[1]!.id)).toEqual(requests[1]!);
      expect(await service.list(rita.id, { page: { limit: 40 } })).toEqual([]);
      expect((await service.list(rita.id, { page: { limit: 40 }, includeFiltered: true })).length).toBe(4);

      // Bad input: another's request, an unknown one; the batch form skips them.
      expect((await rejection(policies.request(whisperer.id, requests[0]!.id)))?.status).toBe(404);
      expect((await rejection(service.acceptRequest(whisperer.id, requests[0]!.id)))?.status).toBe(404);
      expect((await rejection(service.dismissRequest(rita.id, 404)))?.status).toBe(404);
      await service.acceptRequest(rita.id, 404, { ignoreMissing: true });
      expect(await count(a, "notification_requests")).toBe(2);
      expect(merged).toEqual([]);

      await service.acceptRequest(rita.id, requests[1]!.id);
      expect(merged).toEqual([rita.id]);
      expect((await service.list(rita.id, { page: { limit: 40 } })).map((n) => [n.type, n.fromAccountId, n.filtered, n.groupKey])).toEqual([
        ["favourite", whisperer.id, false, `favourite-${own.id}-${Math.floor(favourite.createdAt / 3_600_000)}`],
        ["mention", whisperer.id, false, null],
      ]);
      expect(await count(a, "notification_permissions")).toBe(1);
      await service.dismissRequest(rita.id, requests[0]!.id);
      expect(await policies.listRequests(rita.id, { limit: 40 })).toEqual([]);
      expect(await policies.summary(rita.id)).toEqual({ pending_requests_count: 0, pending_notifications_count: 0 });
      expect((await service.list(rita.id, { page: { limit: 40 }, includeFiltered: true })).map((n) => n.fromAccountId)).toEqual([whisperer.id, whisperer.id]);
    });
  });
}
