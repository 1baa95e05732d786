import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser, postStatus } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let anon: Client;
let author: TestUser;
let follower: TestUser;
let stranger: TestUser;
let mentioned: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  author = await createUser(server, "author");
  follower = await createUser(server, "follower");
  stranger = await createUser(server, "stranger");
  mentioned = await createUser(server, "mentioned");
  await follower.client.post(`/api/v1/accounts/${author.id}/follow`);
});
afterAll(() => server.close());

const post = postStatus;

describe("who may read what", () => {
  const matrix: Record<string, Record<string, boolean>> = {
    public: { anonymous: true, stranger: true, follower: true, mentioned: true, author: true },
    unlisted: { anonymous: true, stranger: true, follower: true, mentioned: true, author: true },
    private: { anonymous: false, stranger: false, follower: true, mentioned: true, author: true },
    direct: { anonymous: false, stranger: false, follower: false, mentioned: true, author: true },
  };
  for (const [visibility, readers] of Object.entries(matrix)) {
    test(`${visibility} statuses`, async () => {
      const status = await post(author, { status: `hello @mentioned (${visibility})`, visibility });
      const clients: Record<string, Client> = { anonymous: anon, stranger: stranger.client, follower: follower.client, mentioned: mentioned.client, author: author.client };
      for (const [who, allowed] of Object.entries(readers)) {
        for (const path of [`/api/v1/statuses/${status.id}`, `/api/v1/statuses/${status.id}/context`, `/api/v1/statuses/${status.id}/favourited_by`, `/api/v1/statuses/${status.id}/reblogged_by`, `/api/v1/statuses/${status.id}/card`]) {
          const res = await clients[who]!.get(path);
          if (allowed) expect(res.status).toBe(200);
          else {
            expect(res.status).toBe(404);
            expect(res.body).toEqual({ error: "Record not found" });
          }
        }
      }
    });
  }

  test("a status whose author blocks the viewer is 404 to them", async () => {
    const blocker = await createUser(server, "blocker");
    const status = await post(blocker, { status: "not for you" });
    await blocker.client.post(`/api/v1/accounts/${stranger.id}/block`);
    expect((await stranger.client.get(`/api/v1/statuses/${status.id}`)).status).toBe(404);
    expect((await stranger.client.post(`/api/v1/statuses/${status.id}/favourite`)).status).toBe(404);
    expect((await anon.get(`/api/v1/statuses/${status.id}`)).status).toBe(200);
  });

  test("per-viewer fields appear only for a signed-in viewer", async () => {
    const status = await post(author, { status: "flags" });
    const anonymous = await anon.get(`/api/v1/statuses/${status.id}`);
    for (const key of ["favourited", "reblogged", "muted", "bookmarked", "pinned", "filtered"]) expect(anonymous.body).not.toHaveProperty(key);
    const signedIn = await stranger.client.get(`/api/v1/statuses/${status.id}`);
    expect(signedIn.body).toMatchObject({ favourited: false, reblogged: false, muted: false, bookmarked: false, pinned: false });
  });

  test("unknown and malformed ids are 404", async () => {
    for (const id of ["0", "99999999999", "abc", "1.5"]) {
      const res = await anon.get(`/api/v1/statuses/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
  });

  test("GET /api/v1/statuses?id[]= returns the visible ones", async () => {
    const a = await post(author, { status: "a" });
    const b = await post(author, { status: "b", visibility: "private" });
    const res = await anon.get("/api/v1/statuses", { query: { "id[]": [b.id, a.id, "12345"] } });
    expect(res.body.map((s: { id: string }) => s.id)).toEqual([a.id]);
  });
});

describe("whitelist mode", () => {
  test("anonymous reads of statuses answer 401", async () => {
    const closed = await startTestServer({ WHITELIST_MODE: "true" });
    try {
      const user = await createUser(closed, "member");
      const status = (await user.client.post("/api/v1/statuses", { json: { status: "members only" } })).body;
      const anonymous = new Client(closed.base);
      for (const path of [`/api/v1/statuses/${status.id}`, `/api/v1/statuses/${status.id}/context`, "/api/v1/timelines/public"]) {
        const res = await anonymous.get(path);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: "This API requires an authenticated user" });
      }
      expect((await user.client.get(`/api/v1/statuses/${status.id}`)).status).toBe(200);
    } finally {
      await closed.close();
    }
  });
});

describe("GET /api/v1/statuses/:id/context", () => {
  test("ancestors root first, descendants depth first with self-replies promoted, hidden ones left out", async () => {
    const root = await post(author, { status: "root" });
    const r1 = await post(follower, { status: "first reply", in_reply_to_id: root.id });
    const self = await post(author, { status: "author continues", in_reply_to_id: root.id });
    const r1a = await post(author, { status: "reply to first reply", in_reply_to_id: r1.id });
    const hidden = await post(stranger, { status: "@author private aside", in_reply_to_id: root.id, visibility: "direct" });
    const selfDeep = await post(author, { status: "and more", in_reply_to_id: self.id });

    const fromRoot = await anon.get(`/api/v1/statuses/${root.id}/context`);
    expect(fromRoot.body.ancestors).toEqual([]);
    expect(fromRoot.body.descendants.map((s: { id: string }) => s.id)).toEqual([self.id, selfDeep.id, r1.id, r1a.id]);

    const asAuthor = await author.client.get(`/api/v1/statuses/${root.id}/context`);
    expect(asAuthor.body.descendants.map((s: { id: string }) => s.id)).toContain(hidden.id);

    const fromLeaf = await anon.get(`/api/v1/statuses/${r1a.id}/context`);
    expect(fromLeaf.body.ancestors.map((s: { id: string }) => s.id)).toEqual([root.id, r1.id]);
    expect(fromLeaf.body.descendants).toEqual([]);
  });
});

describe("reblogged_by and favourited_by", () => {
  test("list the accounts, newest first, with Link headers", async () => {
    const status = await post(author, { status: "popular" });
    const fans: TestUser[] = [];
    for (let i = 0; i < 3; i++) {
      const fan = await createUser(server, `fan${i}`);
      await fan.client.post(`/api/v1/statuses/${status.id}/favourite`);
      await fan.client.post(`/api/v1/statuses/${status.id}/reblog`);
      fans.push(fan);
    }
    const favs = await anon.get(`/api/v1/statuses/${status.id}/favourited_by`, { query: { limit: "2" } });
    expect(favs.body.map((a: { username: string }) => a.username)).toEqual(["fan2", "fan1"]);
    const link = favs.headers.get("link")!;
    expect(link).toContain('rel="next"');
    expect(link).toMatch(/since_id=\d+>; rel="prev"/);
    const next = await anon.get(link.match(/<([^>]+)>; rel="next"/)![1]!);
    expect(next.body.map((a: { username: string }) => a.username)).toEqual(["fan0"]);
    const boosts = await anon.get(`/api/v1/statuses/${status.id}/reblogged_by`);
    expect(boosts.body.map((a: { username: string }) => a.username)).toEqual(["fan2", "fan1", "fan0"]);
  });
});

describe("DELETE /api/v1/statuses/:id", () => {
  test("returns the source for redraft; then every read is 404 and boosts vanish", async () => {
    const status = await post(author, { status: "Delete me @mentioned #gone", poll: { options: ["yes", "no"], expires_in: 3600 } });
    await follower.client.post(`/api/v1/statuses/${status.id}/favourite`);
    const boost = (await follower.client.post(`/api/v1/statuses/${status.id}/reblog`)).body;
    const followerBefore = (await anon.get(`/api/v1/accounts/${follower.id}`)).body.statuses_count;
    const authorBefore = (await anon.get(`/api/v1/accounts/${author.id}`)).body.statuses_count;

    const res = await author.client.delete(`/api/v1/statuses/${status.id}`);
    expect(res.status).toBe(200);
    expect(res.body.text).toBe("Delete me @mentioned #gone");
    expect(res.body).not.toHaveProperty("content");
    expect(Object.keys(res.body).indexOf("text")).toBe(20);
    expect(res.body.poll.options.map((o: { title: string }) => o.title)).toEqual(["yes", "no"]);
    expect(res.body.poll.multiple).toBe(false);
    expect(res.body.media_attachments).toEqual([]);
    expect(res.body.pinned).toBe(false);
    expect(res.body.account.statuses_count).toBe(authorBefore - 1);

    for (const path of [`/api/v1/statuses/${status.id}`, `/api/v1/statuses/${status.id}/context`, `/api/v1/statuses/${boost.id}`, `/api/v1/statuses/${status.id}/favourited_by`]) {
      expect((await author.client.get(path)).status).toBe(404);
    }
    expect((await anon.get(`/api/v1/accounts/${follower.id}`)).body.statuses_count).toBe(followerBefore - 1);
    expect((await anon.get(`/api/v1/accounts/${author.id}`)).body.statuses_count).toBe(authorBefore - 1);
    const again = await author.client.delete(`/api/v1/statuses/${status.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: "Record not found" });
  });

  test("the answer shows a pinned status unpinned, and its author's count after the deletion", async () => {
    const pinned = await post(author, { status: "pinned, then deleted" });
    expect((await author.client.post(`/api/v1/statuses/${pinned.id}/pin`)).body.pinned).toBe(true);
    const before = (await anon.get(`/api/v1/accounts/${author.id}`)).body.statuses_count;
    const res = await author.client.delete(`/api/v1/statuses/${pinned.id}`);
    expect(res.status).toBe(200);
    expect(res.body.pinned).toBe(false);
    expect(res.body.account.statuses_count).toBe(before - 1);
    // A direct status never counted, so deleting it leaves the count as it is.
    const dm = await post(author, { status: "@follower just us", visibility: "direct" });
    const gone = await author.client.delete(`/api/v1/statuses/${dm.id}`);
    expect(gone.status).toBe(200);
    expect(gone.body.account.statuses_count).toBe(before - 1);
  });

  test("only the owner: others, unknown ids and no token are refused", async () => {
    const status = await post(author, { status: "mine" });
    const other = await follower.client.delete(`/api/v1/statuses/${status.id}`);
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: "Record not found" });
    expect((await author.client.delete("/api/v1/statuses/424242")).status).toBe(404);
    const unauthenticated = await anon.delete(`/api/v1/statuses/${status.id}`);
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toEqual({ error: "The access token is invalid" });
    expect((await anon.get(`/api/v1/statuses/${status.id}`)).status).toBe(200);
  });

  test("deleting a reply gives the parent its count back", async () => {
    const parent = await post(author, { status: "parent" });
    const reply = await post(follower, { status: "reply", in_reply_to_id: parent.id });
    expect((await anon.get(`/api/v1/statuses/${parent.id}`)).body.replies_count).toBe(1);
    await follower.client.delete(`/api/v1/statuses/${reply.id}`);
    expect((await anon.get(`/api/v1/statuses/${parent.id}`)).body.replies_count).toBe(0);
  });
});

describe("GET /api/v1/statuses/:id/card", () => {
  test("an empty object for a visible status, 404 otherwise", async () => {
    const status = await post(author, { status: "https://example.com has no card here" });
    const res = await anon.get(`/api/v1/statuses/${status.id}/card`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await anon.get("/api/v1/statuses/777/card")).status).toBe(404);
  });
});

describe("anonymous reads stay fresh", () => {
  test("counts, the author's profile and counters, and deletion show at once", async () => {
    const writer = await createUser(server, "fresh_writer");
    const fan = await createUser(server, "fresh_fan");
    const s = await post(writer, { status: "watch me" });
    const read = async () => (await anon.get(`/api/v1/statuses/${s.id}`)).body;
    expect((await read()).favourites_count).toBe(0);
    expect((await read()).favourites_count).toBe(0);
    await fan.client.post(`/api/v1/statuses/${s.id}/favourite`);
    expect((await read()).favourites_count).toBe(1);
    await fan.client.post(`/api/v1/statuses/${s.id}/reblog`);
    expect((await read()).reblogs_count).toBe(1);
    await post(fan, { status: "reply", in_reply_to_id: s.id });
    expect((await read()).replies_count).toBe(1);
    await writer.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Renamed" } });
    expect((await read()).account.display_name).toBe("Renamed");
    await post(writer, { status: "another" });
    expect((await read()).account.statuses_count).toBe(2);
    await fan.client.post(`/api/v1/accounts/${writer.id}/follow`);
    expect((await read()).account.followers_count).toBe(1);
    await fan.client.post(`/api/v1/accounts/${writer.id}/unfollow`);
    expect((await read()).account.followers_count).toBe(0);
    await writer.client.delete(`/api/v1/statuses/${s.id}`);
    expect((await anon.get(`/api/v1/statuses/${s.id}`)).status).toBe(404);
  });
});
