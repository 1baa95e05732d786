import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Grouped notifications (Mastodon 4.3's /api/v2/notifications): favourites and boosts of one
// status, and follows, within 12 hours make one group.
let server: TestServer;
let alice: TestUser;
let fans: TestUser[];
let post: { id: string };

const HOUR = 3600 * 1000;
const count = async () => Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM notifications"))!.n);

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  fans = [];
  for (const name of ["fan1", "fan2", "fan3"]) fans.push(await createUser(server, name));
  post = await postStatus(alice, { status: "a post to like" });
  for (const fan of fans) expect((await fan.client.post(`/api/v1/statuses/${post.id}/favourite`)).status).toBe(200);
  for (const fan of fans.slice(0, 2)) expect((await fan.client.post(`/api/v1/statuses/${post.id}/reblog`)).status).toBe(200);
  for (const fan of fans.slice(1)) expect((await fan.client.post(`/api/v1/accounts/${alice.id}/follow`)).status).toBe(200);
  await postStatus(fans[0]!, { status: "@alice a mention" });
});
afterAll(() => server.close());

describe("GET /api/v2/notifications", () => {
  test("groups favourites, boosts and follows; a mention stands alone; accounts and statuses side-loaded once, in Mastodon's shapes", async () => {
    const res = await alice.client.get("/api/v2/notifications");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["accounts", "statuses", "notification_groups"]);
    const groups = res.body.notification_groups as any[];
    expect(groups.map((g) => [g.type, g.notifications_count])).toEqual([["mention", 1], ["follow", 2], ["reblog", 2], ["favourite", 3]]);
    const [mention, follow, reblog, favourite] = groups;
    expect(Object.keys(favourite)).toEqual(["group_key", "notifications_count", "type", "most_recent_notification_id", "page_min_id", "page_max_id", "latest_page_notification_at", "sample_account_ids", "status_id"]);
    expect(Object.keys(follow)).not.toContain("status_id");
    expect(favourite.group_key).toMatch(new RegExp(`^favourite-${post.id}-\\d+$`));
    expect(reblog.group_key).toMatch(new RegExp(`^reblog-${post.id}-\\d+$`));
    expect(follow.group_key).toMatch(/^follow-\d+$/);
    expect(mention.group_key).toBe(`ungrouped-${mention.most_recent_notification_id}`);
    expect(favourite.sample_account_ids).toEqual([fans[2]!.id, fans[1]!.id, fans[0]!.id]); // newest first
    expect(favourite.status_id).toBe(post.id);
    expect(typeof favourite.most_recent_notification_id).toBe("string");
    expect(favourite.page_max_id).toBe(favourite.most_recent_notification_id);
    // This page is the last (4 groups of 40): every group reaches back to its oldest notification.
    expect(BigInt(favourite.page_min_id) < BigInt(favourite.page_max_id)).toBe(true);
    expect(BigInt(follow.page_min_id) < BigInt(follow.page_max_id)).toBe(true);
    // A full page (limit 4) ends at its oldest group's representative: the favourites' range
    // begins at their newest, the rest being for the next page.
    const full = (await alice.client.get("/api/v2/notifications?limit=4")).body.notification_groups as any[];
    expect(full[3].page_min_id).toBe(full[3].page_max_id);
    expect(full[1].page_min_id).toBe(follow.page_min_id);
    expect(new Date(favourite.latest_page_notification_at).toISOString()).toBe(favourite.latest_page_notification_at);
    // Every account named once, in full; every status once.
    expect((res.body.accounts as any[]).map((a) => a.id).sort()).toEqual(fans.map((f) => f.id).sort());
    expect(res.body.accounts[0]).toHaveProperty("followers_count");
    expect((res.body.statuses as any[]).map((s) => s.id).sort()).toEqual([post.id, mention.status_id].sort());
    // The flat list carries the same keys.
    const flat = (await alice.client.get("/api/v1/notifications")).body as any[];
    expect(new Set(flat.map((n) => n.group_key))).toEqual(new Set(groups.map((g) => g.group_key)));
  });

  test("grouped_types limits the grouping; types and exclude_types filter; expand_accounts=partial_avatars sends the other senders as avatars", async () => {
    const onlyFollows = (await alice.client.get("/api/v2/notifications?grouped_types[]=follow")).body.notification_groups as any[];
    expect(onlyFollows.map((g) => g.type)).toEqual(["mention", "follow", "reblog", "reblog", "favourite", "favourite", "favourite"]);
    expect(onlyFollows.filter((g) => g.type === "favourite").every((g) => g.group_key.startsWith("ungrouped-") && g.notifications_count === 1)).toBe(true);
    const favs = (await alice.client.get("/api/v2/notifications?types[]=favourite")).body.notification_groups as any[];
    expect(favs.map((g) => g.type)).toEqual(["favourite"]);
    const noFavs = (await alice.client.get("/api/v2/notifications?exclude_types[]=favourite&exclude_types[]=reblog")).body.notification_groups as any[];
    expect(noFavs.map((g) => g.type)).toEqual(["mention", "follow"]);

    const partial = (await alice.client.get("/api/v2/notifications?types[]=favourite&expand_accounts=partial_avatars")).body;
    expect(Object.keys(partial)).toEqual(["accounts", "partial_accounts", "statuses", "notification_groups"]);
    // fan3 is the favourites' newest sender: in full; the others as avatars only.
    expect((partial.accounts as any[]).map((a) => a.id)).toEqual([fans[2]!.id]);
    expect((partial.partial_accounts as any[]).map((a) => a.id)).toEqual([fans[1]!.id, fans[0]!.id]);
    expect(Object.keys(partial.partial_accounts[0])).toEqual(["id", "acct", "locked", "bot", "url", "avatar", "avatar_static"]);
    const bad = await alice.client.get("/api/v2/notifications?expand_accounts=everything");
    expect([bad.status, bad.body]).toEqual([400, { error: "Invalid value for 'expand_accounts': 'everything', allowed values are 'full' and 'partial_avatars'" }]);
  });

  test("pages by groups with Link headers; max_id and min_id continue where the last page ended", async () => {
    const first = await alice.client.get("/api/v2/notifications?limit=2");
    expect((first.body.notification_groups as any[]).map((g) => g.type)).toEqual(["mention", "follow"]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1];
    expect(next).toContain("max_id=");
    expect(next).toContain("limit=2");
    const second = await alice.client.get(next!.replace(server.base, ""));
    // As in Mastodon, a group met again on a later page comes again, counted within that page's reach.
    const again = second.body.notification_groups as any[];
    expect(again.map((g) => [g.type, g.notifications_count, g.sample_account_ids])).toEqual([["follow", 1, [fans[1]!.id]], ["reblog", 2, [fans[1]!.id, fans[0]!.id]]]);
    // Walking on: a page with fewer groups than asked is the last, and reaches back to the oldest
    // notification of its groups, as Mastodon's (the favourites met again there: fan2's and fan1's).
    let page = second;
    let groupsOfPage: any[] = again;
    while (groupsOfPage.length === 2) {
      page = await alice.client.get(/<([^>]+)>; rel="next"/.exec(page.headers.get("link") ?? "")![1]!.replace(server.base, ""));
      groupsOfPage = page.body.notification_groups as any[];
    }
    const favIds = ((await alice.client.get("/api/v1/notifications?types[]=favourite")).body as any[]).map((n) => n.id);
    expect(groupsOfPage.map((g) => [g.type, g.notifications_count, g.page_min_id, g.page_max_id])).toEqual([["favourite", 2, favIds[2], favIds[1]]]);
    // And it links only back: there is nothing older that it does not show already.
    expect(page.headers.get("link")).toContain('rel="prev"');
    expect(page.headers.get("link")).not.toContain('rel="next"');
    const whole = await alice.client.get("/api/v2/notifications");
    expect([whole.body.notification_groups.length, /rel="next"/.test(whole.headers.get("link") ?? "")]).toEqual([4, false]);
    const prev = /<([^>]+)>; rel="prev"/.exec(second.headers.get("link") ?? "")?.[1];
    const back = await alice.client.get(prev!.replace(server.base, ""));
    expect((back.body.notification_groups as any[]).map((g) => g.type)).toEqual(["mention", "follow"]);
    const empty = await alice.client.get(`/api/v2/notifications?max_id=1`);
    expect([empty.body, empty.headers.get("link")]).toEqual([{ accounts: [], statuses: [], notification_groups: [] }, null]);
  });

  test("a group spans at most 12 hours from its first notification: a favourite after that begins a new group", async () => {
    const bob = await createUser(server, "bob_late");
    const own = await postStatus(alice, { status: "another post" });
    const first = await createUser(server, "early_fan");
    await first.client.post(`/api/v1/statuses/${own.id}/favourite`);
    server.clock.advance(11 * HOUR);
    await bob.client.post(`/api/v1/statuses/${own.id}/favourite`);
    let favs = ((await alice.client.get("/api/v2/notifications?types[]=favourite")).body.notification_groups as any[]).filter((g) => g.status_id === own.id);
    expect(favs.map((g) => g.notifications_count)).toEqual([2]);
    server.clock.advance(2 * HOUR);
    const late = await createUser(server, "late_fan");
    await late.client.post(`/api/v1/statuses/${own.id}/favourite`);
    favs = ((await alice.client.get("/api/v2/notifications?types[]=favourite")).body.notification_groups as any[]).filter((g) => g.status_id === own.id);
    expect(favs.map((g) => g.notifications_count)).toEqual([1, 2]);
    expect(favs[0].group_key).not.toBe(favs[1].group_key);
  });
});

describe("one group: show, accounts, dismiss, unread_count", () => {
  test("GET /:group_key gives the whole group without page fields; /accounts its senders newest first; ungrouped-<id> works too; unknown 404", async () => {
    const groups = (await alice.client.get("/api/v2/notifications")).body.notification_groups as any[];
    const follow = groups.find((g) => g.type === "follow");
    const one = await alice.client.get(`/api/v2/notifications/${follow.group_key}`);
    expect(one.status).toBe(200);
    expect(one.body.notification_groups).toEqual([{ group_key: follow.group_key, notifications_count: 2, type: "follow", most_recent_notification_id: follow.most_recent_notification_id, sample_account_ids: [fans[2]!.id, fans[1]!.id] }]);
    const accounts = await alice.client.get(`/api/v2/notifications/${follow.group_key}/accounts`);
    expect((accounts.body as any[]).map((a) => a.id)).toEqual([fans[2]!.id, fans[1]!.id]);
    const mention = groups.find((g) => g.type === "mention");
    expect((await alice.client.get(`/api/v2/notifications/${mention.group_key}`)).body.notification_groups[0].type).toBe("mention");
    for (const path of ["/api/v2/notifications/follow-1", "/api/v2/notifications/ungrouped-999", "/api/v2/notifications/ungrouped-x/accounts"]) {
      const res = await alice.client.get(path);
      expect([path, res.status, res.body]).toEqual([path, 404, { error: "Record not found" }]);
    }
    // Another account's group is not found either.
    expect((await fans[0]!.client.get(`/api/v2/notifications/${follow.group_key}`)).status).toBe(404);
  });

  test("unread_count counts groups after the notifications marker", async () => {
    expect((await alice.client.get("/api/v2/notifications/unread_count")).body.count).toBeGreaterThanOrEqual(4);
    const groups = (await alice.client.get("/api/v2/notifications")).body.notification_groups as any[];
    const reblog = groups.find((g) => g.type === "reblog");
    await alice.client.post("/api/v1/markers", { json: { notifications: { last_read_id: reblog.most_recent_notification_id } } });
    const after = groups.slice(0, groups.indexOf(reblog)).length;
    expect((await alice.client.get("/api/v2/notifications/unread_count")).body).toEqual({ count: after });
  });

  test("dismiss removes the whole group (another account's dismiss changes nothing); errors: no token 401, read-only token 403", async () => {
    const groups = (await alice.client.get("/api/v2/notifications")).body.notification_groups as any[];
    const reblog = groups.find((g) => g.type === "reblog");
    const before = await count();
    expect((await fans[0]!.client.post(`/api/v2/notifications/${reblog.group_key}/dismiss`)).body).toEqual({});
    expect(await count()).toBe(before);
    const readOnly = await createUser(server, "reader", { scopes: "read" });
    const denied = await readOnly.client.post(`/api/v2/notifications/${reblog.group_key}/dismiss`);
    expect([denied.status, denied.body]).toEqual([403, { error: "This action is outside the authorized scopes" }]);
    const anon = await new Client(server.base).get("/api/v2/notifications");
    expect([anon.status, anon.body]).toEqual([401, { error: "The access token is invalid" }]);
    expect(await count()).toBe(before);
    expect((await alice.client.post(`/api/v2/notifications/${reblog.group_key}/dismiss`)).body).toEqual({});
    expect(await count()).toBe(before - 2);
    expect((await alice.client.get(`/api/v2/notifications/${reblog.group_key}`)).status).toBe(404);
  });

  test("masto.js reads the grouped list (a real client's v2 types)", async () => {
    const masto = createRestAPIClient({ url: server.base, accessToken: alice.token });
    const page = await masto.v2.notifications.list({ limit: 10 });
    expect(page.notificationGroups.length).toBeGreaterThan(0);
    const follow = page.notificationGroups.find((g) => g.type === "follow")!;
    expect(follow.sampleAccountIds).toHaveLength(2);
    expect(page.accounts.find((a) => a.id === follow.sampleAccountIds[0])?.username).toBe("fan3");
    const policy = await masto.v2.notifications.policy.fetch();
    expect(policy.forNotFollowing).toBe("accept");
  });
});

describe("POST /api/v2/notifications/clear", () => {
  test("clears every notification of the caller, and only the caller's; a read-only token is 403", async () => {
    const carla = await createUser(server, "carla");
    await fans[0]!.client.post(`/api/v1/accounts/${carla.id}/follow`);
    const before = await count();
    const readOnly = await createUser(server, "clear_reader", { scopes: "read" });
    const denied = await readOnly.client.post("/api/v2/notifications/clear");
    expect([denied.status, denied.body]).toEqual([403, { error: "This action is outside the authorized scopes" }]);
    expect((await carla.client.post("/api/v2/notifications/clear")).body).toEqual({});
    expect((await carla.client.get("/api/v2/notifications")).body.notification_groups).toEqual([]);
    expect(await count()).toBe(before - 1);
  });
});
