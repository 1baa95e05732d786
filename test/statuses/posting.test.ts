import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const STATUS_KEYS = [
  "id",
  "created_at",
  "in_reply_to_id",
  "in_reply_to_account_id",
  "sensitive",
  "spoiler_text",
  "visibility",
  "language",
  "uri",
  "url",
  "replies_count",
  "reblogs_count",
  "favourites_count",
  "quotes_count",
  "edited_at",
  "favourited",
  "reblogged",
  "muted",
  "bookmarked",
  "pinned",
  "content",
  "filtered",
  "reblog",
  "application",
  "account",
  "media_attachments",
  "mentions",
  "tags",
  "emojis",
  "quote",
  "card",
  "poll",
  "quote_approval",
];

async function statusCount() {
  return Number((await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses"))!.n);
}

/** The stored Idempotency-Key rows of one account and key. */
function storedKeys(accountId: number, key: string) {
  return server.database.port.all<{ status_id: number | null; scheduled_status_id: number | null; expires_at: number }>(
    "SELECT status_id, scheduled_status_id, expires_at FROM idempotency_keys WHERE account_id = ? AND key = ?",
    [accountId, key],
  );
}

describe("POST /api/v1/statuses", () => {
  test("form body: every field of the Status, rendered HTML, mentions and tags", async () => {
    const res = await alice.client.post("/api/v1/statuses", {
      form: { status: "Hi @bob, see https://example.com/page #Rookery #rookery <b>bold</b>", visibility: "unlisted", language: "fr" },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(STATUS_KEYS);
    const s = res.body;
    expect(s.id).toMatch(/^\d+$/);
    expect(s.visibility).toBe("unlisted");
    expect(s.language).toBe("fr");
    expect(s.sensitive).toBe(false);
    expect(s.spoiler_text).toBe("");
    expect(s.uri).toBe(`${server.base}/users/alice/statuses/${s.id}`);
    expect(s.url).toBe(`${server.base}/@alice/${s.id}`);
    expect(s.content).toContain("&lt;b&gt;bold&lt;/b&gt;");
    expect(s.content).not.toContain("<b>");
    expect(s.content).toContain(`<a href="${server.base}/@bob" class="u-url mention">@<span>bob</span></a>`);
    expect(s.content).toContain(`<a href="${server.base}/tags/Rookery" class="mention hashtag" rel="tag">#<span>Rookery</span></a>`);
    expect(s.mentions).toEqual([{ id: bob.id, username: "bob", url: `${server.base}/@bob`, acct: "bob" }]);
    expect(s.tags).toEqual([{ name: "rookery", url: `${server.base}/tags/rookery` }]);
    expect(s.application).toEqual({ name: "Test client", website: null });
    expect(s.account.id).toBe(alice.id);
    // Alice's first status, counted in the answer that creates it.
    expect(s.account.statuses_count).toBe(1);
    expect([s.favourited, s.reblogged, s.muted, s.bookmarked, s.pinned]).toEqual([false, false, false, false, false]);
    expect([s.replies_count, s.reblogs_count, s.favourites_count]).toEqual([0, 0, 0]);
    expect(s.poll).toBeNull();
    expect(s.card).toBeNull();
    expect(new Date(s.created_at).toISOString()).toBe(s.created_at);
  });

  test("JSON body; visibility defaults to the user's preference; spoiler makes it sensitive", async () => {
    const user = await createUser(server, "prefers_private");
    await user.client.patch("/api/v1/accounts/update_credentials", { json: { source: { privacy: "private", language: "de" } } });
    const res = await user.client.post("/api/v1/statuses", { json: { status: "quiet", spoiler_text: "cw" } });
    expect(res.status).toBe(200);
    expect(res.body.visibility).toBe("private");
    expect(res.body.language).toBe("de");
    expect(res.body.sensitive).toBe(true);
    expect(res.body.spoiler_text).toBe("cw");
  });

  test("only a spoiler: it becomes the text", async () => {
    const res = await alice.client.post("/api/v1/statuses", { json: { status: "  ", spoiler_text: "just this" } });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe("<p>just this</p>");
    expect(res.body.spoiler_text).toBe("");
    expect(res.body.sensitive).toBe(true);
  });

  test("language codes are normalised (en-US is en)", async () => {
    const res = await alice.client.post("/api/v1/statuses", { json: { status: "x", language: "en-US" } });
    expect(res.body.language).toBe("en");
  });

  test("a 500-character limit where URLs count 23", async () => {
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "a".repeat(500) } })).status).toBe(200);
    const url = `https://example.com/${"p".repeat(300)}`;
    expect((await alice.client.post("/api/v1/statuses", { json: { status: `${"a".repeat(476)} ${url}` } })).status).toBe(200);
    const over = await alice.client.post("/api/v1/statuses", { json: { status: "a".repeat(501) } });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ error: "Validation failed: Text character limit of 500 exceeded" });
    const withSpoiler = await alice.client.post("/api/v1/statuses", { json: { status: "a".repeat(450), spoiler_text: "b".repeat(51) } });
    expect(withSpoiler.status).toBe(422);
  });

  test.each([
    [{}, "Validation failed: Text can't be blank"],
    [{ status: "   " }, "Validation failed: Text can't be blank"],
    [{ status: "x", visibility: "everyone" }, "Validation failed: Visibility is not included in the list"],
    [{ status: "x", visibility: "limited" }, "Validation failed: Visibility is not included in the list"],
    [{ status: "x", language: "klingon" }, "Validation failed: Language is not included in the list"],
    [{ status: "", visibility: "nope" }, "Validation failed: Visibility is not included in the list, Text can't be blank"],
    [{ status: "x", poll: { options: ["a", "b"] } }, "Validation failed: Deadline can't be blank, Deadline is too far into the future"],
    [{ status: "x", poll: { options: ["a"], expires_in: 300 } }, "Validation failed: Choices must have more than one item"],
    [{ status: "x", poll: { options: [], expires_in: 300 } }, "Validation failed: Choices can't be blank, Choices must have more than one item"],
    [{ status: "x", poll: { options: ["a", "b", "c", "d", "e"], expires_in: 300 } }, "Validation failed: Choices can't contain more than 4 items"],
    [{ status: "x", poll: { options: ["a", "x".repeat(51)], expires_in: 300 } }, "Validation failed: Choices cannot be longer than 50 characters each"],
    [{ status: "x", poll: { options: ["a", "a"], expires_in: 300 } }, "Validation failed: Choices contain duplicate items"],
    [{ status: "x", poll: { options: ["a", "b"], expires_in: 299 } }, "Validation failed: Deadline is too soon"],
    [{ status: "x", poll: { options: ["a", "b"], expires_in: 2629747 } }, "Validation failed: Deadline is too far into the future"],
    [{ status: "x", media_ids: ["1", "2", "3", "4", "5"] }, "Cannot attach more than 4 files"],
    [{ status: "x", media_ids: ["1"], poll: { options: ["a", "b"], expires_in: 300 } }, "Cannot attach more than 4 files"],
    [{ status: "x", media_ids: ["123456", "abc"] }, "Media 123456, abc not found or already attached to another post"],
  ])("422 for %j, and nothing is stored", async (body, message) => {
    const before = await statusCount();
    const res = await alice.client.post("/api/v1/statuses", { json: body });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: message });
    expect(await statusCount()).toBe(before);
  });

  test("poll limits at their edges are accepted", async () => {
    const min = await alice.client.post("/api/v1/statuses", { json: { status: "p", poll: { options: ["a", "b", "c", "d"], expires_in: 300 } } });
    expect(min.status).toBe(200);
    const max = await alice.client.post("/api/v1/statuses", {
      form: [
        ["status", "p"],
        ["poll[options][]", "x".repeat(50)],
        ["poll[options][]", "y"],
        ["poll[expires_in]", "2629746"],
        ["poll[multiple]", "true"],
        ["poll[hide_totals]", "1"],
      ],
    });
    expect(max.status).toBe(200);
    expect(max.body.poll.multiple).toBe(true);
    expect(max.body.poll.options.map((o: { title: string }) => o.title)).toEqual(["x".repeat(50), "y"]);
  });

  test("replies: thread fields, counts only for public and unlisted replies", async () => {
    const parent = (await alice.client.post("/api/v1/statuses", { json: { status: "root" } })).body;
    const reply = await bob.client.post("/api/v1/statuses", { json: { status: "@alice yes", in_reply_to_id: parent.id } });
    expect(reply.status).toBe(200);
    expect(reply.body.in_reply_to_id).toBe(parent.id);
    expect(reply.body.in_reply_to_account_id).toBe(alice.id);
    await bob.client.post("/api/v1/statuses", { json: { status: "private reply", in_reply_to_id: parent.id, visibility: "private" } });
    const after = await alice.client.get(`/api/v1/statuses/${parent.id}`);
    expect(after.body.replies_count).toBe(1);
  });

  test("replying to a missing or hidden status: 404 with Mastodon's message", async () => {
    const secret = (await alice.client.post("/api/v1/statuses", { json: { status: "only me and mentioned", visibility: "direct" } })).body;
    for (const id of ["999999999", secret.id, "garbage"]) {
      const before = await statusCount();
      const res = await bob.client.post("/api/v1/statuses", { json: { status: "hm", in_reply_to_id: id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "The post you are trying to reply to does not appear to exist." });
      expect(await statusCount()).toBe(before);
    }
  });

  test("no HTML from the client reaches content, whatever the field", async () => {
    const res = await alice.client.post("/api/v1/statuses", {
      json: { status: `<img src=x onerror=alert(1)>"><script>1</script> https://x.example/"><svg/onload=1>`, spoiler_text: "<i>cw</i>" },
    });
    expect(res.status).toBe(200);
    expect(res.body.content).not.toMatch(/<(img|script|svg|i)\b/);
    expect(res.body.spoiler_text).toBe("<i>cw</i>");
  });

  test("auth: 401 without a token, 403 without write:statuses, 422 for an app token", async () => {
    const anonymous = await new Client(server.base).post("/api/v1/statuses", { json: { status: "x" } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: "The access token is invalid" });
    const reader = await createUser(server, "reader", { scopes: "read" });
    const scoped = await reader.client.post("/api/v1/statuses", { json: { status: "x" } });
    expect(scoped.status).toBe(403);
    expect(scoped.body).toEqual({ error: "This action is outside the authorized scopes" });
    const narrow = await createUser(server, "narrow", { scopes: "write:statuses" });
    expect((await narrow.client.post("/api/v1/statuses", { json: { status: "ok" } })).status).toBe(200);
  });

  test("wrong types: a scalar where a scalar goes is cast; any other shape is 422, never dropped", async () => {
    // Numbers become text and any string but Rails' false values is a true boolean, as
    // Rails casts them. An array or hash where a scalar goes (or a scalar where a hash goes)
    // is refused: dropping it silently would post something the client did not ask for.
    const invalid = (name: string) => ({ status: 422, body: { error: `Validation failed: ${name} is invalid` } });
    const cases: [Record<string, unknown>, { status: number; body: Record<string, unknown> }][] = [
      [{ status: ["a", "b"] }, invalid("Status")],
      [{ status: { nested: true } }, invalid("Status")],
      [{ status: 12345 }, { status: 200, body: { content: "<p>12345</p>", sensitive: false } }],
      [{ status: "x", sensitive: "maybe" }, { status: 200, body: { content: "<p>x</p>", sensitive: true } }],
      [{ status: "x", poll: "yes" }, invalid("Poll")],
      [{ status: "x", in_reply_to_id: { a: 1 } }, invalid("In reply to")],
    ];
    for (const [body, want] of cases) {
      const before = await statusCount();
      const res = await alice.client.post("/api/v1/statuses", { json: body });
      expect({ body, status: res.status }).toEqual({ body, status: want.status });
      if (want.status === 200) {
        expect(res.body).toMatchObject(want.body);
        expect(await statusCount()).toBe(before + 1);
      } else {
        expect(res.body).toEqual(want.body);
        expect(await statusCount()).toBe(before);
      }
    }
  });
});

describe("Idempotency-Key", () => {
  test("the same key returns the first status and creates nothing more", async () => {
    const headers = { "idempotency-key": "key-1" };
    const first = await alice.client.post("/api/v1/statuses", { json: { status: "once" }, headers });
    const before = await statusCount();
    const second = await alice.client.post("/api/v1/statuses", { json: { status: "once" }, headers });
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(await statusCount()).toBe(before);
    expect(second.body).toEqual(first.body);
    expect(await storedKeys(alice.account.id, "key-1")).toEqual([{ status_id: Number(first.body.id), scheduled_status_id: null, expires_at: expect.any(Number) }]);
  });

  test("another account's same key is its own: two statuses", async () => {
    const headers = { "idempotency-key": "shared-key" };
    const before = await statusCount();
    const mine = await alice.client.post("/api/v1/statuses", { json: { status: "mine" }, headers });
    const theirs = await bob.client.post("/api/v1/statuses", { json: { status: "theirs" }, headers });
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.body.account.id).toBe(bob.id);
    expect(await statusCount()).toBe(before + 2);
    // Each repeat answers its own account's status.
    expect((await bob.client.post("/api/v1/statuses", { json: { status: "theirs" }, headers })).body.id).toBe(theirs.body.id);
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "mine" }, headers })).body.id).toBe(mine.body.id);
    expect(await statusCount()).toBe(before + 2);
  });

  test("a repeat answers the first status as it is now", async () => {
    const headers = { "idempotency-key": "as-now" };
    const first = await alice.client.post("/api/v1/statuses", { json: { status: "count me" }, headers });
    expect(first.body.favourites_count).toBe(0);
    expect((await bob.client.post(`/api/v1/statuses/${first.body.id}/favourite`)).status).toBe(200);
    const again = await alice.client.post("/api/v1/statuses", { json: { status: "count me" }, headers });
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.favourites_count).toBe(1);
  });

  test("keys are cut at 256 characters", async () => {
    const long = "k".repeat(300);
    const before = await statusCount();
    const first = await alice.client.post("/api/v1/statuses", { json: { status: "long key" }, headers: { "idempotency-key": long } });
    const cut = await alice.client.post("/api/v1/statuses", { json: { status: "long key" }, headers: { "idempotency-key": long.slice(0, 256) } });
    expect(cut.body.id).toBe(first.body.id);
    expect(await statusCount()).toBe(before + 1);
    expect(await storedKeys(alice.account.id, long.slice(0, 256))).toHaveLength(1);
  });

  test("simultaneous duplicates still create one status", async () => {
    const before = await statusCount();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => alice.client.post("/api/v1/statuses", { json: { status: "race" }, headers: { "idempotency-key": "race-key" } })),
    );
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(await statusCount()).toBe(before + 1);
    expect(await storedKeys(alice.account.id, "race-key")).toHaveLength(1);
    expect(server.ctx.services.idempotency.inFlightCount).toBe(0);
  });

  test("simultaneous invalid duplicates all fail and leave the key free", async () => {
    const before = await statusCount();
    const headers = { "idempotency-key": "bad-race" };
    const results = await Promise.all(Array.from({ length: 4 }, () => alice.client.post("/api/v1/statuses", { json: { status: "" }, headers })));
    for (const r of results) {
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ error: "Validation failed: Text can't be blank" });
    }
    expect(await statusCount()).toBe(before);
    expect(await storedKeys(alice.account.id, "bad-race")).toEqual([]);
    const fixed = await alice.client.post("/api/v1/statuses", { json: { status: "fixed" }, headers });
    expect(fixed.status).toBe(200);
    expect(await statusCount()).toBe(before + 1);
  });

  test("keys are kept for an hour", async () => {
    const headers = { "idempotency-key": "hourly" };
    const first = await alice.client.post("/api/v1/statuses", { json: { status: "hourly" }, headers });
    server.clock.advance(59 * 60 * 1000);
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "hourly" }, headers })).body.id).toBe(first.body.id);
    server.clock.advance(2 * 60 * 1000);
    expect((await alice.client.post("/api/v1/statuses", { json: { status: "hourly" }, headers })).body.id).not.toBe(first.body.id);
  });

  test("the hourly maintenance sweeps keys whose hour is over", async () => {
    const headers = { "idempotency-key": "swept" };
    const first = await alice.client.post("/api/v1/statuses", { json: { status: "swept later" }, headers });
    expect(await storedKeys(alice.account.id, "swept")).toHaveLength(1);
    server.clock.advance(30 * 60 * 1000);
    const fresh = await alice.client.post("/api/v1/statuses", { json: { status: "kept" }, headers: { "idempotency-key": "fresh" } });
    // Past the first key's hour: the wheel starts the maintenance job as the clock moves, and its
    // sweeps run one after another through the port.
    server.clock.advance(31 * 60 * 1000);
    await eventually(async () => (await storedKeys(alice.account.id, "swept")).length === 0, "the expired key swept");
    expect(await storedKeys(alice.account.id, "fresh")).toEqual([{ status_id: Number(fresh.body.id), scheduled_status_id: null, expires_at: expect.any(Number) }]);
    const again = await alice.client.post("/api/v1/statuses", { json: { status: "swept later" }, headers });
    expect(again.status).toBe(200);
    expect(again.body.id).not.toBe(first.body.id);
  });

  test("a failed attempt does not burn the key", async () => {
    const headers = { "idempotency-key": "retry-me" };
    const failed = await alice.client.post("/api/v1/statuses", { json: { status: "" }, headers });
    expect(failed.status).toBe(422);
    expect(failed.body).toEqual({ error: "Validation failed: Text can't be blank" });
    expect(await storedKeys(alice.account.id, "retry-me")).toEqual([]);
    const retried = await alice.client.post("/api/v1/statuses", { json: { status: "now valid" }, headers });
    expect(retried.status).toBe(200);
    expect(await storedKeys(alice.account.id, "retry-me")).toEqual([{ status_id: Number(retried.body.id), scheduled_status_id: null, expires_at: expect.any(Number) }]);
  });

  test("the key's status deleted since: 404", async () => {
    const headers = { "idempotency-key": "gone" };
    const first = await alice.client.post("/api/v1/statuses", { json: { status: "soon gone" }, headers });
    await alice.client.delete(`/api/v1/statuses/${first.body.id}`);
    const again = await alice.client.post("/api/v1/statuses", { json: { status: "soon gone" }, headers });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: "Record not found" });
  });
});
