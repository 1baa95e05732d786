import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRestAPIClient } from "masto";
import sharp from "sharp";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { SseClient } from "../support/streams.ts";

let server: TestServer;
let anon: Client;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
  await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
});
afterAll(() => server.close());

const NOT_FOUND = { error: "Record not found" };

async function upload(user: TestUser, description: string) {
  const png = await sharp({ create: { width: 30, height: 20, channels: 3, background: "#a33" } }).png().toBuffer();
  const form = new FormData();
  form.append("file", new File([png], "p.png", { type: "image/png" }));
  form.append("description", description);
  const res = await user.client.post("/api/v1/media", { multipart: form });
  expect(res.status).toBe(200);
  return res.body as { id: string };
}

describe("PUT /api/v1/statuses/:id", () => {
  test("a new version: content, tags and mentions follow, the versions are kept, the source is there", async () => {
    const s = await postStatus(alice, { status: "first #draft", spoiler_text: "", language: "en" });
    server.clock.advance(60_000);
    const before = server.clock.now();
    const res = await alice.client.put(`/api/v1/statuses/${s.id}`, { form: { status: "second #final for @carol", spoiler_text: "cw" } });
    const after = server.clock.now();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: s.id, spoiler_text: "cw", sensitive: true, language: "en", created_at: s.created_at });
    // The time of the edit, on the server's clock.
    const editedAt = Date.parse(res.body.edited_at);
    expect(editedAt >= before && editedAt <= after).toBe(true);
    expect(res.body.content).toContain("second");
    expect(res.body.tags.map((t: { name: string }) => t.name)).toEqual(["final"]);
    expect(res.body.mentions.map((m: { acct: string }) => m.acct)).toEqual(["carol"]);

    const read = await anon.get(`/api/v1/statuses/${s.id}`);
    expect(read.body).toMatchObject({ content: res.body.content, edited_at: res.body.edited_at });
    const tagged = await anon.get("/api/v1/timelines/tag/final");
    expect(tagged.body.map((t: { id: string }) => t.id)).toContain(s.id);
    expect((await anon.get("/api/v1/timelines/tag/draft")).body.map((t: { id: string }) => t.id)).not.toContain(s.id);

    const history = await anon.get(`/api/v1/statuses/${s.id}/history`);
    expect(history.status).toBe(200);
    expect(history.body).toHaveLength(2);
    expect(Object.keys(history.body[0])).toEqual(["content", "spoiler_text", "sensitive", "created_at", "account", "media_attachments", "emojis"]);
    expect(history.body[0]).toMatchObject({ spoiler_text: "", sensitive: false, created_at: s.created_at });
    expect(history.body[0].content).toContain("first");
    expect(history.body[1]).toMatchObject({ spoiler_text: "cw", sensitive: true, created_at: res.body.edited_at });
    expect(history.body[1].account.id).toBe(alice.id);

    const source = await alice.client.get(`/api/v1/statuses/${s.id}/source`);
    expect(source.body).toEqual({ id: s.id, text: "second #final for @carol", spoiler_text: "cw" });
    const mention = (await carol.client.get("/api/v1/notifications", { query: { types: ["mention"] } })).body;
    expect(mention.map((n: { status: { id: string } }) => n.status.id)).toContain(s.id);
  });

  test("mentions written with this server's own domain and port are local (Elk writes them so on every edit)", async () => {
    const host = new URL(server.base).host;
    expect(host).toMatch(/:\d+$/);
    const s = await postStatus(alice, { status: `hi @carol@${host}` });
    expect(s.mentions).toEqual([{ id: carol.id, username: "carol", url: `${server.base}/@carol`, acct: "carol" }]);
    expect(s.content).toContain(`<a href="${server.base}/@carol" class="u-url mention">@<span>carol</span></a>`);
    const edited = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: `hi @carol@${host} and @bob@${host}` } });
    expect(edited.status).toBe(200);
    expect(edited.body.mentions.map((m: { id: string }) => m.id).sort()).toEqual([carol.id, bob.id].sort());
    expect(edited.body.content).toContain(`<a href="${server.base}/@bob" class="u-url mention">@<span>bob</span></a>`);
  });

  test("an edit that changes nothing records nothing", async () => {
    const s = await postStatus(alice, { status: "steady" });
    const same = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "steady" } });
    expect(same.status).toBe(200);
    expect(same.body.edited_at).toBeNull();
    const history = await anon.get(`/api/v1/statuses/${s.id}/history`);
    expect(history.body).toHaveLength(1);
    expect(history.body[0].content).toBe(s.content);
  });

  test("media: added, described, reordered, removed; unprocessed media refused", async () => {
    const a = await upload(alice, "one");
    const b = await upload(alice, "two");
    const s = await postStatus(alice, { status: "pictures", media_ids: [a.id] });
    const edited = await alice.client.put(`/api/v1/statuses/${s.id}`, {
      form: [
        ["status", "pictures"],
        ["media_ids[]", b.id],
        ["media_ids[]", a.id],
        ["media_attributes[][id]", a.id],
        ["media_attributes[][description]", "one, described again"],
      ],
    });
    expect(edited.status).toBe(200);
    expect(edited.body.media_attachments.map((m: { id: string; description: string }) => [m.id, m.description])).toEqual([
      [b.id, "two"],
      [a.id, "one, described again"],
    ]);
    const history = (await anon.get(`/api/v1/statuses/${s.id}/history`)).body;
    expect(history[0].media_attachments.map((m: { description: string }) => m.description)).toEqual(["one"]);
    const bare = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "no pictures now" } });
    expect(bare.body.media_attachments).toEqual([]);
    // What the edit let go of may go on another status.
    expect((await postStatus(alice, { status: "reused", media_ids: [b.id] })).media_attachments).toHaveLength(1);

    // A large upload through v2 is still being processed in the background when the edit comes.
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 30 } } }).jpeg().toBuffer();
    const form = new FormData();
    form.append("file", new File([big], "big.jpg"));
    const pending = (await alice.client.post("/api/v2/media", { multipart: form })).body;
    const refused = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "x", media_ids: [pending.id] } });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: "Cannot attach files that have not finished processing. Try again in a moment!" });
    await server.ctx.services.media.queue.idle();
    const accepted = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "x", media_ids: [pending.id] } });
    expect(accepted.body.media_attachments.map((m: { id: string }) => m.id)).toEqual([pending.id]);
  });

  test("polls: changed options reset the votes; leaving the poll out removes it", async () => {
    const s = await postStatus(alice, { status: "vote", poll: { options: ["a", "b"], expires_in: 3600 } });
    await bob.client.post(`/api/v1/polls/${s.poll.id}/votes`, { json: { choices: ["0"] } });
    const same = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "vote", poll: { options: ["a", "b"], expires_in: 7200 } } });
    expect(same.body.poll).toMatchObject({ id: s.poll.id, votes_count: 1 });
    const changed = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "vote", poll: { options: ["a", "c"], expires_in: 7200 } } });
    expect(changed.body.poll).toMatchObject({ id: s.poll.id, votes_count: 0, voters_count: 0 });
    expect(changed.body.poll.options).toEqual([{ title: "a", votes_count: 0 }, { title: "c", votes_count: 0 }]);
    const history = (await anon.get(`/api/v1/statuses/${s.id}/history`)).body;
    expect(history[0].poll).toEqual({ options: [{ title: "a" }, { title: "b" }] });
    const bad = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "vote", poll: { options: ["only"], expires_in: 7200 } } });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: "Validation failed: Choices must have more than one item" });
    const gone = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "no vote" } });
    expect(gone.body.poll).toBeNull();
  });

  test("error rows: others' statuses, boosts, unknown ids, no token, bad text; nothing changes", async () => {
    const s = await postStatus(alice, { status: "mine" });
    const boost = (await bob.client.post(`/api/v1/statuses/${s.id}/reblog`)).body;
    for (const [who, id] of [[bob, s.id], [bob, boost.id], [alice, "999999"], [alice, "nope"]] as const) {
      const res = await who.client.put(`/api/v1/statuses/${id}`, { json: { status: "hijack" } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    const noToken = await anon.put(`/api/v1/statuses/${s.id}`, { json: { status: "x" } });
    expect(noToken.status).toBe(401);
    expect(noToken.body).toEqual({ error: "The access token is invalid" });
    const app = await anon.put(`/api/v1/statuses/${s.id}`, { json: { status: "x" }, token: (await appToken(server, "write")).token });
    expect(app.status).toBe(422);
    expect(app.body).toEqual({ error: "This method requires an authenticated user" });
    const blank = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "  " } });
    expect(blank.status).toBe(422);
    expect(blank.body).toEqual({ error: "Validation failed: Text can't be blank" });
    const long = await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "x".repeat(501) } });
    expect(long.status).toBe(422);
    expect(long.body).toEqual({ error: "Validation failed: Text character limit of 500 exceeded" });
    const read = (await anon.get(`/api/v1/statuses/${s.id}`)).body;
    expect(read.edited_at).toBeNull();
    expect(read.content).toBe(s.content);
    const priv = await postStatus(alice, { status: "hidden", visibility: "private" });
    for (const path of ["history", "source"]) {
      const res = await carol.client.get(`/api/v1/statuses/${priv.id}/${path}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    expect((await anon.get(`/api/v1/statuses/${s.id}/source`)).status).toBe(401);
  });

  test("boosters are told; streams get status.update", async () => {
    const s = await postStatus(alice, { status: "before" });
    await carol.client.post(`/api/v1/statuses/${s.id}/reblog`);
    const publicStream = await SseClient.open(`${server.base}/api/v1/streaming/public`);
    const bobStream = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: bob.token });
    await alice.client.put(`/api/v1/statuses/${s.id}`, { json: { status: "after" } });
    for (const stream of [publicStream, bobStream]) {
      const event = await stream.waitFor((e) => e.event === "status.update");
      const status = JSON.parse(event.data!);
      expect(status.id).toBe(s.id);
      expect(status.content).toContain("after");
      stream.close();
    }
    const notes = (await carol.client.get("/api/v1/notifications", { query: { types: ["update"] } })).body;
    expect(notes.map((n: { type: string; status: { id: string } }) => [n.type, n.status.id])).toEqual([["update", s.id]]);
  });
});

test("masto.js edits a status and reads its history", async () => {
  const masto = createRestAPIClient({ url: server.base, accessToken: alice.token });
  const s = await masto.v1.statuses.create({ status: "typo teh" });
  const edited = await masto.v1.statuses.$select(s.id).update({ status: "typo the" });
  expect(edited.editedAt).not.toBeNull();
  const history = await masto.v1.statuses.$select(s.id).history.list();
  expect(history).toHaveLength(2);
  const source = await masto.v1.statuses.$select(s.id).source.fetch();
  expect(source.text).toBe("typo the");
});
