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

const ids = (body: { id: string }[]) => body.map((s) => s.id);
const nextLink = (res: { headers: Headers }) => res.headers.get("link")?.match(/<([^>]+)>; rel="next"/)?.[1];
const prevLink = (res: { headers: Headers }) => res.headers.get("link")?.match(/<([^>]+)>; rel="prev"/)?.[1];

describe("home timeline", () => {
  test("own statuses, followed accounts' statuses and boosts; not others'", async () => {
    const me = await createUser(server, "h_me");
    const friend = await createUser(server, "h_friend");
    const other = await createUser(server, "h_other");
    const early = await post(friend, { status: "before the follow" });
    await me.client.post(`/api/v1/accounts/${friend.id}/follow`);
    const mine = await post(me, { status: "mine" });
    const theirs = await post(friend, { status: "friend's", visibility: "private" });
    const unlisted = await post(friend, { status: "friend's unlisted", visibility: "unlisted" });
    const stranger = await post(other, { status: "stranger's" });
    const boost = (await friend.client.post(`/api/v1/statuses/${stranger.id}/reblog`)).body;
    const dmToMe = await post(friend, { status: "@h_me hi", visibility: "direct" });
    const dmElsewhere = await post(friend, { status: "@h_other hi", visibility: "direct" });

    const home = await me.client.get("/api/v1/timelines/home");
    expect(home.status).toBe(200);
    expect(ids(home.body)).toEqual([dmToMe.id, boost.id, unlisted.id, theirs.id, mine.id, early.id]);
    expect(ids(home.body)).not.toContain(dmElsewhere.id);
    expect(home.body[1].reblog.id).toBe(stranger.id);
    expect((await anon.get("/api/v1/timelines/home")).status).toBe(401);
  });

  test("a boost of what a feed already shows (the status, or another boost of it) is not shown twice, the booster's own feed included", async () => {
    const me = await createUser(server, "d_me");
    const a = await createUser(server, "d_a");
    const b = await createUser(server, "d_b");
    const far = await createUser(server, "d_far");
    for (const who of [a, b]) await me.client.post(`/api/v1/accounts/${who.id}/follow`);
    const original = await post(far, { status: "worth boosting" });
    const first = (await a.client.post(`/api/v1/statuses/${original.id}/reblog`)).body;
    const second = (await b.client.post(`/api/v1/statuses/${original.id}/reblog`)).body;
    expect(ids((await me.client.get("/api/v1/timelines/home")).body)).toEqual([first.id]);
    // My own boost of something my feed shows already (my own status, a followed account's boost).
    const mine = await post(me, { status: "my own" });
    const selfBoost = (await me.client.post(`/api/v1/statuses/${mine.id}/reblog`)).body;
    const reboost = (await me.client.post(`/api/v1/statuses/${original.id}/reblog`)).body;
    expect(ids((await me.client.get("/api/v1/timelines/home")).body)).toEqual([mine.id, first.id]);
    // b's own feed had none of it: b's boost is there, and a's boost is not added later.
    expect(ids((await b.client.get("/api/v1/timelines/home")).body)).toEqual([second.id]);
    // The boosts themselves exist and are visible on the boosters' profiles.
    expect(ids((await anon.get(`/api/v1/accounts/${me.id}/statuses`)).body)).toEqual([reboost.id, selfBoost.id, mine.id]);
  });

  test("replies to people you do not follow stay out; boosts can be turned off; unfollow empties", async () => {
    const me = await createUser(server, "r_me");
    const friend = await createUser(server, "r_friend");
    const other = await createUser(server, "r_other");
    await me.client.post(`/api/v1/accounts/${friend.id}/follow`, { json: { reblogs: false } });
    const target = await post(other, { status: "someone else" });
    const replyOther = await post(friend, { status: "@r_other reply", in_reply_to_id: target.id });
    const mineRoot = await post(me, { status: "my root" });
    const replyMe = await post(friend, { status: "@r_me reply", in_reply_to_id: mineRoot.id });
    const selfThread = await post(friend, { status: "continuing", in_reply_to_id: replyMe.id });
    await friend.client.post(`/api/v1/statuses/${target.id}/reblog`);
    const home = ids((await me.client.get("/api/v1/timelines/home")).body);
    expect(home).not.toContain(replyOther.id);
    expect(home).toContain(replyMe.id);
    expect(home).toContain(selfThread.id);
    expect(home.length).toBe(3);

    await me.client.post(`/api/v1/accounts/${friend.id}/unfollow`);
    expect(ids((await me.client.get("/api/v1/timelines/home")).body)).toEqual([mineRoot.id]);
  });

  test("pagination: max_id, since_id, min_id and Link headers", async () => {
    const me = await createUser(server, "p_me");
    const posted: string[] = [];
    for (let i = 0; i < 7; i++) posted.push((await post(me, { status: `n${i}` })).id);
    const newestFirst = [...posted].reverse();
    const first = await me.client.get("/api/v1/timelines/home", { query: { limit: "3" } });
    expect(ids(first.body)).toEqual(newestFirst.slice(0, 3));
    expect(first.headers.get("link")).toBe(
      `<${server.base}/api/v1/timelines/home?limit=3&max_id=${newestFirst[2]}>; rel="next", <${server.base}/api/v1/timelines/home?limit=3&min_id=${newestFirst[0]}>; rel="prev"`,
    );
    const second = await me.client.get(nextLink(first)!);
    expect(ids(second.body)).toEqual(newestFirst.slice(3, 6));
    const back = await me.client.get(prevLink(second)!);
    expect(ids(back.body)).toEqual(newestFirst.slice(0, 3));
    const since = await me.client.get("/api/v1/timelines/home", { query: { since_id: posted[3]!, limit: "2" } });
    expect(ids(since.body)).toEqual([posted[6]!, posted[5]!]);
    const min = await me.client.get("/api/v1/timelines/home", { query: { min_id: posted[3]!, limit: "2" } });
    expect(ids(min.body)).toEqual([posted[5]!, posted[4]!]);
    const capped = await me.client.get("/api/v1/timelines/home", { query: { limit: "1000" } });
    expect(capped.body.length).toBe(7);
    const empty = await me.client.get("/api/v1/timelines/home", { query: { max_id: posted[0]! } });
    expect(empty.body).toEqual([]);
    expect(empty.headers.get("link")).toBeNull();
  });
});

describe("public timeline", () => {
  test("public statuses only, no boosts, no replies to others; only_media and remote", async () => {
    const a = await createUser(server, "pub_a");
    const b = await createUser(server, "pub_b");
    const pub = await post(a, { status: "public one" });
    const unlisted = await post(a, { status: "unlisted", visibility: "unlisted" });
    const priv = await post(a, { status: "private", visibility: "private" });
    const reply = await post(b, { status: "reply to a", in_reply_to_id: pub.id });
    const selfReply = await post(a, { status: "self reply", in_reply_to_id: pub.id });
    const boost = (await b.client.post(`/api/v1/statuses/${pub.id}/reblog`)).body;
    const res = await anon.get("/api/v1/timelines/public", { query: { limit: "40" } });
    const list = ids(res.body);
    expect(list).toContain(pub.id);
    expect(list).toContain(selfReply.id);
    for (const hidden of [unlisted.id, priv.id, reply.id, boost.id]) expect(list).not.toContain(hidden);
    expect(ids((await anon.get("/api/v1/timelines/public", { query: { local: "true", limit: "40" } })).body)).toEqual(list);
    expect((await anon.get("/api/v1/timelines/public", { query: { remote: "true" } })).body).toEqual([]);
    expect((await anon.get("/api/v1/timelines/public", { query: { only_media: "true" } })).body).toEqual([]);
    expect(res.headers.get("link")).toContain('rel="next"');
  });

  test("a viewer's muted and blocked accounts are left out", async () => {
    const viewer = await createUser(server, "pub_viewer");
    const noisy = await createUser(server, "pub_noisy");
    const s = await post(noisy, { status: "noise" });
    expect(ids((await viewer.client.get("/api/v1/timelines/public")).body)).toContain(s.id);
    await viewer.client.post(`/api/v1/accounts/${noisy.id}/mute`);
    expect(ids((await viewer.client.get("/api/v1/timelines/public")).body)).not.toContain(s.id);
    expect(ids((await anon.get("/api/v1/timelines/public")).body)).toContain(s.id);
  });
});

describe("hashtag timeline", () => {
  test("public statuses with the tag, case-insensitively; any, all, none", async () => {
    const a = await createUser(server, "tag_a");
    const one = await post(a, { status: "#Birds are great" });
    const two = await post(a, { status: "more #birds and #cats" });
    await post(a, { status: "#birds unlisted", visibility: "unlisted" });
    const three = await post(a, { status: "only #cats" });
    expect(ids((await anon.get("/api/v1/timelines/tag/BIRDS")).body)).toEqual([two.id, one.id]);
    expect(ids((await anon.get("/api/v1/timelines/tag/birds", { query: { "all[]": "cats" } })).body)).toEqual([two.id]);
    expect(ids((await anon.get("/api/v1/timelines/tag/birds", { query: { "none[]": "cats" } })).body)).toEqual([one.id]);
    expect(ids((await anon.get("/api/v1/timelines/tag/birds", { query: { "any[]": "cats" } })).body)).toEqual([three.id, two.id, one.id]);
    expect((await anon.get("/api/v1/timelines/tag/nosuchtag")).body).toEqual([]);
  });
});

describe("account statuses", () => {
  test("what the viewer may see, with the filters", async () => {
    const a = await createUser(server, "acct_a");
    const fan = await createUser(server, "acct_fan");
    await fan.client.post(`/api/v1/accounts/${a.id}/follow`);
    const other = await createUser(server, "acct_other");
    const otherPost = await post(other, { status: "other" });
    const pub = await post(a, { status: "public #tagged" });
    const priv = await post(a, { status: "private", visibility: "private" });
    const dm = await post(a, { status: "@acct_fan dm", visibility: "direct" });
    const reply = await post(a, { status: "reply", in_reply_to_id: otherPost.id });
    const boost = (await a.client.post(`/api/v1/statuses/${otherPost.id}/reblog`)).body;

    const path = `/api/v1/accounts/${a.id}/statuses`;
    expect(ids((await anon.get(path)).body)).toEqual([boost.id, reply.id, pub.id]);
    expect(ids((await fan.client.get(path)).body)).toEqual([boost.id, reply.id, dm.id, priv.id, pub.id]);
    expect(ids((await a.client.get(path)).body)).toEqual([boost.id, reply.id, dm.id, priv.id, pub.id]);
    expect(ids((await anon.get(path, { query: { exclude_replies: "true" } })).body)).toEqual([boost.id, pub.id]);
    expect(ids((await anon.get(path, { query: { exclude_reblogs: "1" } })).body)).toEqual([reply.id, pub.id]);
    expect(ids((await anon.get(path, { query: { tagged: "Tagged" } })).body)).toEqual([pub.id]);
    expect((await anon.get(path, { query: { only_media: "true" } })).body).toEqual([]);
    expect((await anon.get("/api/v1/accounts/999999/statuses")).status).toBe(404);

    await a.client.post(`/api/v1/accounts/${other.id}/block`);
    expect((await other.client.get(path)).body).toEqual([]);
  });

  test("Link header: next only after a full page", async () => {
    const a = await createUser(server, "acct_pages");
    for (let i = 0; i < 3; i++) await post(a, { status: `s${i}` });
    const full = await anon.get(`/api/v1/accounts/${a.id}/statuses`, { query: { limit: "2" } });
    expect(full.headers.get("link")).toContain('rel="next"');
    const last = await anon.get(nextLink(full)!);
    expect(last.body.length).toBe(1);
    expect(last.headers.get("link")).not.toContain('rel="next"');
    expect(last.headers.get("link")).toContain('rel="prev"');
  });

  test("min_id pages forward from the oldest side, since_id from the newest; both newest first", async () => {
    const a = await createUser(server, "acct_forward");
    const posted: string[] = [];
    for (let i = 0; i < 4; i++) posted.push((await post(a, { status: `f${i}` })).id);
    const [p0, p1, p2, p3] = posted as [string, string, string, string];
    const path = `/api/v1/accounts/${a.id}/statuses`;
    expect(ids((await anon.get(path, { query: { min_id: p0, limit: "2" } })).body)).toEqual([p2, p1]);
    expect(ids((await anon.get(path, { query: { since_id: p0, limit: "2" } })).body)).toEqual([p3, p2]);
    expect(ids((await anon.get(path, { query: { max_id: p3, since_id: p0 } })).body)).toEqual([p2, p1]);
  });
});

describe("bookmarks and favourites", () => {
  test("newest saved first, paged by the saving record", async () => {
    const a = await createUser(server, "saver");
    const b = await createUser(server, "saved_author");
    const s1 = await post(b, { status: "one" });
    const s2 = await post(b, { status: "two" });
    const s3 = await post(b, { status: "three" });
    for (const s of [s2, s1, s3]) {
      await a.client.post(`/api/v1/statuses/${s.id}/bookmark`);
      await a.client.post(`/api/v1/statuses/${s.id}/favourite`);
    }
    for (const path of ["/api/v1/bookmarks", "/api/v1/favourites"]) {
      const page = await a.client.get(path, { query: { limit: "2" } });
      expect(ids(page.body)).toEqual([s3.id, s1.id]);
      const rest = await a.client.get(nextLink(page)!);
      expect(ids(rest.body)).toEqual([s2.id]);
      expect((await anon.get(path)).status).toBe(401);
    }
    const bookmarked = await a.client.get("/api/v1/bookmarks");
    expect(bookmarked.body.every((s: { bookmarked: boolean }) => s.bookmarked)).toBe(true);
    const readOnly = await createUser(server, "fav_reader", { scopes: "read:favourites" });
    expect((await readOnly.client.get("/api/v1/favourites")).status).toBe(200);
    expect((await readOnly.client.get("/api/v1/bookmarks")).status).toBe(403);
  });
});
