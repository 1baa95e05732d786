import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { notificationsJson, serializeNotification } from "../../src/presenters/notification.ts";
import { renderStatuses, statusesJson } from "../../src/presenters/status-json.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let anon: Client;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
const ids: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
  await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);

  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#3a6" } }).png().toBuffer();
  const form = new FormData();
  form.append("file", new File([png], "a.png", { type: "image/png" }));
  form.append("description", "a green box");
  const media = await alice.client.post("/api/v1/media", { multipart: form });

  const plain = await postStatus(alice, { status: "Hello #World, see https://example.com and @bob" });
  const withMedia = await postStatus(alice, { status: "a picture", media_ids: [media.body.id], sensitive: true, spoiler_text: "cw" });
  const priv = await postStatus(alice, { status: "followers only", visibility: "private" });
  const direct = await postStatus(alice, { status: "@bob psst", visibility: "direct" });
  const reply = await postStatus(bob, { status: "@alice hi", in_reply_to_id: plain.id });
  const poll = await postStatus(alice, { status: "vote", poll: { options: ["a", "b"], expires_in: 3600 } });
  const boost = await bob.client.post(`/api/v1/statuses/${plain.id}/reblog`);
  const pollBoost = await carol.client.post(`/api/v1/statuses/${poll.id}/reblog`);
  await bob.client.post(`/api/v1/statuses/${withMedia.id}/favourite`);
  await bob.client.post(`/api/v1/statuses/${plain.id}/bookmark`);
  await alice.client.post(`/api/v1/statuses/${plain.id}/pin`);
  await alice.client.post(`/api/v1/statuses/${plain.id}/mute`);
  const edited = await postStatus(alice, { status: "draft" });
  await alice.client.put(`/api/v1/statuses/${edited.id}`, { json: { status: "final #edited" } });
  ids.push(plain.id, withMedia.id, priv.id, direct.id, reply.id, poll.id, boost.body.id, pollBoost.body.id, edited.id);
});
afterAll(() => server.close());

async function rows(viewer: number | null) {
  const { reader } = server.ctx.services;
  return reader.visible(await reader.rowsByIds(ids.map(Number)), viewer);
}

describe("statuses rendered from the cache", () => {
  test("match the full rendering byte for byte, for every viewer, cold and warm", async () => {
    // The private and direct statuses only for alice, and bob (a follower, and mentioned).
    for (const [viewer, count] of [[null, 7], [alice.account.id, 9], [bob.account.id, 9], [carol.account.id, 7]] as const) {
      const visible = await rows(viewer);
      expect(visible.length).toBe(count);
      const { services, urls } = server.ctx;
      const full = JSON.stringify(await renderStatuses(services, urls, visible, viewer));
      expect(await statusesJson(services, urls, visible, viewer)).toBe(full);
      expect(await statusesJson(services, urls, visible, viewer)).toBe(full);
    }
  });

  test("notifications embed the same statuses as the full rendering", async () => {
    const { services, urls } = server.ctx;
    const viewer = alice.account.id;
    const rows = await services.notifications.list(viewer, { page: { limit: 40 } });
    // bob's follow, mention, favourite and boost; carol's boost.
    expect(rows.map((n) => n.type).sort()).toEqual(["favourite", "follow", "mention", "reblog", "reblog"]);
    const statuses = new Map((await renderStatuses(services, urls, await services.reader.rowsByIds(rows.flatMap((n) => (n.statusId ? [n.statusId] : []))), viewer)).map((r) => [r.id, r]));
    const froms = await services.accounts.showByIds(rows.map((n) => n.fromAccountId));
    const expected = rows.map((n) => {
      const from = froms.find((a) => a.id === n.fromAccountId)!;
      const out = serializeNotification(urls, n, from);
      return n.statusId === null ? out : { ...out, status: statuses.get(String(n.statusId)) };
    });
    expect(`[${(await notificationsJson(services, urls, rows, await services.embeds.notifications(rows, viewer), viewer)).join(",")}]`).toBe(JSON.stringify(expected));
  });

  test("the viewer's flags are the viewer's own", async () => {
    const [plain] = ids;
    const asBob = (await bob.client.get(`/api/v1/statuses/${plain}`)).body;
    expect(asBob).toMatchObject({ reblogged: true, bookmarked: true, favourited: false, pinned: false, muted: false, filtered: [] });
    const asAlice = (await alice.client.get(`/api/v1/statuses/${plain}`)).body;
    expect(asAlice).toMatchObject({ reblogged: false, bookmarked: false, pinned: true, muted: true });
    const asAnon = (await anon.get(`/api/v1/statuses/${plain}`)).body;
    expect(asAnon.reblogged).toBeUndefined();
    expect(asAnon.filtered).toBeUndefined();
    expect(asAnon.pinned).toBeUndefined();
  });

  test("counts and profiles are fresh after every change", async () => {
    const s = await postStatus(alice, { status: "count me" });
    for (const client of [anon, bob.client, alice.client]) expect((await client.get(`/api/v1/statuses/${s.id}`)).body.favourites_count).toBe(0);
    await carol.client.post(`/api/v1/statuses/${s.id}/favourite`);
    await carol.client.post(`/api/v1/statuses/${s.id}/reblog`);
    await postStatus(bob, { status: "a reply", in_reply_to_id: s.id });
    for (const client of [anon, bob.client, alice.client]) {
      expect((await client.get(`/api/v1/statuses/${s.id}`)).body).toMatchObject({ favourites_count: 1, reblogs_count: 1, replies_count: 1 });
    }
    await alice.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Alice Renamed" } });
    await postStatus(alice, { status: "one more" });
    const after = (await bob.client.get(`/api/v1/statuses/${s.id}`)).body.account;
    expect(after.display_name).toBe("Alice Renamed");
    expect(after.statuses_count).toBe((await alice.client.get("/api/v1/accounts/verify_credentials")).body.statuses_count);
    await alice.client.delete(`/api/v1/statuses/${s.id}`);
    for (const client of [anon, bob.client]) expect((await client.get(`/api/v1/statuses/${s.id}`)).status).toBe(404);
  });

  test("a viewer with filters gets `filtered` on cached statuses", async () => {
    const s = await postStatus(alice, { status: "spoilers for the finale" });
    await carol.client.get(`/api/v1/statuses/${s.id}`);
    const filter = await carol.client.post("/api/v2/filters", { json: { title: "tv", context: ["public", "thread"], keywords_attributes: [{ keyword: "finale" }] } });
    expect(filter.status).toBe(200);
    const seen = (await carol.client.get(`/api/v1/statuses/${s.id}`)).body;
    expect(seen.filtered).toHaveLength(1);
    expect(seen.filtered[0].keyword_matches).toEqual(["finale"]);
  });
});
