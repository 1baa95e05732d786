import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { SseClient, WsClient, type StreamEvent } from "../support/streams.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Every JSON shape goes through src/presenters, over HTTP and over streams alike: the same
// entity, for the same viewer at the same moment, must be the same bytes both ways. Each
// step acts once, waits for every stream to deliver, then reads the entity over HTTP before
// anything else changes (counters move with every action).

let server: TestServer;
let anon: Client;
let ann: TestUser; // author of most statuses; follows fay
let fay: TestUser; // follows ann
let flo: TestUser; // follows ann and fay, with a "warn" filter on "rook"
let sam: TestUser; // followed by nobody: his status reaches homes only as fay's boost
const user = new Map<TestUser, SseClient>();
const direct = new Map<TestUser, SseClient>();
let fayWs: WsClient;
let publicAnon: SseClient;

const streamUrl = (path: string) => `${server.base}/api/v1/streaming${path}`;
const idOf = (data: string | undefined) => (data === undefined ? undefined : (JSON.parse(data) as { id?: string }).id);

beforeAll(async () => {
  server = await startTestServer();
  anon = new Client(server.base);
  [ann, fay, flo, sam] = (await Promise.all(["ann", "fay", "flo", "sam"].map((n) => createUser(server, n)))) as [TestUser, TestUser, TestUser, TestUser];
  for (const [who, whom] of [[fay, ann], [ann, fay], [flo, ann], [flo, fay]] as const) {
    expect((await who.client.post(`/api/v1/accounts/${whom.id}/follow`)).status).toBe(200);
  }
  const filter = await flo.client.post("/api/v2/filters", {
    json: { title: "Rooks", context: ["home", "notifications", "public", "thread"], filter_action: "warn", keywords_attributes: [{ keyword: "rook" }] },
  });
  expect(filter.status).toBe(200);
  for (const u of [ann, fay, flo]) {
    user.set(u, await SseClient.open(streamUrl("/user"), { token: u.token }));
    direct.set(u, await SseClient.open(streamUrl("/direct"), { token: u.token }));
  }
  publicAnon = await SseClient.open(streamUrl("/public"));
  fayWs = await WsClient.open(`${server.base.replace("http", "ws")}/api/v1/streaming?stream=user`, fay.token);
});
afterAll(() => server.close());

/** The stream's payload for a status event, then the same status over HTTP as the same viewer: equal bytes. */
async function statusBothWays(viewer: TestUser | null, stream: SseClient, event: "update" | "status.update", id: string) {
  const delivered = await stream.waitFor((e) => e.event === event && idOf(e.data) === id);
  const res = await (viewer ? viewer.client : anon).get(`/api/v1/statuses/${id}`);
  expect(res.status).toBe(200);
  expect(delivered.data).toBe(res.text);
  return JSON.parse(res.text);
}

/** Each of the viewers' home streams against HTTP; fay's WebSocket too when she is one of them. */
async function statusForAll(viewers: TestUser[], id: string, event: "update" | "status.update" = "update") {
  const out = new Map<TestUser, any>();
  for (const viewer of viewers) out.set(viewer, await statusBothWays(viewer, user.get(viewer)!, event, id));
  if (viewers.includes(fay)) {
    const frame = await fayWs.waitFor((f) => f.event === event && idOf(f.payload) === id);
    expect(frame.payload).toBe(JSON.stringify(out.get(fay)));
  }
  return out;
}

/** A notification from the stream, then GET /api/v1/notifications/:id: equal bytes. */
async function notificationBothWays(viewer: TestUser, match: (n: any) => boolean) {
  const delivered: StreamEvent = await user.get(viewer)!.waitFor((e) => e.event === "notification" && match(JSON.parse(e.data!)));
  const id = idOf(delivered.data)!;
  const res = await viewer.client.get(`/api/v1/notifications/${id}`);
  expect(res.status).toBe(200);
  expect(delivered.data).toBe(res.text);
  return JSON.parse(res.text);
}

const rookFilter = (status: any) => status.filtered.map((f: any) => [f.filter.title, f.keyword_matches]);

describe("one presenter: streams and HTTP render the same JSON", () => {
  let plainId = "";

  test("a plain status, for its author, a follower, a viewer with a filter, and anonymously", async () => {
    const plain = await postStatus(ann, { status: "a rook on #presenters" });
    plainId = plain.id;
    const seen = await statusForAll([ann, fay, flo], plain.id);
    expect(rookFilter(seen.get(flo))).toEqual([["Rooks", ["rook"]]]);
    expect(seen.get(fay).filtered).toEqual([]);
    const asAnon = await statusBothWays(null, publicAnon, "update", plain.id);
    expect(asAnon.filtered).toBeUndefined();
    expect(asAnon.tags).toEqual([{ name: "presenters", url: `${server.ctx.config.publicUrl}/tags/presenters` }]);
  });

  test("a status with a poll: totals and `voted` differ for the author", async () => {
    const poll = await postStatus(ann, { status: "rook or bishop?", poll: { options: ["rook", "bishop"], expires_in: 3600 } });
    const seen = await statusForAll([ann, fay, flo], poll.id);
    expect(seen.get(ann).poll).toMatchObject({ voted: true, own_votes: [] });
    expect(seen.get(fay).poll).toMatchObject({ voted: false, own_votes: [] });
    expect(rookFilter(seen.get(flo))).toEqual([["Rooks", ["rook"]]]);
    await statusBothWays(null, publicAnon, "update", poll.id);
  });

  test("a status with media", async () => {
    const png = await sharp({ create: { width: 24, height: 16, channels: 3, background: "#a63" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new File([png], "rook.png", { type: "image/png" }));
    form.append("description", "a brown rook");
    const media = await ann.client.post("/api/v1/media", { multipart: form });
    expect(media.status).toBe(200);
    const status = await postStatus(ann, { status: "look", media_ids: [media.body.id], sensitive: true, spoiler_text: "birds" });
    const seen = await statusForAll([ann, fay, flo], status.id);
    expect(seen.get(fay).media_attachments).toMatchObject([{ id: media.body.id, type: "image", description: "a brown rook" }]);
    // Media descriptions are part of what filters look at.
    expect(rookFilter(seen.get(flo))).toEqual([["Rooks", ["rook"]]]);
    await statusBothWays(null, publicAnon, "update", status.id);
  });

  test("a boost, for the booster, and followers of the booster", async () => {
    const original = await postStatus(sam, { status: "rook endgames" });
    await statusBothWays(null, publicAnon, "update", original.id);
    const boost = await fay.client.post(`/api/v1/statuses/${original.id}/reblog`);
    expect(boost.status).toBe(200);
    const seen = await statusForAll([fay, ann, flo], boost.body.id);
    expect(seen.get(fay)).toMatchObject({ reblogged: true, reblog: { id: original.id, reblogged: true } });
    expect(seen.get(ann)).toMatchObject({ reblogged: false, reblog: { id: original.id } });
    expect(rookFilter(seen.get(flo))).toEqual([["Rooks", ["rook"]]]);
  });

  test("a reply with a mention, and the mention's notification", async () => {
    const reply = await postStatus(fay, { status: `@ann the rook moved`, in_reply_to_id: plainId });
    const seen = await statusForAll([fay, ann, flo], reply.id);
    expect(seen.get(ann)).toMatchObject({ in_reply_to_id: plainId, mentions: [{ id: ann.id, acct: "ann" }] });
    expect(rookFilter(seen.get(flo))).toEqual([["Rooks", ["rook"]]]);
    const note = await notificationBothWays(ann, (n) => n.type === "mention" && n.status?.id === reply.id);
    expect(note).toMatchObject({ type: "mention", account: { id: fay.id }, status: { id: reply.id, in_reply_to_id: plainId } });
  });

  test("a favourite's notification", async () => {
    expect((await fay.client.post(`/api/v1/statuses/${plainId}/favourite`)).status).toBe(200);
    const note = await notificationBothWays(ann, (n) => n.type === "favourite" && n.status?.id === plainId);
    expect(note.status).toMatchObject({ id: plainId, favourites_count: 1, favourited: false });
  });

  test("a direct message: the conversation for each participant, and the mention for a viewer with a filter", async () => {
    const dm = await postStatus(ann, { status: "@fay @flo a rook, privately", visibility: "direct" });
    for (const viewer of [ann, fay, flo]) {
      const delivered = await direct.get(viewer)!.waitFor((e) => e.event === "conversation" && JSON.parse(e.data!).last_status?.id === dm.id);
      const list = await viewer.client.get("/api/v1/conversations");
      expect(list.status).toBe(200);
      const conversation = (list.body as any[]).find((c) => c.id === idOf(delivered.data));
      expect(JSON.stringify(conversation)).toBe(delivered.data!);
      expect(conversation.last_status.id).toBe(dm.id);
    }
    const flos = JSON.parse((await direct.get(flo)!.waitFor((e) => e.event === "conversation")).data!);
    expect(rookFilter(flos.last_status)).toEqual([["Rooks", ["rook"]]]);
    const note = await notificationBothWays(flo, (n) => n.type === "mention" && n.status?.id === dm.id);
    expect(rookFilter(note.status)).toEqual([["Rooks", ["rook"]]]);
    await notificationBothWays(fay, (n) => n.type === "mention" && n.status?.id === dm.id);
  });

  test("an edit (status.update), with the viewers' own flags", async () => {
    expect((await ann.client.put(`/api/v1/statuses/${plainId}`, { json: { status: "a rook, edited, on #presenters" } })).status).toBe(200);
    const seen = await statusForAll([ann, fay, flo], plainId, "status.update");
    expect(seen.get(ann)).toMatchObject({ content: expect.stringContaining("edited"), edited_at: expect.any(String), favourited: false });
    expect(seen.get(fay)).toMatchObject({ favourited: true, replies_count: 1, favourites_count: 1 });
    expect(rookFilter(seen.get(flo))).toEqual([["Rooks", ["rook"]]]);
  });
});
