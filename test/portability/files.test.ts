import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { imported, upload } from "../support/imports.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The CSV files of Mastodon's export page, on one server: exported in Mastodon's formats,
 * imported as Mastodon's import reads them (with a header row or without, with the Languages
 * column), and bad files refused whole.
 */
let server: TestServer;
let domain: string;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let dave: TestUser;
let erin: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  domain = new URL(server.base).host;
  // One after the other: the lists file gives members in the order of their ids.
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  carol = await createUser(server, "carol");
  dave = await createUser(server, "dave");
  erin = await createUser(server, "erin");
});
afterAll(() => server?.close());

const get = (user: TestUser, file: string) => user.client.get(`/api/v1/exports/${file}`);

describe("export", () => {
  test("each list is the file Mastodon's export page gives, newest first where Mastodon orders so", async () => {
    await alice.client.post(`/api/v1/accounts/${bob.id}/follow`, { json: { notify: true, languages: ["en", "de"] } });
    await alice.client.post(`/api/v1/accounts/${carol.id}/follow`, { json: { reblogs: false } });
    await alice.client.post(`/api/v1/accounts/${dave.id}/block`);
    await alice.client.post(`/api/v1/accounts/${erin.id}/mute`, { json: { notifications: false } });
    await alice.client.post("/api/v1/domain_blocks", { json: { domain: "spam.example" } });
    const post = await postStatus(bob, { status: "worth keeping" });
    await alice.client.post(`/api/v1/statuses/${post.id}/bookmark`);
    const list = await alice.client.post("/api/v1/lists", { json: { title: "Friends, close ones" } });
    await alice.client.post(`/api/v1/lists/${list.body.id}/accounts`, { json: { account_ids: [bob.id, carol.id] } });
    await bob.client.post(`/api/v1/accounts/${alice.id}/follow`);

    const following = await get(alice, "following.csv");
    expect(following.status).toBe(200);
    expect(following.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(following.headers.get("content-disposition")).toBe('attachment; filename="following_accounts.csv"');
    expect(following.text).toBe(`Account address,Show boosts,Notify on new posts,Languages\ncarol@${domain},false,false,\nbob@${domain},true,true,"en, de"\n`);
    expect((await get(alice, "followers.csv")).text).toBe(`Account address\nbob@${domain}\n`);
    expect((await get(alice, "blocks.csv")).text).toBe(`dave@${domain}\n`);
    expect((await get(alice, "mutes.csv")).text).toBe(`Account address,Hide notifications\nerin@${domain},false\n`);
    expect((await get(alice, "domain_blocks.csv")).text).toBe("spam.example\n");
    expect((await get(alice, "bookmarks.csv")).text).toBe(`${server.base}/users/bob/statuses/${post.id}\n`);
    expect((await get(alice, "lists.csv")).text).toBe(`"Friends, close ones",bob@${domain}\n"Friends, close ones",carol@${domain}\n`);

    const stats = await get(alice, "stats");
    expect(stats.body).toEqual({
      media_storage: "",
      followers_count: 1,
      following_count: 2,
      statuses_count: 0,
      lists_count: 1,
      blocks_count: 1,
      mutes_count: 1,
      domain_blocks_count: 1,
      bookmarks_count: 1,
    });
  });

  test("each file needs its scope, and a user", async () => {
    const narrow = await createUser(server, "narrow", { scopes: "read:accounts" });
    expect((await get(narrow, "stats")).status).toBe(200);
    for (const file of ["following.csv", "followers.csv", "lists.csv", "blocks.csv", "mutes.csv", "domain_blocks.csv", "bookmarks.csv"]) {
      const res = await get(narrow, file);
      expect([file, res.status, res.body]).toEqual([file, 403, { error: "This action is outside the authorized scopes" }]);
    }
    const anonymous = await alice.client.get("/api/v1/exports/following.csv", { token: null });
    expect([anonymous.status, anonymous.body]).toEqual([401, { error: "The access token is invalid" }]);
  });

  test("a long list is streamed in pages and arrives whole", async () => {
    const many = await createUser(server, "many");
    const port = server.database.port;
    // 1,200 blocked domains: more than two pages of the query.
    await port.transaction(async () => {
      for (let i = 0; i < 1200; i++) {
        await port.run("INSERT INTO account_domain_blocks (id, account_id, domain, created_at) VALUES (?, ?, ?, 0)", [9_000_000 + i, many.account.id, `d${String(i).padStart(4, "0")}.example`]);
      }
    });
    const res = await get(many, "domain_blocks.csv");
    const lines = res.text.trimEnd().split("\n");
    expect(lines.length).toBe(1200);
    expect(lines[0]).toBe("d0000.example");
    expect(lines[1199]).toBe("d1199.example");
  });
});

describe("bad files", () => {
  const state = () =>
    server.database.port.get("SELECT (SELECT count(*) FROM imports) AS imports, (SELECT count(*) FROM import_rows) AS rows, (SELECT count(*) FROM follows) AS follows, (SELECT count(*) FROM blocks) AS blocks");

  const cases: [what: string, type: string | undefined, file: string | Uint8Array<ArrayBuffer> | null, error: string, mode?: string][] = [
    ["no file", "following", null, "Validation failed: Data can't be blank"],
    ["an empty file", "following", "", "Validation failed: Data can't be blank"],
    ["only blank lines", "blocks", "\n\n\r\n", "Validation failed: Data is an empty CSV file"],
    ["no type", undefined, "bob\n", "Validation failed: Type can't be blank"],
    ["an unknown type", "statuses", "bob\n", "Validation failed: Type must be one of following, blocks, mutes, domain_blocks, bookmarks, lists"],
    ["an unknown mode", "blocks", "bob\n", "Validation failed: Mode must be merge or overwrite", "replace"],
    ["a PNG", "following", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe]), "Validation failed: Data is not a valid CSV file: it is not UTF-8 text"],
    ["NUL bytes", "blocks", "bob\0\n", "Validation failed: Data is not a valid CSV file: it is not text"],
    ["a quote never closed", "blocks", 'bob\n"carol\n', "Validation failed: Data is not a valid CSV file: line 2: a quoted field is never closed"],
    [
      "a mutes file as following",
      "following",
      "Account address,Hide notifications\nbob@example.com,true\n",
      "Validation failed: Data is incompatible with the selected import type (following): its columns are Account address, Hide notifications, as in a mutes file",
    ],
    ["a following file as blocks", "blocks", "Account address,Show boosts\nbob,true\n", "Validation failed: Data is incompatible with the selected import type (blocks): its columns are Account address, Show boosts, as in a following file"],
    ["a bookmarks file with its header as domain blocks", "domain_blocks", "#uri\nhttps://example.com/1\n", "Validation failed: Data is incompatible with the selected import type (domain_blocks): its columns are #uri, as in a bookmarks file"],
    ["a domain blocks file as following", "following", "spam.example\nother.example\n", 'Validation failed: Data line 1: "spam.example" is not an account address'],
    ["an account list as bookmarks", "bookmarks", "bob@example.com\n", 'Validation failed: Data line 1: "bob@example.com" is not a URL'],
    ["a javascript: URL", "bookmarks", "javascript:alert(1)\n", 'Validation failed: Data line 1: "javascript:alert(1)" is not an http(s) URL'],
    ["an address list as domain blocks", "domain_blocks", "bob@example.com\n", 'Validation failed: Data line 1: "bob@example.com" is not a domain'],
    ["a list line without a name", "lists", ",bob@example.com\n", "Validation failed: Data line 1: no list name"],
    ["a bad line among good ones", "blocks", "bob\ncarol@example.com\n<script>@example.com\n", 'Validation failed: Data line 3: "<script>@example.com" is not an account address'],
    ["more than 20,000 entries", "blocks", "bob\n".repeat(20_001), "Validation failed: Data contains more than 20000 rows"],
    ["more than 10 MB", "domain_blocks", `${"a".repeat(60)}.example\n`.repeat(Math.ceil((10 * 1024 * 1024 + 1) / 69)), "Validation failed: Data is too large (at most 10 MB)"],
  ];
  for (const [what, type, file, error, mode] of cases) {
    test(`${what}: 422, nothing kept`, async () => {
      const before = await state();
      const res = await upload(alice, type, file, { mode });
      expect([res.status, res.body]).toEqual([422, { error }]);
      expect(await state()).toEqual(before);
    });
  }

  test("a body past the upload cap is 413 before it is read; a token is needed", async () => {
    const res = await upload(alice, "blocks", new Uint8Array(17 * 1024 * 1024).fill(0x61));
    expect([res.status, res.body]).toEqual([413, { error: "Request body is too large" }]);
    const anonymous = await alice.client.post("/api/v1/import", { token: null, multipart: new FormData() });
    expect([anonymous.status, anonymous.body]).toEqual([401, { error: "The access token is invalid" }]);
    const reader = await createUser(server, "reader", { scopes: "read" });
    const refused = await upload(reader, "blocks", "bob\n");
    expect([refused.status, refused.body]).toEqual([403, { error: "This action is outside the authorized scopes" }]);
  });
});

describe("hand-written Mastodon files", () => {
  const relationship = async (user: TestUser, target: TestUser) => (await user.client.get("/api/v1/accounts/relationships", { query: { "id[]": target.id } })).body[0];

  test("following with the header and the Languages column: each option as written; an unknown account is reported by line", async () => {
    const ivan = await createUser(server, "ivan");
    const file = `Account address,Show boosts,Notify on new posts,Languages\n@bob@${domain.toUpperCase()},false,true,"en, fr"\ncarol,true,false,\nnobody@${domain},true,false,\n`;
    const report = await imported(ivan, "following", file);
    expect(report).toMatchObject({ type: "following", mode: "merge", state: "finished", total_items: 3, processed_items: 3, imported_items: 2, awaiting_items: 0, failed_items: 1 });
    expect(report.failures).toEqual({ unknown_account: 1, server_down: 0, refused: 0, not_found: 0, invalid: 0 });
    expect(report.failed_entries).toEqual([{ line: 4, entry: "nobody", reason: "unknown_account", detail: "there is no account nobody on this server" }]);
    expect(await relationship(ivan, bob)).toMatchObject({ following: true, showing_reblogs: false, notifying: true, languages: ["en", "fr"] });
    expect(await relationship(ivan, carol)).toMatchObject({ following: true, showing_reblogs: true, notifying: false, languages: null });
    const listed = await ivan.client.get("/api/v1/imports");
    expect(listed.body.map((i: any) => [i.id, i.state])).toEqual([[report.id, "finished"]]);
  });

  test("files without a header row: following, blocks, domain blocks, bookmarks, lists", async () => {
    const judy = await createUser(server, "judy");
    expect((await imported(judy, "following", `bob@${domain}\ncarol\n`)).imported_items).toBe(2);
    expect(await relationship(judy, bob)).toMatchObject({ following: true, showing_reblogs: true, notifying: false });
    expect((await imported(judy, "blocks", `dave\n@erin@${domain}\n`)).imported_items).toBe(2);
    expect(await relationship(judy, dave)).toMatchObject({ blocking: true });
    expect(await relationship(judy, erin)).toMatchObject({ blocking: true });
    expect((await imported(judy, "domain_blocks", "Spam.Example\nother.example\n")).imported_items).toBe(2);
    expect((await judy.client.get("/api/v1/domain_blocks")).body.sort()).toEqual(["other.example", "spam.example"]);
    const post = await postStatus(carol, { status: "bookmark me" });
    const hidden = await postStatus(carol, { status: "not for judy", visibility: "direct" });
    const report = await imported(judy, "bookmarks", `${post.uri}\n${hidden.uri}\n${server.base}/users/carol/statuses/1\n`);
    expect(report).toMatchObject({ imported_items: 1, failed_items: 2, failures: { not_found: 2 } });
    expect((await judy.client.get("/api/v1/bookmarks")).body.map((s: any) => s.id)).toEqual([post.id]);
    expect(await imported(judy, "lists", `Work,bob\nWork,carol@${domain}\nFamily,alice\nFamily,dave\n`)).toMatchObject({ imported_items: 3, failures: { refused: 1 } });
    const lists = (await judy.client.get("/api/v1/lists")).body;
    expect(lists.map((l: any) => l.title).sort()).toEqual(["Family", "Work"]);
    const work = lists.find((l: any) => l.title === "Work");
    expect((await judy.client.get(`/api/v1/lists/${work.id}/accounts`)).body.map((a: any) => a.acct).sort()).toEqual(["bob", "carol"]);
  });

  test("a file saved on Windows: byte order mark, CRLF, quoted fields, blank lines", async () => {
    const mia = await createUser(server, "mia");
    const file = `\uFEFFAccount address,Show boosts,Notify on new posts,Languages\r\n"bob@${domain}",TRUE,"false","de,  en"\r\n\r\ncarol,0,1,\r\n`;
    expect(await imported(mia, "following", file)).toMatchObject({ total_items: 2, imported_items: 2, failed_items: 0 });
    expect(await relationship(mia, bob)).toMatchObject({ following: true, showing_reblogs: true, notifying: false, languages: ["de", "en"] });
    expect(await relationship(mia, carol)).toMatchObject({ following: true, showing_reblogs: false, notifying: true });
  });

  test("mutes with their header: Hide notifications as written; a file as Mastodon writes it round-trips", async () => {
    const kim = await createUser(server, "kim");
    expect((await imported(kim, "mutes", `Account address,Hide notifications\nbob,false\ncarol@${domain},true\n`)).imported_items).toBe(2);
    expect(await relationship(kim, bob)).toMatchObject({ muting: true, muting_notifications: false });
    expect(await relationship(kim, carol)).toMatchObject({ muting: true, muting_notifications: true });
    const exported = await get(kim, "mutes.csv");
    expect(exported.text).toBe(`Account address,Hide notifications\ncarol@${domain},true\nbob@${domain},false\n`);
  });

  test("overwrite: what the file does not name goes, what it names stays or comes", async () => {
    const leo = await createUser(server, "leo");
    await imported(leo, "following", "bob\ncarol\n");
    await imported(leo, "blocks", "dave\n");
    await imported(leo, "lists", "Old,bob\nKept,carol\n");
    const report = await imported(leo, "following", "carol\nerin\n", { mode: "overwrite" });
    expect(report).toMatchObject({ mode: "overwrite", imported_items: 2 });
    expect((await get(leo, "following.csv")).text).toBe(`Account address,Show boosts,Notify on new posts,Languages\nerin@${domain},true,false,\ncarol@${domain},true,false,\n`);
    await imported(leo, "blocks", "erin\n", { mode: "overwrite" });
    expect((await get(leo, "blocks.csv")).text).toBe(`erin@${domain}\n`);
    await imported(leo, "lists", "Kept,dave\n", { mode: "overwrite" });
    expect((await get(leo, "lists.csv")).text).toBe(`Kept,dave@${domain}\n`);
    await imported(leo, "domain_blocks", "a.example\nb.example\n");
    await imported(leo, "domain_blocks", "b.example\nc.example\n", { mode: "overwrite" });
    expect((await get(leo, "domain_blocks.csv")).text).toBe("b.example\nc.example\n");
    await imported(leo, "mutes", "bob\ncarol\n");
    await imported(leo, "mutes", "Account address,Hide notifications\ncarol,false\n", { mode: "overwrite" });
    expect((await get(leo, "mutes.csv")).text).toBe(`Account address,Hide notifications\ncarol@${domain},false\n`);
    const kept = await postStatus(bob, { status: "kept" });
    const dropped = await postStatus(bob, { status: "dropped" });
    await imported(leo, "bookmarks", `${kept.uri}\n${dropped.uri}\n`);
    await imported(leo, "bookmarks", `${kept.uri}\n`, { mode: "overwrite" });
    expect((await get(leo, "bookmarks.csv")).text).toBe(`${kept.uri}\n`);
  });

  test("an import is its owner's alone to see", async () => {
    const own = await imported(alice, "domain_blocks", "mine.example\n");
    const other = await bob.client.get(`/api/v1/imports/${own.id}`);
    expect([other.status, other.body]).toEqual([404, { error: "Record not found" }]);
    expect((await bob.client.get("/api/v1/imports/not-an-id")).status).toBe(404);
    expect((await bob.client.get("/api/v1/imports")).body).toEqual([]);
  });
});
