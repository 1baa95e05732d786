import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  [alice, bob, carol] = (await Promise.all(["alice", "bob", "carol"].map((n) => createUser(server, n)))) as [TestUser, TestUser, TestUser];
});
afterAll(() => server.close());

describe("conversations", () => {
  test("a direct status opens a thread for each participant; unread for recipients only", async () => {
    const dm = await postStatus(alice, { status: "@bob @carol lunch?", visibility: "direct" });
    const mine = await alice.client.get("/api/v1/conversations");
    expect(mine.status).toBe(200);
    expect(mine.body).toHaveLength(1);
    expect(mine.body[0]).toMatchObject({ id: expect.any(String), unread: false, last_status: { id: dm.id, visibility: "direct" } });
    expect(Object.keys(mine.body[0])).toEqual(["id", "unread", "accounts", "last_status"]);
    expect(mine.body[0].accounts.map((a: { id: string }) => a.id).sort()).toEqual([bob.id, carol.id].sort());

    const bobs = await bob.client.get("/api/v1/conversations");
    expect(bobs.body).toHaveLength(1);
    expect(bobs.body[0].unread).toBe(true);
    expect(bobs.body[0].accounts.map((a: { id: string }) => a.id).sort()).toEqual([alice.id, carol.id].sort());
    // Per-viewer flags of the last status are the owner's.
    expect(bobs.body[0].last_status.favourited).toBe(false);

    const reply = await postStatus(bob, { status: "@alice @carol yes", visibility: "direct", in_reply_to_id: dm.id });
    const again = await alice.client.get("/api/v1/conversations");
    expect(again.body).toHaveLength(1);
    expect(again.body[0]).toMatchObject({ unread: true, last_status: { id: reply.id } });
    expect(again.headers.get("link")).toContain(`max_id=${reply.id}`);

    const read = await alice.client.post(`/api/v1/conversations/${again.body[0].id}/read`);
    expect(read.status).toBe(200);
    expect(read.body.unread).toBe(false);
    const unread = await alice.client.post(`/api/v1/conversations/${again.body[0].id}/unread`);
    expect(unread.body.unread).toBe(true);

    // Deleting the last status moves the thread back; deleting every status removes it.
    await bob.client.delete(`/api/v1/statuses/${reply.id}`);
    expect((await alice.client.get("/api/v1/conversations")).body[0].last_status.id).toBe(dm.id);
    await alice.client.delete(`/api/v1/statuses/${dm.id}`);
    expect((await carol.client.get("/api/v1/conversations")).body).toEqual([]);
  });

  test("a note to self lists only me; public statuses make no conversation", async () => {
    const note = await postStatus(carol, { status: "remember the milk", visibility: "direct" });
    await postStatus(carol, { status: "@bob public mention" });
    const list = await carol.client.get("/api/v1/conversations");
    expect(list.body).toHaveLength(1);
    expect(list.body[0].accounts.map((a: { id: string }) => a.id)).toEqual([carol.id]);
    expect(list.body[0].last_status.id).toBe(note.id);
  });

  test("DELETE removes the thread for the caller only; others' and unknown ids are 404", async () => {
    const dm = await postStatus(bob, { status: "@alice a secret", visibility: "direct" });
    const bobs = (await bob.client.get("/api/v1/conversations")).body.find((c: any) => c.last_status.id === dm.id);
    for (const [method, path] of [
      ["POST", `/api/v1/conversations/${bobs.id}/read`],
      ["DELETE", `/api/v1/conversations/${bobs.id}`],
      ["POST", "/api/v1/conversations/123/read"],
      ["DELETE", "/api/v1/conversations/abc"],
    ] as const) {
      const res = await carol.client.request(method, path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect((await bob.client.delete(`/api/v1/conversations/${bobs.id}`)).body).toEqual({});
    expect((await bob.client.get("/api/v1/conversations")).body.find((c: any) => c.id === bobs.id)).toBeUndefined();
    // Bob's removal is his alone: alice still has the conversation.
    expect((await alice.client.get("/api/v1/conversations")).body.filter((c: any) => c.last_status.id === dm.id)).toHaveLength(1);
  });

  test("replies in one thread posted at once by both its participants: each posted, one thread each, every reply kept and the latest last", async () => {
    const dm = await postStatus(alice, { status: "@bob one thread", visibility: "direct" });
    const answer = await postStatus(bob, { status: "@alice yes", visibility: "direct", in_reply_to_id: dm.id });
    // Replies to different statuses of the thread (so that no parent's count orders them), by both.
    const posted = await Promise.all([
      alice.client.post("/api/v1/statuses", { json: { status: "@bob first", visibility: "direct", in_reply_to_id: answer.id } }),
      bob.client.post("/api/v1/statuses", { json: { status: "@alice second", visibility: "direct", in_reply_to_id: dm.id } }),
      alice.client.post("/api/v1/statuses", { json: { status: "@bob third", visibility: "direct", in_reply_to_id: dm.id } }),
      bob.client.post("/api/v1/statuses", { json: { status: "@alice fourth", visibility: "direct", in_reply_to_id: answer.id } }),
    ]);
    expect(posted.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    const ids = [dm.id, answer.id, ...posted.map((res) => res.body.id as string)].map(Number).sort((x, y) => x - y);
    const latest = ids[ids.length - 1]!;
    const threads = await server.database.port.all<{ account_id: number; status_ids: string; last_status_id: number }>(
      "SELECT account_id, status_ids, last_status_id FROM account_conversations WHERE conversation_id = (SELECT conversation_id FROM statuses WHERE id = ?) ORDER BY account_id",
      [Number(dm.id)],
    );
    expect(threads.map((t) => [String(t.account_id), (JSON.parse(t.status_ids) as number[]).sort((x, y) => x - y), Number(t.last_status_id)])).toEqual(
      [alice.id, bob.id].sort((x, y) => Number(x) - Number(y)).map((id) => [id, ids, latest]),
    );
    for (const user of [alice, bob]) expect((await user.client.get("/api/v1/conversations")).body[0].last_status.id).toBe(String(latest));
  });

  test("needs a user token with read:statuses / write:conversations", async () => {
    const none = await alice.client.get("/api/v1/conversations", { token: null });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
    const readOnly = await createUser(server, "ro", { scopes: "read:statuses" });
    expect((await readOnly.client.get("/api/v1/conversations")).status).toBe(200);
    const write = await readOnly.client.post("/api/v1/conversations/1/read");
    expect(write.status).toBe(403);
    expect(write.body).toEqual({ error: "This action is outside the authorized scopes" });
  });
});
