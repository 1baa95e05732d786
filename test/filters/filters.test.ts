import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(Date.UTC(2026, 10, 22, 12)) });
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const filterCount = async () => Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM custom_filters"))!.n);

async function makeFilter(user: TestUser, body: Record<string, unknown>) {
  const res = await user.client.post("/api/v2/filters", { json: body });
  expect(res.status).toBe(200);
  return res.body;
}

describe("v2 filters", () => {
  test("create with keywords (form, Rails nesting) and read back in Mastodon's shape", async () => {
    const res = await alice.client.post("/api/v2/filters", {
      form: [
        ["title", "Spoilers"],
        ["context[]", "home"],
        ["context[]", "public"],
        ["filter_action", "hide"],
        ["expires_in", "3600"],
        ["keywords_attributes[][keyword]", "dragon"],
        ["keywords_attributes[][whole_word]", "false"],
        ["keywords_attributes[][keyword]", "finale"],
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      title: "Spoilers",
      context: ["home", "public"],
      expires_at: new Date(server.clock.now() + 3_600_000).toISOString(),
      filter_action: "hide",
      keywords: [
        { id: expect.any(String), keyword: "dragon", whole_word: false },
        { id: expect.any(String), keyword: "finale", whole_word: true },
      ],
      statuses: [],
    });
    expect((await alice.client.get(`/api/v2/filters/${res.body.id}`)).body).toEqual(res.body);
    expect((await alice.client.get("/api/v2/filters")).body).toContainEqual(res.body);
  });

  test("update with nested attributes: change, add and _destroy keywords", async () => {
    const filter = await makeFilter(alice, { title: "Words", context: ["home"], keywords_attributes: [{ keyword: "one" }, { keyword: "two" }] });
    const [one, two] = filter.keywords;
    const res = await alice.client.put(`/api/v2/filters/${filter.id}`, {
      json: {
        title: "Words 2",
        filter_action: "blur",
        keywords_attributes: [{ id: one.id, keyword: "uno" }, { id: two.id, _destroy: "1" }, { keyword: "three", whole_word: false }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.title).toBe("Words 2");
    expect(res.body.filter_action).toBe("blur");
    expect(res.body.keywords.map((k: { keyword: string }) => k.keyword)).toEqual(["uno", "three"]);
  });

  test("validation failures are 422 with Mastodon's messages and store nothing", async () => {
    const before = await filterCount();
    const cases: [Record<string, unknown>, string][] = [
      [{ context: ["home"] }, "Validation failed: Title can't be blank"],
      [{ title: "x" }, "Validation failed: Context None or invalid context supplied"],
      [{ title: "x", context: ["everywhere"] }, "Validation failed: Context None or invalid context supplied"],
      [{ title: "x", context: ["home"], filter_action: "explode" }, "Validation failed: Action is not included in the list"],
      [{ title: "x".repeat(257), context: ["home"] }, "Validation failed: Title is too long (maximum is 256 characters)"],
    ];
    for (const [body, error] of cases) {
      const res = await alice.client.post("/api/v2/filters", { json: body });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error });
    }
    expect(await filterCount()).toBe(before);
  });

  test("expires_in: a century at most; zero or garbage means expired at once, blank means never", async () => {
    const before = await filterCount();
    const huge = await alice.client.post("/api/v2/filters", { json: { title: "forever", context: ["home"], expires_in: "99999999999999" } });
    expect(huge.status).toBe(422);
    expect(huge.body).toEqual({ error: "Validation failed: Expires at is invalid" });
    expect(await filterCount()).toBe(before);
    expect((await alice.client.get("/api/v2/filters")).status).toBe(200);
    const now = new Date(server.clock.now()).toISOString();
    for (const value of ["0", "abc"]) {
      const res = await alice.client.post("/api/v2/filters", { json: { title: `expired ${value}`, context: ["home"], expires_in: value } });
      expect(res.body.expires_at).toBe(now);
    }
    const never = await alice.client.post("/api/v2/filters", { json: { title: "never", context: ["home"], expires_in: "" } });
    expect(never.body.expires_at).toBeNull();
  });

  test("keywords and statuses sub-resources", async () => {
    const filter = await makeFilter(alice, { title: "Sub", context: ["thread"] });
    const added = await alice.client.post(`/api/v2/filters/${filter.id}/keywords`, { form: { keyword: "cats", whole_word: "false" } });
    expect(added.body).toEqual({ id: expect.any(String), keyword: "cats", whole_word: false });
    expect((await alice.client.get(`/api/v2/filters/${filter.id}/keywords`)).body).toEqual([added.body]);
    const changed = await alice.client.put(`/api/v2/filters/keywords/${added.body.id}`, { json: { keyword: "dogs" } });
    expect(changed.body).toEqual({ ...added.body, keyword: "dogs" });
    expect((await alice.client.get(`/api/v2/filters/keywords/${added.body.id}`)).body).toEqual(changed.body);
    const long = await alice.client.put(`/api/v2/filters/keywords/${added.body.id}`, { json: { keyword: "k".repeat(513) } });
    expect(long.status).toBe(422);
    expect(long.body).toEqual({ error: "Validation failed: Keyword is too long (maximum is 512 characters)" });
    const blank = await alice.client.post(`/api/v2/filters/${filter.id}/keywords`, { json: { keyword: " " } });
    expect(blank.status).toBe(422);
    expect(blank.body).toEqual({ error: "Validation failed: Keyword can't be blank" });
    expect((await alice.client.delete(`/api/v2/filters/keywords/${added.body.id}`)).body).toEqual({});
    expect((await alice.client.get(`/api/v2/filters/keywords/${added.body.id}`)).status).toBe(404);

    const status = await postStatus(bob, { status: "filter me" });
    const sf = await alice.client.post(`/api/v2/filters/${filter.id}/statuses`, { json: { status_id: status.id } });
    expect(sf.body).toEqual({ id: expect.any(String), status_id: status.id });
    const dup = await alice.client.post(`/api/v2/filters/${filter.id}/statuses`, { json: { status_id: status.id } });
    expect(dup.status).toBe(422);
    expect(dup.body).toEqual({ error: "Validation failed: Status has already been taken" });
    const missing = await alice.client.post(`/api/v2/filters/${filter.id}/statuses`, { json: { status_id: "42" } });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ error: "Validation failed: Status must exist" });
    const hidden = await postStatus(bob, { status: "secret", visibility: "private" });
    const invisible = await alice.client.post(`/api/v2/filters/${filter.id}/statuses`, { json: { status_id: hidden.id } });
    expect(invisible.status).toBe(422);
    expect(invisible.body).toEqual({ error: "Validation failed: Status is invalid" });
    expect((await alice.client.get(`/api/v2/filters/${filter.id}/statuses`)).body).toEqual([sf.body]);
    expect((await alice.client.get(`/api/v2/filters/statuses/${sf.body.id}`)).body).toEqual(sf.body);
    expect((await alice.client.delete(`/api/v2/filters/statuses/${sf.body.id}`)).body).toEqual({});
  });

  test("another user's filter, keyword or status filter is 404 Record not found", async () => {
    const filter = await makeFilter(alice, { title: "Private", context: ["home"], keywords_attributes: [{ keyword: "mine" }] });
    const sf = await alice.client.post(`/api/v2/filters/${filter.id}/statuses`, { json: { status_id: (await postStatus(alice, { status: "x" })).id } });
    for (const [method, path] of [
      ["GET", `/api/v2/filters/${filter.id}`],
      ["PUT", `/api/v2/filters/${filter.id}`],
      ["DELETE", `/api/v2/filters/${filter.id}`],
      ["GET", `/api/v2/filters/keywords/${filter.keywords[0].id}`],
      ["DELETE", `/api/v2/filters/keywords/${filter.keywords[0].id}`],
      ["GET", `/api/v2/filters/statuses/${sf.body.id}`],
      ["POST", `/api/v2/filters/${filter.id}/keywords`],
      ["GET", `/api/v1/filters/${filter.keywords[0].id}`],
      ["DELETE", `/api/v1/filters/${filter.keywords[0].id}`],
    ] as const) {
      const res = await bob.client.request(method, path, method === "GET" || method === "DELETE" ? {} : { json: { title: "hijack", keyword: "x" } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect((await alice.client.get(`/api/v2/filters/${filter.id}`)).body.keywords).toHaveLength(1);
  });

  test("statuses carry the viewer's matching filters in `filtered`; expired filters stop matching", async () => {
    const filter = await makeFilter(bob, { title: "Birds", context: ["home"], filter_action: "warn", expires_in: 600, keywords_attributes: [{ keyword: "Rook" }] });
    await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);
    const hit = await postStatus(alice, { status: "A rook on the roof" });
    const partial = await postStatus(alice, { status: "rookery is not a whole word match" });
    const seen = await bob.client.get(`/api/v1/statuses/${hit.id}`);
    expect(seen.body.filtered).toEqual([
      { filter: { id: filter.id, title: "Birds", context: ["home"], expires_at: filter.expires_at, filter_action: "warn" }, keyword_matches: ["rook"], status_matches: null },
    ]);
    expect((await bob.client.get(`/api/v1/statuses/${partial.id}`)).body.filtered).toEqual([]);
    const home = await bob.client.get("/api/v1/timelines/home");
    expect(home.body.find((s: { id: string }) => s.id === hit.id).filtered).toHaveLength(1);
    // Others do not see bob's filters; anonymous readers see no `filtered` key at all.
    expect((await alice.client.get(`/api/v1/statuses/${hit.id}`)).body.filtered).toEqual([]);
    expect((await alice.client.get(`/api/v1/statuses/${hit.id}`, { token: null })).body).not.toHaveProperty("filtered");

    server.clock.advance(601_000);
    expect((await bob.client.get(`/api/v1/statuses/${hit.id}`)).body.filtered).toEqual([]);
  });

  test("a status filter matches the status and boosts of it", async () => {
    const status = await postStatus(alice, { status: "plain words" });
    const filter = await makeFilter(bob, { title: "This one", context: ["public"] });
    await bob.client.post(`/api/v2/filters/${filter.id}/statuses`, { json: { status_id: status.id } });
    const boost = (await alice.client.post(`/api/v1/statuses/${status.id}/reblog`)).body;
    const seen = await bob.client.get(`/api/v1/statuses/${boost.id}`);
    expect(seen.body.filtered).toEqual([expect.objectContaining({ keyword_matches: null, status_matches: [status.id] })]);
  });
});

describe("v1 filters (deprecated)", () => {
  test("one entry per keyword, Deprecation header, create/update/delete", async () => {
    const created = await alice.client.post("/api/v1/filters", { form: [["phrase", "politics"], ["context[]", "home"], ["irreversible", "true"], ["whole_word", "false"]] });
    expect(created.status).toBe(200);
    expect(created.headers.get("deprecation")).toBe("@1668384000");
    expect(created.body).toEqual({ id: expect.any(String), phrase: "politics", context: ["home"], whole_word: false, expires_at: null, irreversible: true });
    const list = await alice.client.get("/api/v1/filters");
    expect(list.headers.get("deprecation")).toBe("@1668384000");
    expect(list.body).toContainEqual(created.body);
    const updated = await alice.client.put(`/api/v1/filters/${created.body.id}`, { json: { phrase: "elections", context: ["home", "public"], irreversible: false } });
    expect(updated.body).toEqual({ ...created.body, phrase: "elections", context: ["home", "public"], irreversible: false });
    expect((await alice.client.delete(`/api/v1/filters/${created.body.id}`)).body).toEqual({});
    expect((await alice.client.get(`/api/v1/filters/${created.body.id}`)).status).toBe(404);
  });

  test("changing shared settings of a filter with several keywords is refused", async () => {
    const filter = await makeFilter(alice, { title: "Two", context: ["home"], keywords_attributes: [{ keyword: "a" }, { keyword: "b" }] });
    const keywordId = filter.keywords[0].id;
    const res = await alice.client.put(`/api/v1/filters/${keywordId}`, { json: { context: ["public"] } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: "These parameters cannot be changed from this application because they apply to more than one filter keyword. Use a more recent application or the web interface.",
    });
    expect((await alice.client.get(`/api/v2/filters/${filter.id}`)).body.context).toEqual(["home"]);
    // Keyword-only changes are fine.
    const ok = await alice.client.put(`/api/v1/filters/${keywordId}`, { json: { whole_word: false } });
    expect(ok.status).toBe(200);
    expect(ok.body.whole_word).toBe(false);
  });

  test("v1 validation: blank phrase is 422", async () => {
    const before = await filterCount();
    const res = await alice.client.post("/api/v1/filters", { json: { phrase: "", context: ["home"] } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation failed: Title can't be blank" });
    expect(await filterCount()).toBe(before);
  });
});
