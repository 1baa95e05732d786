import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { SseClient } from "../support/streams.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Notification policies and requests (Mastodon 4.3): what the policy filters waits per sender.
let server: TestServer;
let alice: TestUser;
let friend: TestUser; // alice follows friend

const DAY = 24 * 3600 * 1000;
const flatTypes = async (user: TestUser, query = "") => ((await user.client.get(`/api/v1/notifications${query}`)).body as any[]).map((n) => `${n.type}:${n.account.username}`);
const notificationsFrom = async (accountId: string) =>
  Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM notifications WHERE from_account_id = ?", [Number(accountId)]))!.n);

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  friend = await createUser(server, "friend");
  expect((await alice.client.post(`/api/v1/accounts/${friend.id}/follow`)).status).toBe(200);
});
afterAll(() => server.close());

describe("the policy", () => {
  test("v2: Mastodon's defaults and summary; PATCH sets what it is given; a value not accept/filter/drop is 422 and changes nothing", async () => {
    const res = await alice.client.get("/api/v2/notifications/policy");
    expect(res.body).toEqual({
      for_not_following: "accept",
      for_not_followers: "accept",
      for_new_accounts: "accept",
      for_private_mentions: "filter",
      for_limited_accounts: "filter",
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    const set = await alice.client.patch("/api/v2/notifications/policy", { json: { for_not_following: "filter" } });
    expect(set.body).toMatchObject({ for_not_following: "filter", for_not_followers: "accept", for_private_mentions: "filter" });
    const bad = await alice.client.patch("/api/v2/notifications/policy", { json: { for_not_followers: "maybe", for_new_accounts: "drop" } });
    expect([bad.status, bad.body]).toEqual([422, { error: "Validation failed: For not followers is not included in the list" }]);
    expect((await alice.client.get("/api/v2/notifications/policy")).body).toMatchObject({ for_not_followers: "accept", for_new_accounts: "accept" });
    // v1 reads and writes the same policy as booleans.
    expect((await alice.client.get("/api/v1/notifications/policy")).body).toEqual({
      filter_not_following: true,
      filter_not_followers: false,
      filter_new_accounts: false,
      filter_private_mentions: true,
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
  });

  test("filter: a stranger's mention and favourite wait in a request (not listed, not grouped, counted); a followed account's come through", async () => {
    const stranger = await createUser(server, "stranger");
    const own = await postStatus(alice, { status: "alice writes" });
    const mention = await postStatus(stranger, { status: "@alice hello from a stranger" });
    await stranger.client.post(`/api/v1/statuses/${own.id}/favourite`);
    await postStatus(friend, { status: "@alice hello from a friend" });
    expect(await flatTypes(alice)).toEqual(["mention:friend"]);
    expect(((await alice.client.get("/api/v2/notifications")).body.notification_groups as any[]).map((g) => g.type)).toEqual(["mention"]);
    // Asked for, or by sender, they are there, marked filtered.
    const held = (await alice.client.get(`/api/v1/notifications?account_id=${stranger.id}`)).body as any[];
    expect(held.map((n) => [n.type, n.filtered, n.group_key.startsWith("ungrouped-")])).toEqual([["favourite", true, true], ["mention", true, true]]);
    expect(await flatTypes(alice, "?include_filtered=true")).toEqual(["mention:friend", "favourite:stranger", "mention:stranger"]);

    const requests = await alice.client.get("/api/v1/notifications/requests");
    expect(requests.status).toBe(200);
    expect(requests.body).toHaveLength(1);
    const [request] = requests.body;
    expect(Object.keys(request)).toEqual(["id", "created_at", "updated_at", "notifications_count", "account", "last_status"]);
    // Requests count held mentions (as Mastodon's); the favourite waits too, without counting.
    expect([request.notifications_count, request.account.id, request.last_status.id]).toEqual(["1", stranger.id, mention.id]);
    expect((await alice.client.get(`/api/v1/notifications/requests/${request.id}`)).body).toEqual(request);
    expect((await alice.client.get("/api/v2/notifications/policy")).body.summary).toEqual({ pending_requests_count: 1, pending_notifications_count: 1 });

    // Accepted: they come into the list (the favourite with its group key), and the next one comes straight in.
    expect((await alice.client.post(`/api/v1/notifications/requests/${request.id}/accept`)).body).toEqual({});
    expect(await flatTypes(alice)).toEqual(["mention:friend", "favourite:stranger", "mention:stranger"]);
    const favourite = ((await alice.client.get("/api/v1/notifications")).body as any[]).find((n) => n.type === "favourite");
    expect(favourite.group_key).toMatch(new RegExp(`^favourite-${own.id}-\\d+$`));
    expect(favourite).not.toHaveProperty("filtered");
    expect((await alice.client.get("/api/v1/notifications/requests")).body).toEqual([]);
    await postStatus(stranger, { status: "@alice again" });
    expect((await flatTypes(alice))[0]).toBe("mention:stranger");
    expect((await alice.client.get("/api/v1/notifications/requests/merged")).body).toEqual({ merged: true });
  });

  test("a request counts what it still holds: a dismissed notification or a deleted status lowers it, and at none it is gone", async () => {
    const noisy = await createUser(server, "noisy");
    const first = await postStatus(noisy, { status: "@alice one" });
    await postStatus(noisy, { status: "@alice two" });
    const request = ((await alice.client.get("/api/v1/notifications/requests")).body as any[]).find((r) => r.account.id === noisy.id);
    expect(request.notifications_count).toBe("2");
    const held = (await alice.client.get(`/api/v1/notifications?account_id=${noisy.id}`)).body as any[];
    const second = held.find((n) => n.status.id !== first.id);
    expect((await alice.client.post(`/api/v1/notifications/${second.id}/dismiss`)).status).toBe(200);
    expect((await alice.client.get(`/api/v1/notifications/requests/${request.id}`)).body.notifications_count).toBe("1");
    expect((await noisy.client.delete(`/api/v1/statuses/${first.id}`)).status).toBe(200);
    const gone = await alice.client.get(`/api/v1/notifications/requests/${request.id}`);
    expect([gone.status, gone.body]).toEqual([404, { error: "Record not found" }]);
    expect(((await alice.client.get("/api/v1/notifications/requests")).body as any[]).some((r) => r.account.id === noisy.id)).toBe(false);
    expect((await alice.client.get("/api/v2/notifications/policy")).body.summary).toEqual({ pending_requests_count: 0, pending_notifications_count: 0 });
  });

  test("dismissing a request deletes what it held; the batch forms skip ids that are not the viewer's", async () => {
    const pest = await createUser(server, "pest");
    await postStatus(pest, { status: "@alice buy my stuff" });
    await postStatus(pest, { status: "@alice really" });
    const [request] = (await alice.client.get("/api/v1/notifications/requests")).body;
    expect(request.notifications_count).toBe("2");
    expect(await notificationsFrom(pest.id)).toBe(2);
    // Someone else cannot see, accept or dismiss it.
    for (const [method, path] of [["get", `/api/v1/notifications/requests/${request.id}`], ["post", `/api/v1/notifications/requests/${request.id}/accept`], ["post", `/api/v1/notifications/requests/${request.id}/dismiss`]] as const) {
      const res = await friend.client[method](path);
      expect([path, res.status, res.body]).toEqual([path, 404, { error: "Record not found" }]);
    }
    expect((await friend.client.post("/api/v1/notifications/requests/dismiss", { json: { id: [request.id] } })).body).toEqual({});
    expect((await alice.client.get("/api/v1/notifications/requests")).body).toHaveLength(1);
    expect((await alice.client.post("/api/v1/notifications/requests/dismiss", { json: { id: [request.id, "12345"] } })).body).toEqual({});
    expect((await alice.client.get("/api/v1/notifications/requests")).body).toEqual([]);
    expect(await notificationsFrom(pest.id)).toBe(0);
    const missing = await alice.client.post("/api/v1/notifications/requests/999/accept");
    expect([missing.status, missing.body]).toEqual([404, { error: "Record not found" }]);
  });

  test("drop: nothing is kept; private mentions from strangers are filtered by default unless they answer the recipient; new followers count as not following for 3 days", async () => {
    await alice.client.patch("/api/v2/notifications/policy", { json: { for_not_following: "drop", for_private_mentions: "filter" } });
    const spammer = await createUser(server, "spammer");
    await postStatus(spammer, { status: "@alice dropped" });
    expect(await notificationsFrom(spammer.id)).toBe(0);

    await alice.client.patch("/api/v2/notifications/policy", { json: { for_not_following: "accept", for_not_followers: "filter" } });
    const dm = await createUser(server, "dmer");
    await dm.client.post(`/api/v1/accounts/${alice.id}/follow`); // a follower of a moment ago
    await postStatus(dm, { status: "@alice psst", visibility: "direct" });
    expect((await flatTypes(alice)).filter((t) => t.endsWith(":dmer"))).toEqual([]);
    server.clock.advance(3 * DAY + 1000);
    await postStatus(dm, { status: "@alice three days on" });
    expect((await flatTypes(alice))[0]).toBe("mention:dmer");

    await alice.client.patch("/api/v2/notifications/policy", { json: { for_not_followers: "accept" } });
    const mine = await postStatus(alice, { status: "a question for anyone" });
    const answerer = await createUser(server, "answerer");
    await postStatus(answerer, { status: "@alice a private answer", visibility: "direct", in_reply_to_id: mine.id });
    await postStatus(answerer, { status: "@alice a private cold call", visibility: "direct" });
    expect((await flatTypes(alice)).filter((t) => t.endsWith(":answerer"))).toEqual(["mention:answerer"]);
    const request = ((await alice.client.get("/api/v1/notifications/requests")).body as any[]).find((r) => r.account.id === answerer.id);
    expect(request.notifications_count).toBe("1");
  });

  test("accepting a request tells the owner's notification streams notifications_merged (payload 1), as Mastodon's worker, so clients reload", async () => {
    await alice.client.patch("/api/v2/notifications/policy", { json: { for_not_following: "filter", for_not_followers: "accept", for_private_mentions: "filter" } });
    const caller = await createUser(server, "caller");
    await postStatus(caller, { status: "@alice hello?" });
    const request = ((await alice.client.get("/api/v1/notifications/requests")).body as any[]).find((r) => r.account.id === caller.id);
    const user = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: alice.token });
    const notes = await SseClient.open(`${server.base}/api/v1/streaming/user/notification`, { token: alice.token });
    const other = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: friend.token });
    try {
      expect((await alice.client.post(`/api/v1/notifications/requests/${request.id}/accept`)).body).toEqual({});
      for (const stream of [user, notes]) expect((await stream.waitFor((e) => e.event === "notifications_merged")).data).toBe("1");
      expect(other.events.filter((e) => e.event === "notifications_merged")).toEqual([]);
    } finally {
      for (const s of [user, notes, other]) s.close();
    }
  });
});
