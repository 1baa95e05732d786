import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { notificationPolicies, notifications, type AccountRow } from "../../src/db/schema.ts";
import { ApiError } from "../../src/errors.ts";
import type { Policy } from "../../src/services/notifications/policy.ts";
import { startTestServices, type TestServices } from "../support/services.ts";

/**
 * Mastodon 4.3's notification policy (NotifyService's FilterCondition and DropCondition), asked
 * of the services as the write paths ask it, over a real database and without a server: the
 * rule of src/services/notifications/policy.ts where it lives.
 */

const DAY = 86_400_000;
const DEFAULTS: Policy = { for_not_following: "accept", for_not_followers: "accept", for_new_accounts: "accept", for_private_mentions: "filter", for_limited_accounts: "filter" };

describe("the notification policy", () => {
  let t: TestServices;
  /** The recipient, and senders by their relationship to her. */
  let rita: AccountRow;
  let friend: AccountRow; // rita follows her
  let fan: AccountRow; // follows rita, for a month now
  let newFan: AccountRow; // follows rita since today
  let stranger: AccountRow; // neither, an account of a month
  let newbie: AccountRow; // neither, an account of today
  let newFriend: AccountRow; // an account of today that rita follows

  const policies = () => t.services.notificationPolicies;
  const setPolicy = (changes: Partial<Policy>) => policies().update(rita.id, { ...DEFAULTS, ...changes });
  const decide = (from: AccountRow, type = "favourite", statusId: number | null = null) => policies().decide(rita.id, from.id, type, statusId);
  /** Rita's notifications from `from`, as stored: type and whether the policy held it back. */
  const stored = (from: AccountRow) =>
    t.database.port.orm
      .select({ type: notifications.type, filtered: notifications.filtered })
      .from(notifications)
      .where(and(eq(notifications.accountId, rita.id), eq(notifications.fromAccountId, from.id)))
      .orderBy(notifications.id);

  beforeAll(async () => {
    t = await startTestServices();
    const { follows } = t.services;
    [rita, friend, fan, stranger] = (await Promise.all(["rita", "friend", "fan", "stranger"].map((n) => t.local(n)))) as [AccountRow, AccountRow, AccountRow, AccountRow];
    await follows.follow(rita.id, friend.id, {});
    await follows.follow(fan.id, rita.id, {});
    t.clock.advance(31 * DAY);
    [newFan, newbie, newFriend] = (await Promise.all(["newfan", "newbie", "newfriend"].map((n) => t.local(n)))) as [AccountRow, AccountRow, AccountRow];
    await follows.follow(newFan.id, rita.id, {});
    await follows.follow(rita.id, newFriend.id, {});
  });
  afterAll(() => t?.close());

  test("each rule holds back what it names, and only that", async () => {
    const cases: [Partial<Policy>, Record<string, AccountRow>, Record<string, AccountRow>][] = [
      // for_not_following: senders rita does not follow.
      [{ for_not_following: "filter" }, { stranger, fan, newbie }, { friend, newFriend }],
      // for_not_followers: senders who do not follow rita, or have for less than three days.
      [{ for_not_followers: "filter" }, { stranger, newFan, friend, newbie }, { fan }],
      // for_new_accounts: accounts of less than 30 days, unless rita follows them.
      [{ for_new_accounts: "filter" }, { newbie, newFan }, { stranger, fan, friend, newFriend }],
    ];
    for (const [policy, held, passed] of cases) {
      await setPolicy(policy);
      for (const [name, from] of Object.entries(held)) expect([policy, name, await decide(from)]).toEqual([policy, name, "filter"]);
      for (const [name, from] of Object.entries(passed)) expect([policy, name, await decide(from)]).toEqual([policy, name, "accept"]);
    }
  });

  test("a follower of three days is a follower", async () => {
    await setPolicy({ for_not_followers: "filter" });
    expect(await decide(newFan)).toBe("filter");
    t.clock.advance(3 * DAY + 1);
    expect(await decide(newFan)).toBe("accept");
  });

  test("drop is filter's rule with the notification thrown away; filtered ones are stored, held back", async () => {
    await setPolicy({ for_not_following: "drop", for_new_accounts: "filter" });
    expect(await decide(stranger)).toBe("drop");
    expect(await decide(friend)).toBe("accept");
    expect(await decide(newFriend)).toBe("accept");
    const { notifications: service } = t.services;
    expect(await service.notify(rita.id, stranger.id, "follow")).toBeNull();
    expect(await stored(stranger)).toEqual([]);
    await setPolicy({ for_not_following: "filter" });
    expect(await service.notify(rita.id, stranger.id, "follow")).toMatchObject({ filtered: true });
    expect(await stored(stranger)).toEqual([{ type: "follow", filtered: true }]);
    expect(await service.notify(rita.id, friend.id, "follow")).toMatchObject({ filtered: false });
    expect(await stored(friend)).toEqual([{ type: "follow", filtered: false }]);
  });

  test("private mentions (held back by default) are those not answering rita, from senders she does not follow", async () => {
    await setPolicy({});
    const own = await t.post(rita, { text: "anyone?", visibility: "public" });
    const privately = await t.post(stranger, { text: "@rita a secret", visibility: "direct" });
    const answering = await t.post(stranger, { text: "@rita an answer", visibility: "direct", inReplyToId: String(own.id) });
    const publicly = await t.post(stranger, { text: "@rita hello all", visibility: "public" });
    const fromFriend = await t.post(friend, { text: "@rita between us", visibility: "direct" });
    expect(await decide(stranger, "mention", privately.id)).toBe("filter");
    expect(await decide(stranger, "mention", answering.id)).toBe("accept");
    expect(await decide(stranger, "mention", publicly.id)).toBe("accept");
    expect(await decide(friend, "mention", fromFriend.id)).toBe("accept");
    // Only mentions are private mentions: a favourite of the same status passes.
    expect(await decide(stranger, "favourite", privately.id)).toBe("accept");
  });

  test("what is not filterable (polls, statuses, edits) and one's own actions always pass", async () => {
    await setPolicy({ for_not_following: "drop", for_not_followers: "drop", for_new_accounts: "drop", for_private_mentions: "drop" });
    for (const type of ["poll", "status", "update"]) expect([type, await decide(newbie, type)]).toEqual([type, "accept"]);
    expect(await policies().decide(rita.id, rita.id, "favourite", null)).toBe("accept");
    expect(await decide(newbie, "favourite")).toBe("drop");
  });

  test("a held-back mention opens its sender's request; accepting it lets the sender through from then on", async () => {
    await setPolicy({});
    const sender = await t.local("whisperer");
    await t.post(sender, { text: "@rita psst", visibility: "direct" });
    expect(await stored(sender)).toEqual([{ type: "mention", filtered: true }]);
    const [request] = (await policies().listRequests(rita.id, { limit: 40 })).filter((r) => r.fromAccountId === sender.id);
    expect(request).toMatchObject({ fromAccountId: sender.id, notificationsCount: 1 });
    await t.services.notifications.acceptRequest(rita.id, request!.id);
    expect(await stored(sender)).toEqual([{ type: "mention", filtered: false }]);
    expect((await policies().listRequests(rita.id, { limit: 40 })).filter((r) => r.fromAccountId === sender.id)).toEqual([]);
    await setPolicy({ for_not_following: "drop" });
    expect(await decide(sender)).toBe("accept");
    const again = await t.post(sender, { text: "@rita psst again", visibility: "direct" });
    expect(await decide(sender, "mention", again.id)).toBe("accept");
    expect(await stored(sender)).toEqual([
      { type: "mention", filtered: false },
      { type: "mention", filtered: false },
    ]);
  });

  test("dismissing a request deletes what it held, and the sender is still held back", async () => {
    await setPolicy({});
    const sender = await t.local("pest");
    await t.post(sender, { text: "@rita buy now", visibility: "direct" });
    const [request] = (await policies().listRequests(rita.id, { limit: 40 })).filter((r) => r.fromAccountId === sender.id);
    await t.services.notifications.dismissRequest(rita.id, request!.id);
    expect(await stored(sender)).toEqual([]);
    const next = await t.post(sender, { text: "@rita buy now!", visibility: "direct" });
    expect(await decide(sender, "mention", next.id)).toBe("filter");
  });

  test("a level that is not accept, filter or drop is Mastodon's 422, and the policy is unchanged", async () => {
    await setPolicy({ for_not_following: "filter" });
    const row = async () => (await t.database.port.orm.select().from(notificationPolicies).where(eq(notificationPolicies.accountId, rita.id)).limit(1))[0];
    const before = await row();
    let refused: unknown;
    try {
      await policies().update(rita.id, { for_not_following: "ignore", for_new_accounts: "accept", for_private_mentions: "maybe" });
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(ApiError);
    const { status, message } = refused as ApiError;
    expect({ status, message }).toEqual({ status: 422, message: "Validation failed: For not following is not included in the list, For private mentions is not included in the list" });
    expect(await row()).toEqual(before!);
    expect(await policies().get(rita.id)).toEqual({ ...DEFAULTS, for_not_following: "filter" });
  });
});
