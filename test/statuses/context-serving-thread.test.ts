import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { servingThreadReader } from "../support/serving-thread.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * WEB_THREADS=2: a thread's context is answered by the serving thread itself when it would set
 * off no fill (a thread begun here never does), from its own connection, and what the main
 * thread's writes change in it shows at the next read there.
 */
// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("a thread's context on a serving thread", () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let reader: Awaited<ReturnType<typeof servingThreadReader>>;

  beforeAll(async () => {
    server = await startTestServer({ WEB_THREADS: "2" });
    alice = await createUser(server, "alice");
    bob = await createUser(server, "bob");
    carol = await createUser(server, "carol");
    dave = await createUser(server, "dave");
    reader = await servingThreadReader(server);
  });
  afterAll(async () => {
    reader?.close();
    await server?.close();
  });

  const ids = (list: { id: string }[]) => list.map((s) => s.id);

  test("answered there for a reader signed in or not, with no refresh announced", async () => {
    const top = await postStatus(alice, { status: "a thread begun here" });
    const reply = await postStatus(bob, { status: "@alice a reply", in_reply_to_id: top.id });
    const deeper = await postStatus(carol, { status: "@bob deeper", in_reply_to_id: reply.id });
    for (const token of [bob.token, undefined]) {
      const answer = await reader.get(`/api/v1/statuses/${reply.id}/context`, token);
      expect(answer.here).toBe(true);
      expect(answer.status).toBe(200);
      expect(ids(answer.body.ancestors)).toEqual([top.id]);
      expect(ids(answer.body.descendants)).toEqual([deeper.id]);
      expect(answer.headers.get("mastodon-async-refresh")).toBeNull();
    }
    // The viewer's own flags are rendered there too.
    expect((await bob.client.post(`/api/v1/statuses/${top.id}/favourite`)).status).toBe(200);
    const favourited = await reader.get(`/api/v1/statuses/${reply.id}/context`, bob.token);
    expect(favourited.here).toBe(true);
    expect(favourited.body.ancestors[0].favourited).toBe(true);
    expect(favourited.body.ancestors[0].favourites_count).toBe(1);
  });

  test("a new reply, a deletion, a mute and a block of an author show at the next read there", async () => {
    const top = await postStatus(alice, { status: "changing thread" });
    const fromCarol = await postStatus(carol, { status: "@alice from carol", in_reply_to_id: top.id });
    const path = `/api/v1/statuses/${top.id}/context`;
    const descendants = async () => {
      const answer = await reader.get(path, bob.token);
      expect(answer.here).toBe(true);
      expect(answer.status).toBe(200);
      return ids(answer.body.descendants);
    };
    expect(await descendants()).toEqual([fromCarol.id]);
    const fromDave = await postStatus(dave, { status: "@alice from dave", in_reply_to_id: top.id });
    const fromAlice = await postStatus(alice, { status: "@dave from alice", in_reply_to_id: fromDave.id });
    expect(await descendants()).toEqual([fromCarol.id, fromDave.id, fromAlice.id]);
    expect((await alice.client.delete(`/api/v1/statuses/${fromAlice.id}`)).status).toBe(200);
    expect(await descendants()).toEqual([fromCarol.id, fromDave.id]);
    expect((await bob.client.post(`/api/v1/accounts/${dave.id}/mute`)).status).toBe(200);
    expect(await descendants()).toEqual([fromCarol.id]);
    expect((await bob.client.post(`/api/v1/accounts/${carol.id}/block`)).status).toBe(200);
    expect(await descendants()).toEqual([]);
    // Others see the thread whole.
    const anonymous = await reader.get(path);
    expect(anonymous.here).toBe(true);
    expect(ids(anonymous.body.descendants)).toEqual([fromCarol.id, fromDave.id]);
  });

  test("an unknown status, a private one and a malformed id are 404 there, as on the main thread; nothing is stored", async () => {
    const hidden = await postStatus(alice, { status: "only mentioned", visibility: "direct" });
    const before = Number((await server.database.port.get<{ n: number }>("SELECT COUNT(*) AS n FROM statuses"))!.n);
    for (const [path, token] of [
      ["/api/v1/statuses/999999999/context", bob.token],
      [`/api/v1/statuses/${hidden.id}/context`, bob.token],
      [`/api/v1/statuses/${hidden.id}/context`, undefined],
      ["/api/v1/statuses/not-an-id/context", undefined],
    ] as const) {
      const answer = await reader.get(path, token);
      expect([path, answer.status, answer.body]).toEqual([path, 404, { error: "Record not found" }]);
      expect(answer.here).toBe(true);
    }
    expect(Number((await server.database.port.get<{ n: number }>("SELECT COUNT(*) AS n FROM statuses"))!.n)).toBe(before);
  });
});
