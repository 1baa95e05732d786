import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "../../src/media-files/sharp.ts";
import { ManualClock } from "../../src/clock.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { delivered, SseClient } from "../support/streams.ts";

const NOW = Date.UTC(2026, 10, 24, 12);
const HOUR = 60 * 60 * 1000;

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(NOW) });
  [alice, bob] = (await Promise.all(["alice", "bob"].map((n) => createUser(server, n)))) as [TestUser, TestUser];
  const png = await sharp({ create: { width: 32, height: 32, channels: 4, background: "#00ff00" } }).png().toBuffer();
  await server.ctx.services.customEmojis.add("blobcat", new Uint8Array(png));
});
afterAll(() => server.close());

const announce = (text: string, extra: { startsAt?: number; endsAt?: number; allDay?: boolean } = {}) => server.ctx.services.announcements.create({ text, ...extra });
const count = async (table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
const clear = async () => {
  for (const a of await server.ctx.services.announcements.all()) await server.ctx.services.announcements.remove(a.id);
};

describe("GET /api/v1/announcements", () => {
  test("Mastodon's Announcement entity: content as HTML with its mentions, linked statuses, tags and emojis", async () => {
    await clear();
    const status = await postStatus(bob, { status: "the release notes" });
    const row = await announce(`Hello @bob! Read ${server.base}/@bob/${status.id} #News :blobcat:\n\nSee you.`, { startsAt: NOW + HOUR, endsAt: NOW + 2 * HOUR });
    const res = await alice.client.get("/api/v1/announcements");
    expect(res.status).toBe(200);
    const emoji = (await new Client(server.base).get("/api/v1/custom_emojis")).body[0];
    expect(res.body).toEqual([
      {
        id: String(row.id),
        content: expect.stringMatching(/^<p>Hello <span class="h-card" translate="no"><a href="[^"]+\/@bob" class="u-url mention">@<span>bob<\/span><\/a><\/span>! Read <a href="[^"]+"[^>]*>.*#<span>News<\/span><\/a> :blobcat:<\/p><p>See you\.<\/p>$/),
        starts_at: new Date(NOW + HOUR).toISOString(),
        ends_at: new Date(NOW + 2 * HOUR).toISOString(),
        all_day: false,
        published_at: new Date(NOW).toISOString(),
        updated_at: new Date(NOW).toISOString(),
        read: false,
        mentions: [{ id: bob.id, username: "bob", url: `${server.base}/@bob`, acct: "bob" }],
        statuses: [{ id: status.id, url: `${server.base}/@bob/${status.id}` }],
        tags: [{ name: "news", url: `${server.base}/tags/news` }],
        emojis: [{ shortcode: "blobcat", url: emoji.url, static_url: emoji.static_url, visible_in_picker: true }],
        reactions: [],
      },
    ]);
  });

  test("only current ones, in the order of what they announce; ended ones are gone", async () => {
    await clear();
    const later = await announce("later", { startsAt: NOW + 5 * HOUR, endsAt: NOW + 6 * HOUR });
    const plain = await announce("no time");
    const sooner = await announce("sooner", { startsAt: NOW - 2 * HOUR, endsAt: NOW + HOUR, allDay: true });
    await announce("over", { startsAt: NOW - 3 * HOUR, endsAt: NOW - HOUR });
    const res = await alice.client.get("/api/v1/announcements");
    expect(res.body.map((a: { id: string }) => a.id)).toEqual([sooner.id, plain.id, later.id].map(String));
    expect(res.body[0].all_day).toBe(true);
  });

  test("401 without a token, 403 for a token without read", async () => {
    const anon = await new Client(server.base).get("/api/v1/announcements");
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ error: "The access token is invalid" });
    const writer = await createUser(server, "writer", { scopes: "write" });
    const res = await writer.client.get("/api/v1/announcements");
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
  });
});

describe("dismiss", () => {
  test("marks it read for that user only, once however often; unknown or ended ones are 404", async () => {
    await clear();
    const row = await announce("read me");
    const over = await announce("over", { startsAt: NOW - 3 * HOUR, endsAt: NOW - HOUR });
    for (let i = 0; i < 2; i++) {
      const res = await alice.client.post(`/api/v1/announcements/${row.id}/dismiss`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
    }
    expect((await alice.client.get("/api/v1/announcements")).body[0].read).toBe(true);
    expect((await bob.client.get("/api/v1/announcements")).body[0].read).toBe(false);
    const before = await count("announcement_dismissals");
    for (const id of ["999999", "nope", String(over.id)]) {
      const res = await alice.client.post(`/api/v1/announcements/${id}/dismiss`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect(await count("announcement_dismissals")).toBe(before);
    const reader = await createUser(server, "reader1", { scopes: "read" });
    expect((await reader.client.post(`/api/v1/announcements/${row.id}/dismiss`)).status).toBe(403);
  });
});

describe("reactions", () => {
  test("unicode and custom emoji reactions are counted, with me per viewer and the emoji's images; taking one back", async () => {
    await clear();
    const row = await announce("react!");
    const thumbs = encodeURIComponent("👍");
    for (const [user, name] of [[alice, thumbs], [bob, thumbs], [bob, "blobcat"]] as const) {
      const res = await user.client.put(`/api/v1/announcements/${row.id}/reactions/${name}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
    }
    const emoji = server.ctx.services.customEmojis.entity((await server.ctx.services.customEmojis.find("blobcat"))!);
    expect((await alice.client.get("/api/v1/announcements")).body[0].reactions).toEqual([
      { name: "👍", count: 2, me: true },
      { name: "blobcat", count: 1, me: false, url: emoji.url, static_url: emoji.static_url },
    ]);
    expect((await bob.client.delete(`/api/v1/announcements/${row.id}/reactions/${thumbs}`)).body).toEqual({});
    expect((await bob.client.get("/api/v1/announcements")).body[0].reactions).toEqual([
      { name: "👍", count: 1, me: false },
      { name: "blobcat", count: 1, me: true, url: emoji.url, static_url: emoji.static_url },
    ]);
  });

  test("Mastodon's refusals: not an emoji, the same twice, a ninth kind are 422; unknown announcements or reactions 404; nothing changes", async () => {
    await clear();
    const row = await announce("limits");
    const put = (user: TestUser, name: string, id: string | number = row.id) => user.client.put(`/api/v1/announcements/${id}/reactions/${encodeURIComponent(name)}`);
    expect((await put(alice, "🎉")).status).toBe(200);
    const before = await count("announcement_reactions");
    for (const [name, error] of [
      ["hello", "Validation failed: Name is not a recognized emoji"],
      ["not_an_emoji_here", "Validation failed: Name is not a recognized emoji"],
      ["🎉", "Duplicate record"],
    ] as const) {
      const res = await put(alice, name);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error });
    }
    for (const [method, path] of [
      ["PUT", `/api/v1/announcements/999999/reactions/${encodeURIComponent("🎉")}`],
      ["DELETE", `/api/v1/announcements/999999/reactions/${encodeURIComponent("🎉")}`],
      ["DELETE", `/api/v1/announcements/${row.id}/reactions/${encodeURIComponent("👀")}`],
    ] as const) {
      const res = await bob.client.request(method, path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect(await count("announcement_reactions")).toBe(before);

    for (const name of ["😀", "😂", "😍", "🤔", "👀", "🔥", "✅"]) expect((await put(bob, name)).status).toBe(200);
    const ninth = await put(bob, "🙈");
    expect(ninth.status).toBe(422);
    expect(ninth.body).toEqual({ error: "Validation failed: Limit of different reactions reached" });
    // One of the eight kinds may still be added to.
    expect((await put(bob, "🎉")).status).toBe(200);
    const reader = await createUser(server, "reader2", { scopes: "read" });
    expect((await put(reader, "😀")).status).toBe(403);
  });
});

describe("streams", () => {
  test("every user stream hears announcement, announcement.reaction and announcement.delete", async () => {
    await clear();
    const url = `${server.base}/api/v1/streaming/user`;
    const [a, b] = [await SseClient.open(url, { token: alice.token }), await SseClient.open(url, { token: bob.token })];
    const row = await announce("Streamed");
    const published = await a.waitFor((e) => e.event === "announcement");
    const payload = JSON.parse(published.data!);
    expect(payload).toMatchObject({ id: String(row.id), content: "<p>Streamed</p>", reactions: [] });
    expect(payload).not.toHaveProperty("read");
    await bob.client.put(`/api/v1/announcements/${row.id}/reactions/${encodeURIComponent("👍")}`);
    const reaction = await a.waitFor((e) => e.event === "announcement.reaction");
    expect(JSON.parse(reaction.data!)).toEqual({ name: "👍", count: 1, announcement_id: String(row.id) });
    await server.ctx.services.announcements.remove(row.id);
    const deleted = await b.waitFor((e) => e.event === "announcement.delete");
    expect(deleted.data).toBe(String(row.id));
    await delivered(server, a, b);
    for (const s of [a, b]) expect(s.events.map((e) => e.event)).toEqual(["announcement", "announcement.reaction", "announcement.delete"]);
    a.close();
    b.close();
  });
});
