import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cliBeside } from "../support/cli.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { createStaff } from "../support/staff.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * Home and list pages take the status rows the render cache keeps (src/services/statuses/
 * timelines.ts keptRows) instead of reading them on every load. Each test reads the page first,
 * so that what it then changes is kept, and expects the change on the very next read.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Shown = { id: string; content: string; favourited: boolean; favourites_count: number; bookmarked: boolean; muted: boolean; pinned?: boolean; reblog: Shown | null };

async function home(user: TestUser): Promise<Shown[]> {
  const res = await user.client.get("/api/v1/timelines/home");
  expect(res.status).toBe(200);
  return res.body;
}

const byId = (page: Shown[], id: string) => page.find((s) => s.id === id);

async function reader(name: string): Promise<{ me: TestUser; friend: TestUser }> {
  const me = await createUser(server, `${name}_me`);
  const friend = await createUser(server, `${name}_friend`);
  expect((await me.client.post(`/api/v1/accounts/${friend.id}/follow`)).status).toBe(200);
  return { me, friend };
}

describe("home timeline from kept rows", () => {
  test("a favourite, a bookmark, a muted conversation and a pin show on the next read", async () => {
    const { me, friend } = await reader("kf");
    const theirs = await postStatus(friend, { status: "kept and favourited" });
    const mine = await postStatus(me, { status: "mine, to pin" });
    const before = await home(me);
    expect(byId(before, theirs.id)).toMatchObject({ favourited: false, favourites_count: 0, bookmarked: false, muted: false });
    expect(byId(before, mine.id)).toMatchObject({ pinned: false });

    expect((await me.client.post(`/api/v1/statuses/${theirs.id}/favourite`)).status).toBe(200);
    expect(byId(await home(me), theirs.id)).toMatchObject({ favourited: true, favourites_count: 1 });
    expect((await me.client.post(`/api/v1/statuses/${theirs.id}/bookmark`)).status).toBe(200);
    expect(byId(await home(me), theirs.id)).toMatchObject({ favourited: true, bookmarked: true });
    expect((await me.client.post(`/api/v1/statuses/${mine.id}/mute`)).status).toBe(200);
    expect(byId(await home(me), mine.id)).toMatchObject({ muted: true });
    expect((await me.client.post(`/api/v1/statuses/${mine.id}/pin`)).status).toBe(200);
    expect(byId(await home(me), mine.id)).toMatchObject({ pinned: true, muted: true });
    expect((await me.client.post(`/api/v1/statuses/${theirs.id}/unfavourite`)).status).toBe(200);
    expect(byId(await home(me), theirs.id)).toMatchObject({ favourited: false, favourites_count: 0, bookmarked: true });
  });

  test("an edit shows, and a deleted status and a deleted boost are gone, on the next read", async () => {
    const { me, friend } = await reader("ke");
    const other = await createUser(server, "ke_other");
    const edited = await postStatus(friend, { status: "before the edit" });
    const deleted = await postStatus(friend, { status: "about to go" });
    const original = await postStatus(other, { status: "boosted, then deleted" });
    const boost = (await friend.client.post(`/api/v1/statuses/${original.id}/reblog`)).body;
    const before = await home(me);
    expect(before.map((s) => s.id)).toEqual([boost.id, deleted.id, edited.id]);

    expect((await friend.client.put(`/api/v1/statuses/${edited.id}`, { json: { status: "after the edit" } })).status).toBe(200);
    expect(byId(await home(me), edited.id)!.content).toContain("after the edit");
    expect((await friend.client.delete(`/api/v1/statuses/${deleted.id}`)).status).toBe(200);
    expect((await home(me)).map((s) => s.id)).toEqual([boost.id, edited.id]);
    // The original goes, and its boost with it.
    expect((await other.client.delete(`/api/v1/statuses/${original.id}`)).status).toBe(200);
    expect((await home(me)).map((s) => s.id)).toEqual([edited.id]);
  });

  test("a boost's original changed shows through the boost on the next read", async () => {
    const { me, friend } = await reader("kb");
    const other = await createUser(server, "kb_other");
    const original = await postStatus(other, { status: "the original" });
    const boost = (await friend.client.post(`/api/v1/statuses/${original.id}/reblog`)).body;
    expect(byId(await home(me), boost.id)!.reblog).toMatchObject({ id: original.id, favourited: false });
    expect((await me.client.post(`/api/v1/statuses/${original.id}/favourite`)).status).toBe(200);
    expect((await other.client.put(`/api/v1/statuses/${original.id}`, { json: { status: "the original, edited" } })).status).toBe(200);
    const shown = byId(await home(me), boost.id)!;
    expect(shown.reblog).toMatchObject({ id: original.id, favourited: true, favourites_count: 1 });
    expect(shown.reblog!.content).toContain("the original, edited");
  });

  test("an author suspended by staff is gone on the next read, and back once unsuspended", async () => {
    const { me, friend } = await reader("ks");
    const admin = await createStaff(server, "ks_admin", "admin");
    const status = await postStatus(friend, { status: "from an author about to be suspended" });
    expect((await home(me)).map((s) => s.id)).toEqual([status.id]);
    expect((await admin.client.post(`/api/v1/admin/accounts/${friend.id}/action`, { json: { type: "suspend" } })).status).toBe(200);
    expect(await home(me)).toEqual([]);
    expect((await admin.client.post(`/api/v1/admin/accounts/${friend.id}/unsuspend`)).status).toBe(200);
    expect((await home(me)).map((s) => s.id)).toEqual([status.id]);
  });

  test("statuses another process deletes (the command line) are gone on the next read", async () => {
    const { me, friend } = await reader("kc");
    const status = await postStatus(friend, { status: "deleted from the command line" });
    const mine = await postStatus(me, { status: "stays" });
    expect((await home(me)).map((s) => s.id)).toEqual([mine.id, status.id]);
    const deleted = await cliBeside(server)(["accounts", "delete", friend.account.username]);
    expect(deleted.code).toBe(0);
    expect((await home(me)).map((s) => s.id)).toEqual([mine.id]);
  });
});

/**
 * WEB_THREADS=2: each serving thread keeps its own rows, dropped as the main thread's writes
 * are replayed there. Every read goes over a new connection, which the kernel gives to either
 * thread (told by the X-Request-Id's prefix); reads go on until both threads have answered.
 */
// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("home timeline from kept rows, on two serving threads", () => {
  let threaded: TestServer;
  beforeAll(async () => {
    threaded = await startTestServer({ WEB_THREADS: "2" });
  });
  afterAll(() => threaded.close());

  async function onBothThreads(user: TestUser, check: (page: Shown[]) => void) {
    const threads = new Set<string>();
    for (let i = 0; i < 200 && threads.size < 2; i++) {
      const res = await fetch(`${threaded.base}/api/v1/timelines/home`, { headers: { authorization: `Bearer ${user.token}`, connection: "close" } });
      expect(res.status).toBe(200);
      check((await res.json()) as Shown[]);
      threads.add(res.headers.get("x-request-id")!.split("-")[0]!);
    }
    expect(threads.size).toBe(2);
  }

  test("an edit and a deletion show on both threads on the next read", async () => {
    const me = await createUser(threaded, "kt_me");
    const friend = await createUser(threaded, "kt_friend");
    expect((await me.client.post(`/api/v1/accounts/${friend.id}/follow`)).status).toBe(200);
    const edited = await postStatus(friend, { status: "before the edit" });
    const deleted = await postStatus(friend, { status: "about to go" });
    await onBothThreads(me, (page) => expect(page.map((s) => s.id)).toEqual([deleted.id, edited.id]));
    expect((await friend.client.put(`/api/v1/statuses/${edited.id}`, { json: { status: "after the edit" } })).status).toBe(200);
    expect((await friend.client.delete(`/api/v1/statuses/${deleted.id}`)).status).toBe(200);
    await onBothThreads(me, (page) => {
      expect(page.map((s) => s.id)).toEqual([edited.id]);
      expect(page[0]!.content).toContain("after the edit");
    });
  });
});
