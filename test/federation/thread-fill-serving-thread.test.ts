import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { servingThreadReader } from "../support/serving-thread.ts";
import { startThreadServer } from "../support/thread-server.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * WEB_THREADS=2: the serving thread answers a remote thread's context itself only when the
 * main thread would fetch nothing for it and tell of no fill: a signed-in reader's open that
 * would start a fill, or fetch missing ancestors, and anyone's read while a fill runs (its
 * refresh, counted as it goes, is the main thread's), are passed to the main thread, which
 * answers as it does alone. Every read here goes over a connection the serving thread took.
 */
let server: TestServer;
let alice: TestUser;
let remote: Awaited<ReturnType<typeof startThreadServer>>;
let dave: string;
let reader: Awaited<ReturnType<typeof servingThreadReader>>;

beforeAll(async () => {
  // Every test below skips in the PostgreSQL test mode (serving threads are SQLite's).
  if (onPostgres) return;
  // Rate limits on: a read the serving thread begins and then passes on is counted once.
  server = await startTestServer({ HOST: "127.0.0.2", ALLOW_PRIVATE_ADDRESSES: "true", WEB_THREADS: "2", RATE_LIMITS: "on" });
  alice = await createUser(server, "alice");
  remote = await startThreadServer("127.0.0.35");
  dave = remote.actor("dave");
  reader = await servingThreadReader(server);
});
afterAll(async () => {
  reader?.close();
  await server?.close();
  remote?.stop();
});

const HEADER = /^id="([A-Za-z0-9_-]+)", retry=3, result_count=(\d+)$/;

/** The status at `uri`, fetched and stored as search with resolve=true does; its id here. */
async function resolve(uri: string): Promise<string> {
  const res = await alice.client.get("/api/v2/search", { query: { q: uri, resolve: "true", type: "statuses" } });
  expect(res.status).toBe(200);
  expect(res.body.statuses).toHaveLength(1);
  return res.body.statuses[0].id;
}

/** The context read on the serving thread's connection, with the refresh it announces. */
async function context(id: string, token?: string) {
  const answer = await reader.get(`/api/v1/statuses/${id}/context`, token);
  expect(answer.status).toBe(200);
  const header = answer.headers.get("mastodon-async-refresh");
  return { ...answer, header, refreshId: header ? HEADER.exec(header)![1]! : null };
}

async function finished(refreshId: string) {
  return eventually(async () => {
    const res = await alice.client.get(`/api/v1_alpha/async_refreshes/${refreshId}`);
    return res.body.async_refresh?.status === "finished" && res.body;
  }, "the async refresh to finish", 30_000);
}

// Skipped in the PostgreSQL test mode: serving threads split reads from SQLite's one writer (WEB_THREADS must be 1 on PostgreSQL).
describe.skipIf(onPostgres)("a remote thread's context on a serving thread", () => {
  test("an anonymous read is answered there and fetches nothing; a signed-in open is passed and fills once; while it runs every read is passed and told of it; then the thread answers alone", async () => {
    const root = remote.thread("/st/root", dave, "a remote root", [remote.thread("/st/r0", dave, "a reply", [], { inReplyTo: `${remote.base}/st/root` })]);
    const id = await resolve(root);
    // From now on the root's document is held until released: the fill waits on it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const served = remote.documentAt("/st/root");
    remote.route("/st/root", async () => (await held, served));
    const asked = remote.count("/st/");

    const anonymous = await context(id);
    expect(anonymous.here).toBe(true);
    expect(anonymous.header).toBeNull();
    expect(anonymous.body.descendants).toEqual([]);
    expect(remote.count("/st/")).toBe(asked);

    const first = await context(id, alice.token);
    expect(first.here).toBe(false);
    expect(first.header).toBe(`id="${first.refreshId}", retry=3, result_count=0`);
    expect(first.body.descendants).toEqual([]);
    // Running: signed in or not, the read is passed and told of the same work; none starts a second.
    const remaining = (answer: { headers: Headers }) => Number(answer.headers.get("x-ratelimit-remaining"));
    const passedAgain: Awaited<ReturnType<typeof context>>[] = [];
    for (const token of [alice.token, undefined]) {
      const again = await context(id, token);
      expect(again.here).toBe(false);
      expect(again.refreshId).toBe(first.refreshId);
      passedAgain.push(again);
    }
    // Each passed read counted once against alice's limit (begun here, answered there).
    expect(remaining(first)).toBeGreaterThan(250);
    expect(remaining(passedAgain[0]!)).toBe(remaining(first) - 1);
    expect(passedAgain[0]!.headers.get("x-ratelimit-limit")).toBe("300");
    release();
    expect(await finished(first.refreshId!)).toEqual({ async_refresh: { id: first.refreshId, status: "finished", result_count: 1 } });
    // Filled once: the root asked at the resolve and by the one fill.
    expect(remote.count("/st/root")).toBe(2);

    // Finished, within the cooldown: answered there, with the reply, for anyone; nothing more is asked.
    const after = remote.gets.length;
    for (const token of [alice.token, undefined]) {
      const read = await context(id, token);
      expect(read.here).toBe(true);
      expect(read.header).toBeNull();
      expect(read.body.descendants.map((s: any) => s.uri)).toEqual([`${remote.base}/st/r0`]);
    }
    expect(remote.gets.length).toBe(after);
  });

  test("a remote reply whose parent is missing: the signed-in read is passed and fetches it; an anonymous one is answered there and fetches nothing", async () => {
    const parentUri = `${remote.base}/anc/parent`;
    const child = remote.thread("/anc/child", dave, "a reply to a status not yet served", [], { inReplyTo: parentUri });
    const id = await resolve(child);
    remote.thread("/anc/parent", dave, "the parent, served now", []);
    const asked = remote.count("/anc/parent");

    const anonymous = await context(id);
    expect(anonymous.here).toBe(true);
    expect(anonymous.body.ancestors).toEqual([]);
    expect(remote.count("/anc/parent")).toBe(asked);

    const signedIn = await context(id, alice.token);
    expect(signedIn.here).toBe(false);
    expect(signedIn.body.ancestors.map((s: any) => s.uri)).toEqual([parentUri]);
    expect(remote.count("/anc/parent")).toBeGreaterThan(asked);
    if (signedIn.refreshId) await finished(signedIn.refreshId);
  });
});
