import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * Reads outside a transaction share one read transaction until the event loop turns (SqlitePort's
 * `readFrom`, src/db/sqlite-port.ts), and home's Link header keeps the encoded pairs of the queries it has seen
 * (src/http/pagination.ts). A refused read must leave no transaction open behind it once the loop turns, and a
 * query asked again after others must get its own links, never another's.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** No write's transaction is open, and the reads' shared one is gone once the loop turns. */
async function expectNothingOpen() {
  expect(server.database.port.inTransaction).toBe(false);
  await new Promise((resolve) => setImmediate(resolve));
  // SQLite's shared read holds the one connection; PostgreSQL's is on a pooled one, not seen here.
  if (!onPostgres) expect(server.database.sqlite!.inTransaction).toBe(false);
}

const links = (res: { headers: Headers }) => res.headers.get("link");

describe("reads in one transaction", () => {
  test("a refused home or status read leaves nothing open: the reader's next post is stored and shows at once", async () => {
    const me = await createUser(server, "snap_me");
    const first = await postStatus(me, { status: "before the refusals" });

    const badToken = await fetch(`${server.base}/api/v1/timelines/home`, { headers: { authorization: "Bearer not-a-token" } });
    expect(badToken.status).toBe(401);
    expect(await badToken.json()).toEqual({ error: "The access token is invalid" });
    const unknown = await me.client.get("/api/v1/statuses/99999999999");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: "Record not found" });
    const ignoredCursor = await me.client.get("/api/v1/timelines/home", { query: { max_id: "not-an-id" } });
    expect(ignoredCursor.status).toBe(200);
    await expectNothingOpen();
    // Nothing the refusals touched changed: the one status is still the whole timeline.
    expect((await me.client.get("/api/v1/timelines/home")).body.map((s: { id: string }) => s.id)).toEqual([first.id]);

    const second = await postStatus(me, { status: "after the refusals" });
    await expectNothingOpen();
    expect((await me.client.get("/api/v1/timelines/home")).body.map((s: { id: string }) => s.id)).toEqual([second.id, first.id]);
    const read = await me.client.get(`/api/v1/statuses/${second.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: second.id, favourited: false });
    expect((await me.client.post(`/api/v1/statuses/${second.id}/favourite`)).status).toBe(200);
    expect((await me.client.get(`/api/v1/statuses/${second.id}`)).body).toMatchObject({ favourited: true, favourites_count: 1 });
    await expectNothingOpen();
  });
});

describe("Link headers of the queries asked before", () => {
  test("each query gets its own links, asked again after others", async () => {
    const me = await createUser(server, "link_me");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift((await postStatus(me, { status: `linked ${i}` })).id);
    const page = (query: Record<string, string>) => me.client.get("/api/v1/timelines/home", { query });
    const expected = (limit: string | null, last: string, top: string) => {
      const kept = limit === null ? "" : `limit=${limit}&`;
      return `<${server.base}/api/v1/timelines/home?${kept}max_id=${last}>; rel="next", <${server.base}/api/v1/timelines/home?${kept}min_id=${top}>; rel="prev"`;
    };
    expect(links(await page({ limit: "2" }))).toBe(expected("2", ids[1]!, ids[0]!));
    expect(links(await page({ limit: "3" }))).toBe(expected("3", ids[2]!, ids[0]!));
    expect(links(await page({ limit: "2", max_id: ids[1]! }))).toBe(expected("2", ids[3]!, ids[2]!));
    expect(links(await page({}))).toBe(expected(null, ids[4]!, ids[0]!));
    expect(links(await page({ limit: "2" }))).toBe(expected("2", ids[1]!, ids[0]!));
    // Only limit and local are carried: never a token, nor anything else of the query.
    const withToken = await fetch(`${server.base}/api/v1/timelines/home?access_token=${me.token}&limit=2&local=true&extra=1`);
    expect(withToken.status).toBe(200);
    expect(links(withToken)).toBe(
      `<${server.base}/api/v1/timelines/home?limit=2&local=true&max_id=${ids[1]}>; rel="next", <${server.base}/api/v1/timelines/home?limit=2&local=true&min_id=${ids[0]}>; rel="prev"`,
    );
  });

  test("an escaped path and array parameters are carried as they were", async () => {
    const me = await createUser(server, "link_tag");
    const tagged = await postStatus(me, { status: "about #café" });
    const res = await fetch(`${server.base}/api/v1/timelines/tag/caf%C3%A9?limit=1&any[]=x&any[]=y%20z`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }[]).map((s) => s.id)).toEqual([tagged.id]);
    expect(links(res)).toBe(
      `<${server.base}/api/v1/timelines/tag/caf%C3%A9?limit=1&max_id=${tagged.id}>; rel="next", <${server.base}/api/v1/timelines/tag/caf%C3%A9?limit=1&min_id=${tagged.id}>; rel="prev"`,
    );
  });
});
