import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let anon: Client;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
});
afterAll(() => server.close());

const post = postStatus;

const types = (body: { type: string }[]) => body.map((n) => n.type);

describe("notifications", () => {
  test("mention, reblog, favourite and follow; none for one's own actions", async () => {
    const me = await createUser(server, "n_me");
    const fan = await createUser(server, "n_fan");
    const s = await post(me, { status: "hello" });
    await fan.client.post(`/api/v1/accounts/${me.id}/follow`);
    await fan.client.post(`/api/v1/statuses/${s.id}/favourite`);
    await fan.client.post(`/api/v1/statuses/${s.id}/reblog`);
    const mention = await post(fan, { status: "@n_me hi there" });
    await me.client.post(`/api/v1/statuses/${s.id}/favourite`);
    await post(me, { status: "@n_me talking to myself" });

    const res = await me.client.get("/api/v1/notifications");
    expect(res.status).toBe(200);
    expect(types(res.body)).toEqual(["mention", "reblog", "favourite", "follow"]);
    const [m, r, f, follow] = res.body;
    expect(Object.keys(m)).toEqual(["id", "type", "created_at", "group_key", "account", "status"]);
    expect(m.account.id).toBe(fan.id);
    expect(m.status.id).toBe(mention.id);
    expect(r.status.id).toBe(s.id);
    expect(f.status.id).toBe(s.id);
    expect(follow).not.toHaveProperty("status");
    expect(m.group_key).toBe(`ungrouped-${m.id}`);

    const onlyMentions = await me.client.get("/api/v1/notifications", { query: { "types[]": "mention" } });
    expect(types(onlyMentions.body)).toEqual(["mention"]);
    const excluded = await me.client.get("/api/v1/notifications", { query: { "exclude_types[]": ["mention", "follow"] } });
    expect(types(excluded.body)).toEqual(["reblog", "favourite"]);
    const fromFan = await me.client.get("/api/v1/notifications", { query: { account_id: fan.id } });
    expect(fromFan.body.length).toBe(4);
    expect((await me.client.get("/api/v1/notifications", { query: { "types[]": "nonsense" } })).body).toEqual([]);

    const paged = await me.client.get("/api/v1/notifications", { query: { limit: "2" } });
    expect(types(paged.body)).toEqual(["mention", "reblog"]);
    const next = paged.headers.get("link")!.match(/<([^>]+)>; rel="next"/)![1]!;
    expect(types((await me.client.get(next)).body)).toEqual(["favourite", "follow"]);

    // Undoing an action takes its notification back.
    await fan.client.post(`/api/v1/statuses/${s.id}/unfavourite`);
    await fan.client.post(`/api/v1/accounts/${me.id}/unfollow`);
    expect(types((await me.client.get("/api/v1/notifications")).body)).toEqual(["mention", "reblog"]);
  });

  test("a new status tells each account once: a mention named twice is one notification, and a follower with the bell on who is mentioned gets the mention alone", async () => {
    const author = await createUser(server, "n_author");
    const belled = await createUser(server, "n_belled");
    const named = await createUser(server, "n_named");
    expect((await belled.client.post(`/api/v1/accounts/${author.id}/follow`, { json: { notify: true } })).status).toBe(200);
    expect((await named.client.post(`/api/v1/accounts/${author.id}/follow`, { json: { notify: true } })).status).toBe(200);

    const first = await post(author, { status: "one post for the bell" });
    const second = await post(author, { status: "@n_named hello @n_named, twice" });
    const third = await post(author, { status: "and another" });

    const heard = (await belled.client.get("/api/v1/notifications")).body;
    expect(heard.map((n: any) => [n.type, n.status.id])).toEqual([["status", third.id], ["status", second.id], ["status", first.id]]);
    const told = (await named.client.get("/api/v1/notifications")).body;
    expect(told.map((n: any) => [n.type, n.status.id])).toEqual([["status", third.id], ["mention", second.id], ["status", first.id]]);
  });

  test("follow requests notify the locked account", async () => {
    const locked = await createUser(server, "n_locked", { locked: true });
    const asker = await createUser(server, "n_asker");
    await asker.client.post(`/api/v1/accounts/${locked.id}/follow`);
    expect(types((await locked.client.get("/api/v1/notifications")).body)).toEqual(["follow_request"]);
  });

  test("GET one, dismiss, clear; others' notifications are 404", async () => {
    const me = await createUser(server, "n_owner");
    const other = await createUser(server, "n_other");
    await post(other, { status: "@n_owner one" });
    await post(other, { status: "@n_owner two" });
    const list = (await me.client.get("/api/v1/notifications")).body;
    const one = await me.client.get(`/api/v1/notifications/${list[0].id}`);
    expect(one.body.id).toBe(list[0].id);
    const foreign = await other.client.get(`/api/v1/notifications/${list[0].id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: "Record not found" });
    expect((await other.client.post(`/api/v1/notifications/${list[0].id}/dismiss`)).status).toBe(404);
    const dismissed = await me.client.post(`/api/v1/notifications/${list[0].id}/dismiss`);
    expect(dismissed.status).toBe(200);
    expect(dismissed.body).toEqual({});
    expect((await me.client.get("/api/v1/notifications")).body.length).toBe(1);
    expect((await me.client.post("/api/v1/notifications/clear")).body).toEqual({});
    expect((await me.client.get("/api/v1/notifications")).body).toEqual([]);
    expect((await anon.get("/api/v1/notifications")).status).toBe(401);
    const noScope = await createUser(server, "n_noscope", { scopes: "read:statuses" });
    expect((await noScope.client.get("/api/v1/notifications")).status).toBe(403);
  });
});

describe("GET /api/v1/notifications/unread_count", () => {
  test("counts what arrived after the notifications marker, within the limit", async () => {
    const owner = await createUser(server, "u_owner");
    const fans = await Promise.all(["u_a", "u_b", "u_c"].map((name) => createUser(server, name)));
    const s = await post(owner, { status: "count my fans" });
    const count = async (query: Record<string, string> = {}) => (await owner.client.get("/api/v1/notifications/unread_count", { query })).body;
    expect(await count()).toEqual({ count: 0 });
    for (const fan of fans) await fan.client.post(`/api/v1/statuses/${s.id}/favourite`);
    expect(await count()).toEqual({ count: 3 });
    expect(await count({ limit: "2" })).toEqual({ count: 2 });
    const [newest, , oldest] = (await owner.client.get("/api/v1/notifications")).body as { id: string }[];
    await owner.client.post("/api/v1/markers", { json: { notifications: { last_read_id: oldest!.id } } });
    expect(await count()).toEqual({ count: 2 });
    expect(await count({ "types[]": "mention" })).toEqual({ count: 0 });
    await owner.client.post("/api/v1/markers", { json: { notifications: { last_read_id: newest!.id } } });
    expect(await count()).toEqual({ count: 0 });
    const none = await anon.get("/api/v1/notifications/unread_count");
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
  });
});

describe("blocks and mutes", () => {
  test("a block severs follows both ways, hides each from the other and stops interaction", async () => {
    const me = await createUser(server, "b_me");
    const pest = await createUser(server, "b_pest");
    await me.client.post(`/api/v1/accounts/${pest.id}/follow`);
    await pest.client.post(`/api/v1/accounts/${me.id}/follow`);
    const mine = await post(me, { status: "mine" });
    const theirs = await post(pest, { status: "theirs" });
    const rel = await me.client.post(`/api/v1/accounts/${pest.id}/block`);
    expect(rel.body).toMatchObject({ id: pest.id, blocking: true, following: false, followed_by: false });
    expect((await pest.client.get("/api/v1/accounts/relationships", { query: { "id[]": me.id } })).body[0].blocked_by).toBe(true);
    expect((await anon.get(`/api/v1/accounts/${me.id}`)).body.followers_count).toBe(0);

    expect((await pest.client.get(`/api/v1/statuses/${mine.id}`)).status).toBe(404);
    expect((await pest.client.post(`/api/v1/statuses/${mine.id}/favourite`)).status).toBe(404);
    const refollow = await pest.client.post(`/api/v1/accounts/${me.id}/follow`);
    expect(refollow.status).toBe(403);
    expect(refollow.body).toEqual({ error: "This action is not allowed" });
    expect((await me.client.post(`/api/v1/statuses/${theirs.id}/favourite`)).status).toBe(403);
    expect((await me.client.get("/api/v1/timelines/home")).body.map((s: { id: string }) => s.id)).not.toContain(theirs.id);
    await post(pest, { status: "@b_me still here?" });
    expect((await me.client.get("/api/v1/notifications")).body.filter((n: any) => n.account.id === pest.id)).toEqual([]);

    const blocks = await me.client.get("/api/v1/blocks");
    expect(blocks.body.map((a: { id: string }) => a.id)).toEqual([pest.id]);
    const un = await me.client.post(`/api/v1/accounts/${pest.id}/unblock`);
    expect(un.body.blocking).toBe(false);
    expect((await me.client.get("/api/v1/blocks")).body).toEqual([]);
    expect((await pest.client.get(`/api/v1/statuses/${mine.id}`)).status).toBe(200);
  });

  test("a mute hides the account from timelines and, by default, notifications; with expiry", async () => {
    const me = await createUser(server, "m_me");
    const loud = await createUser(server, "m_loud");
    await me.client.post(`/api/v1/accounts/${loud.id}/follow`);
    const before = await post(loud, { status: "before" });
    expect((await me.client.get("/api/v1/timelines/home")).body.map((s: { id: string }) => s.id)).toContain(before.id);

    const rel = await me.client.post(`/api/v1/accounts/${loud.id}/mute`, { json: { duration: 3600 } });
    expect(rel.body).toMatchObject({ muting: true, muting_notifications: true, following: true });
    const during = await post(loud, { status: "@m_me during" });
    expect((await me.client.get("/api/v1/timelines/home")).body).toEqual([]);
    expect((await me.client.get("/api/v1/notifications")).body.filter((n: any) => n.status?.id === during.id)).toEqual([]);
    const mutes = await me.client.get("/api/v1/mutes");
    expect(mutes.body[0].id).toBe(loud.id);
    expect(Object.keys(mutes.body[0]).slice(-4)).toEqual(["mute_expires_at", "emojis", "roles", "fields"]);
    expect(mutes.body[0].mute_expires_at).not.toBeNull();

    server.clock.advance(3601 * 1000);
    expect((await me.client.get("/api/v1/mutes")).body).toEqual([]);
    expect((await me.client.get("/api/v1/accounts/relationships", { query: { "id[]": loud.id } })).body[0].muting).toBe(false);

    await me.client.post(`/api/v1/accounts/${loud.id}/mute`, { form: { notifications: "false" } });
    const soft = await me.client.get("/api/v1/accounts/relationships", { query: { "id[]": loud.id } });
    expect(soft.body[0]).toMatchObject({ muting: true, muting_notifications: false });
    const un = await me.client.post(`/api/v1/accounts/${loud.id}/unmute`);
    expect(un.body.muting).toBe(false);
    expect((await me.client.get("/api/v1/timelines/home")).body.map((s: { id: string }) => s.id)).toContain(before.id);
  });

  test("unknown accounts are 404 and scopes apply", async () => {
    const me = await createUser(server, "bm_errors");
    for (const action of ["block", "unblock", "mute", "unmute"]) {
      const res = await me.client.post(`/api/v1/accounts/424242/${action}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    const readOnly = await createUser(server, "bm_read", { scopes: "read" });
    expect((await readOnly.client.post(`/api/v1/accounts/${me.id}/block`)).status).toBe(403);
    const follow = await createUser(server, "bm_follow", { scopes: "follow" });
    expect((await follow.client.post(`/api/v1/accounts/${me.id}/mute`)).status).toBe(200);
    expect((await follow.client.get("/api/v1/mutes")).status).toBe(200);
  });
});
