import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_FILTERS_PER_ACCOUNT, MAX_KEYWORD_CHARACTERS_PER_ACCOUNT, MAX_KEYWORDS_PER_ACCOUNT, MAX_KEYWORDS_PER_FILTER } from "../../src/services/filters.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { SseClient } from "../support/streams.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const TOO_MANY_KEYWORDS = `Validation failed: Keywords is too long (maximum is ${MAX_KEYWORDS_PER_FILTER})`;
const TOO_MANY_FILTERS = "Validation failed: You have reached the maximum number of filters";
const TOO_MANY_ACCOUNT_KEYWORDS = `Validation failed: You have reached the maximum number of filter keywords (${MAX_KEYWORDS_PER_ACCOUNT})`;
const TOO_LONG_ACCOUNT_KEYWORDS = `Validation failed: You have reached the maximum length of all filter keywords together (${MAX_KEYWORD_CHARACTERS_PER_ACCOUNT} characters)`;
/** Characters as the cap counts them: code points. */
const length = (s: string) => [...s].length;

/** Filters and keywords stored for an account. */
async function stored(user: TestUser) {
  const q = async (sql: string) => Number((await server.database.port.get<{ n: number }>(sql, [user.account.id]))!.n);
  return {
    filters: await q("SELECT count(*) AS n FROM custom_filters WHERE account_id = ?"),
    keywords: await q("SELECT count(*) AS n FROM custom_filter_keywords k JOIN custom_filters f ON f.id = k.filter_id WHERE f.account_id = ?"),
    characters: await q("SELECT coalesce(sum(length(keyword)), 0) AS n FROM custom_filter_keywords k JOIN custom_filters f ON f.id = k.filter_id WHERE f.account_id = ?"),
  };
}

const keywords = (n: number, make: (i: number) => string = (i) => `word${i}`) => Array.from({ length: n }, (_, i) => ({ keyword: make(i) }));

async function makeFilter(user: TestUser, body: Record<string, unknown>) {
  const res = await user.client.post("/api/v2/filters", { json: { context: ["home"], ...body } });
  expect(res.status).toBe(200);
  return res.body;
}

describe("caps on filters and keywords", () => {
  test("a filter of 20,000 keywords is 422 and nothing is stored", async () => {
    const mallory = await createUser(server, "mallory");
    const res = await mallory.client.post("/api/v2/filters", { json: { title: "flood", context: ["home"], keywords_attributes: keywords(20_000) } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: TOO_MANY_KEYWORDS });
    expect(await stored(mallory)).toMatchObject({ filters: 0, keywords: 0 });
    // The same as an indexed hash in a form (keywords_attributes[0][keyword]=...).
    const form: [string, string][] = [["title", "flood"], ["context[]", "home"]];
    for (let i = 0; i <= MAX_KEYWORDS_PER_FILTER; i++) form.push([`keywords_attributes[${i}][keyword]`, `w${i}`]);
    const viaForm = await mallory.client.post("/api/v2/filters", { form });
    expect(viaForm.status).toBe(422);
    expect(viaForm.body).toEqual({ error: TOO_MANY_KEYWORDS });
    expect(await stored(mallory)).toMatchObject({ filters: 0, keywords: 0 });
  });

  test("keywords past the cap are 422 however they are added; removing one makes room", async () => {
    const mallory = await createUser(server, "mallory2");
    const filter = await makeFilter(mallory, { title: "full", keywords_attributes: keywords(MAX_KEYWORDS_PER_FILTER) });
    expect(filter.keywords).toHaveLength(MAX_KEYWORDS_PER_FILTER);

    const one = await mallory.client.post(`/api/v2/filters/${filter.id}/keywords`, { json: { keyword: "one more" } });
    expect(one.status).toBe(422);
    expect(one.body).toEqual({ error: TOO_MANY_KEYWORDS });
    const nested = await mallory.client.put(`/api/v2/filters/${filter.id}`, { json: { title: "renamed", keywords_attributes: [{ keyword: "one more" }] } });
    expect(nested.status).toBe(422);
    expect(nested.body).toEqual({ error: TOO_MANY_KEYWORDS });
    expect(await stored(mallory)).toMatchObject({ filters: 1, keywords: MAX_KEYWORDS_PER_FILTER });
    // The refused update changed nothing else either (one transaction).
    expect((await mallory.client.get(`/api/v2/filters/${filter.id}`)).body.title).toBe("full");

    // Destroying one in the same request leaves room for one.
    const swap = await mallory.client.put(`/api/v2/filters/${filter.id}`, {
      json: { keywords_attributes: [{ id: filter.keywords[0].id, _destroy: true }, { keyword: "swapped in" }] },
    });
    expect(swap.status).toBe(200);
    expect(swap.body.keywords).toHaveLength(MAX_KEYWORDS_PER_FILTER);
    expect(swap.body.keywords.at(-1).keyword).toBe("swapped in");
    expect((await mallory.client.delete(`/api/v2/filters/keywords/${filter.keywords[1].id}`)).status).toBe(200);
    const added = await mallory.client.post(`/api/v2/filters/${filter.id}/keywords`, { json: { keyword: "one more" } });
    expect(added.status).toBe(200);
    expect(await stored(mallory)).toMatchObject({ filters: 1, keywords: MAX_KEYWORDS_PER_FILTER });
  });

  test("an account's keywords are capped across its filters, v1 included", async () => {
    const mallory = await createUser(server, "mallory3");
    const perFilter = MAX_KEYWORDS_PER_FILTER;
    for (let made = 0; made < MAX_KEYWORDS_PER_ACCOUNT; made += perFilter) {
      await makeFilter(mallory, { title: `part ${made}`, keywords_attributes: keywords(perFilter, (i) => `w${made + i}`) });
    }
    const before = await stored(mallory);
    expect(before.keywords).toBe(MAX_KEYWORDS_PER_ACCOUNT);
    const v2 = await mallory.client.post("/api/v2/filters", { json: { title: "more", context: ["home"], keywords_attributes: [{ keyword: "x" }] } });
    expect(v2.status).toBe(422);
    expect(v2.body).toEqual({ error: TOO_MANY_ACCOUNT_KEYWORDS });
    const v1 = await mallory.client.post("/api/v1/filters", { json: { phrase: "x", context: ["home"] } });
    expect(v1.status).toBe(422);
    expect(v1.body).toEqual({ error: TOO_MANY_ACCOUNT_KEYWORDS });
    const empty = await makeFilter(mallory, { title: "statuses only" });
    const sub = await mallory.client.post(`/api/v2/filters/${empty.id}/keywords`, { json: { keyword: "x" } });
    expect(sub.status).toBe(422);
    expect(sub.body).toEqual({ error: TOO_MANY_ACCOUNT_KEYWORDS });
    expect(await stored(mallory)).toMatchObject({ filters: before.filters + 1, keywords: MAX_KEYWORDS_PER_ACCOUNT });
  });

  test("an account's keywords are capped in characters, also when one grows", async () => {
    const mallory = await createUser(server, "mallory5");
    const full = Math.floor(MAX_KEYWORD_CHARACTERS_PER_ACCOUNT / 512);
    const filter = await makeFilter(mallory, { title: "long", keywords_attributes: keywords(full, (i) => `${i}`.padEnd(512, "é")) });
    const before = await stored(mallory);
    expect(before.characters).toBe(full * 512);
    const room = MAX_KEYWORD_CHARACTERS_PER_ACCOUNT - before.characters;
    const added = await mallory.client.post(`/api/v2/filters/${filter.id}/keywords`, { json: { keyword: "y".repeat(room + 1) } });
    expect(added.status).toBe(422);
    expect(added.body).toEqual({ error: TOO_LONG_ACCOUNT_KEYWORDS });
    // The rest, as a v1 filter (a filter of its own, with that one keyword).
    const small = await mallory.client.post("/api/v1/filters", { json: { phrase: "y".repeat(room), context: ["home"] } });
    expect(small.status).toBe(200);
    const smallFilter = (await mallory.client.get("/api/v2/filters")).body.find((f: { title: string }) => f.title === small.body.phrase);
    for (const [method, path, body] of [
      ["PUT", `/api/v2/filters/keywords/${small.body.id}`, { keyword: "z".repeat(room + 1) }],
      ["PUT", `/api/v1/filters/${small.body.id}`, { phrase: "z".repeat(room + 1) }],
      ["PUT", `/api/v2/filters/${smallFilter.id}`, { keywords_attributes: [{ id: small.body.id, keyword: "z".repeat(room + 1) }] }],
      ["POST", "/api/v1/filters", { phrase: "z", context: ["home"] }],
    ] as const) {
      const res = await mallory.client.request(method, path, { json: body });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: TOO_LONG_ACCOUNT_KEYWORDS });
    }
    expect(await stored(mallory)).toEqual({ filters: 2, keywords: full + 1, characters: MAX_KEYWORD_CHARACTERS_PER_ACCOUNT });
    expect((await mallory.client.get(`/api/v1/filters/${small.body.id}`)).body).toEqual(small.body);
    expect((await mallory.client.get(`/api/v2/filters/keywords/${small.body.id}`)).body.keyword).toBe("y".repeat(room));
  });

  test("filters past the cap are 422, through v2 and v1", async () => {
    const mallory = await createUser(server, "mallory4");
    for (let i = 0; i < MAX_FILTERS_PER_ACCOUNT; i++) await makeFilter(mallory, { title: `f${i}` });
    const v2 = await mallory.client.post("/api/v2/filters", { json: { title: "one too many", context: ["home"] } });
    expect(v2.status).toBe(422);
    expect(v2.body).toEqual({ error: TOO_MANY_FILTERS });
    const v1 = await mallory.client.post("/api/v1/filters", { json: { phrase: "one too many", context: ["home"] } });
    expect(v1.status).toBe(422);
    expect(v1.body).toEqual({ error: TOO_MANY_FILTERS });
    expect(await stored(mallory)).toMatchObject({ filters: MAX_FILTERS_PER_ACCOUNT, keywords: 0 });
    // Deleting one makes room again.
    const list = (await mallory.client.get("/api/v2/filters")).body;
    expect(list).toHaveLength(MAX_FILTERS_PER_ACCOUNT);
    await mallory.client.delete(`/api/v2/filters/${list[0].id}`);
    expect((await mallory.client.post("/api/v1/filters", { json: { phrase: "fits", context: ["home"] } })).status).toBe(200);
  });
});

describe("an account at the caps", () => {
  // Keywords of the longest kind, with what once had to be escaped for a RegExp, other scripts
  // and astral characters; and a few short ones the statuses below contain.
  const long = (i: number) => `${i} (a+)+$ [^\\]{2,}? .*|ǅ Straße 😀 ${"ä".repeat(40)}`.padEnd(512, "x");
  const short = ["C++", "(a+)+$", "ΣΊΣΥΦΟΣ", "emoji 😀", "\\d+"];

  let reader: TestUser;
  let writer: TestUser;

  beforeAll(async () => {
    reader = await createUser(server, "reader");
    writer = await createUser(server, "writer");
    // Two full filters: the short keywords and small ones, then as many of the longest kind as
    // the characters allow, filled up with small ones.
    const first = [...short, ...Array.from({ length: MAX_KEYWORDS_PER_FILTER - short.length }, (_, i) => `k${i}`)];
    const second = (longOnes: number) => [...Array.from({ length: longOnes }, (_, i) => long(i)), ...Array.from({ length: MAX_KEYWORDS_PER_FILTER - longOnes }, (_, i) => `m${i}`)];
    const total = (words: string[]) => words.reduce((n, w) => n + length(w), 0);
    let longOnes = 0;
    while (total(first) + total(second(longOnes + 1)) <= MAX_KEYWORD_CHARACTERS_PER_ACCOUNT) longOnes++;
    expect(longOnes).toBeGreaterThan(150);
    for (const [title, words] of [["list 0", first], ["list 1000", second(longOnes)]] as const) {
      await makeFilter(reader, { title, context: ["home", "public", "notifications", "thread", "account"], keywords_attributes: words.map((keyword) => ({ keyword, whole_word: true })) });
    }
    for (let n = (await stored(reader)).filters; n < MAX_FILTERS_PER_ACCOUNT; n++) await makeFilter(reader, { title: `empty ${n}` });
    expect(await stored(reader)).toMatchObject({ filters: MAX_FILTERS_PER_ACCOUNT, keywords: MAX_KEYWORDS_PER_ACCOUNT });
    expect((await stored(reader)).characters).toBeGreaterThan(MAX_KEYWORD_CHARACTERS_PER_ACCOUNT - 512);
    await reader.client.post(`/api/v1/accounts/${writer.id}/follow`);
  });

  test("every timeline answers 200 with the right matches", async () => {
    const list = (await reader.client.post("/api/v1/lists", { json: { title: "writers" } })).body;
    await reader.client.post(`/api/v1/lists/${list.id}/accounts`, { json: { account_ids: [writer.id] } });
    const stream = await SseClient.open(`${server.base}/api/v1/streaming/user`, { token: reader.token });

    const plain = await postStatus(writer, { status: "#caps nothing to see here" });
    const hits: [string, string][] = [
      ["I write c++ daily #caps", "c++"],
      ["the regex (A+)+$ is catastrophic #caps", "(A+)+$"],
      ["σίσυφος in capitals: ΣΊΣΥΦΟΣ #caps", "σίσυφος"],
      ["an emoji 😀 #caps", "emoji 😀"],
      [`@${reader.account.username} \\d+ is a digit class #caps`, "\\d+"],
    ];
    const posted = [];
    for (const [text] of hits) posted.push(await postStatus(writer, { status: text }));
    const reply = await postStatus(writer, { status: "C++ again #caps", in_reply_to_id: plain.id });

    const matchesOf = (statuses: { id: string; filtered?: { keyword_matches: string[] | null }[] }[]) =>
      Object.fromEntries(statuses.map((s) => [s.id, (s.filtered ?? []).flatMap((f) => f.keyword_matches ?? [])]));
    const expected = { [plain.id]: [], ...Object.fromEntries(posted.map((s, i) => [s.id, [hits[i]![1]]])) };

    for (const path of ["/api/v1/timelines/home", "/api/v1/timelines/public", "/api/v1/timelines/tag/caps", `/api/v1/accounts/${writer.id}/statuses`, `/api/v1/timelines/list/${list.id}`]) {
      const res = await reader.client.get(`${path}?limit=40`);
      expect(res.status).toBe(200);
      expect(matchesOf(res.body)).toMatchObject(expected);
    }
    const context = await reader.client.get(`/api/v1/statuses/${plain.id}/context`);
    expect(context.status).toBe(200);
    expect(matchesOf(context.body.descendants)).toEqual({ [reply.id]: ["C++"] });
    const notifications = await reader.client.get("/api/v1/notifications");
    expect(notifications.status).toBe(200);
    const mention = notifications.body.find((n: { type: string }) => n.type === "mention");
    expect(mention.status.filtered.map((f: { keyword_matches: string[] }) => f.keyword_matches)).toEqual([["\\d+"]]);

    const update = await stream.waitFor((e) => e.event === "update" && JSON.parse(e.data!).id === reply.id);
    expect(JSON.parse(update.data!).filtered[0].keyword_matches).toEqual(["C++"]);
    stream.close();
  });

  test("a status that runs deep into a long keyword without completing it matches nothing", async () => {
    // A keyword of the second filter, cut short; the short keywords of the first are in it.
    const status = await postStatus(writer, { status: long(3).slice(0, 490) });
    const res = await reader.client.get(`/api/v1/statuses/${status.id}`);
    expect(res.status).toBe(200);
    expect(res.body.filtered.map((f: { filter: { title: string }; keyword_matches: string[] }) => [f.filter.title, f.keyword_matches])).toEqual([["list 0", ["(a+)+$"]]]);
  });
});
