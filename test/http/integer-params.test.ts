import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { databaseFingerprint } from "../support/fingerprint.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Integer parameters past anything the database or a date can hold, negative, fractional or no
 * number at all: each endpoint answers as Rails' to_i would read them (clamped where SQLite or
 * a clock has bounds), never 500.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let statusId: string;
let listId: string;

const HUGE = "99999999999999999999";
const VALUES = [HUGE, `-${HUGE}`, "1.5", "-1.5", "abc", "", "1e400", "9007199254740993"];

const fingerprint = () => databaseFingerprint(server);

const count = async (table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;

beforeAll(async () => {
  server = await startTestServer();
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  statusId = (await postStatus(bob, { status: "hello #cats" })).id;
  await postStatus(alice, { status: "mine #cats" });
  listId = (await alice.client.post("/api/v1/lists", { json: { title: "friends" } })).body.id;
});
afterAll(() => server.close());

describe("reads", () => {
  const READS: [path: () => string, params: string[]][] = [
    [() => "/api/v1/directory", ["limit", "offset"]],
    [() => "/api/v1/accounts/search?q=a", ["limit", "offset"]],
    [() => "/api/v2/search?q=a&type=accounts", ["limit", "offset"]],
    [() => "/api/v2/search?q=cats&type=hashtags", ["limit", "offset"]],
    [() => "/api/v2/search?q=hello&type=statuses", ["limit", "offset", "max_id", "min_id"]],
    [() => "/api/v1/trends/tags", ["limit", "offset"]],
    [() => "/api/v1/timelines/public", ["limit", "max_id", "since_id", "min_id"]],
    [() => "/api/v1/timelines/home", ["limit", "max_id", "since_id", "min_id"]],
    [() => "/api/v1/timelines/tag/cats", ["limit", "max_id", "min_id"]],
    [() => "/api/v1/notifications", ["limit", "max_id", "since_id", "min_id"]],
    [() => "/api/v2/notifications", ["limit", "max_id", "since_id", "min_id"]],
    [() => `/api/v1/accounts/${bob.id}/statuses`, ["limit", "max_id", "since_id", "min_id"]],
    [() => `/api/v1/accounts/${bob.id}/followers`, ["limit", "max_id", "since_id"]],
    [() => `/api/v1/lists/${listId}/accounts`, ["limit", "max_id", "since_id"]],
    [() => "/api/v1/favourites", ["limit", "max_id", "min_id"]],
    [() => `/api/oembed?url=${encodeURIComponent(`${server.base}/@bob/${statusId}`)}`, ["maxwidth"]],
  ];

  test("huge, negative, fractional and non-numeric integers: 200 everywhere, and nothing changes", async () => {
    const before = await fingerprint();
    for (const [path, params] of READS) {
      for (const param of params) {
        for (const value of VALUES) {
          const url = `${path()}${path().includes("?") ? "&" : "?"}${param}=${encodeURIComponent(value)}`;
          const res = await alice.client.get(url);
          expect({ url, status: res.status }).toEqual({ url, status: 200 });
          expect(typeof res.body).toBe("object");
        }
      }
    }
    expect(await fingerprint()).toBe(before);
  });

  test("the directory without a token: a huge offset is past the end, a huge limit is Mastodon's cap", async () => {
    const anon = new Client(server.base);
    const all = await anon.get("/api/v1/directory");
    expect(all.body.map((a: { username: string }) => a.username).sort()).toEqual(["alice", "bob"]);
    const far = await anon.get(`/api/v1/directory?offset=${HUGE}`);
    expect(far.status).toBe(200);
    expect(far.body).toEqual([]);
    const many = await anon.get(`/api/v1/directory?limit=${HUGE}&offset=-${HUGE}`);
    expect(many.status).toBe(200);
    expect(many.body).toHaveLength(2);
    // Rails' to_i: "1.9" is 1, "abc" is 0 (an empty page, as Mastodon's limit(0)).
    expect((await anon.get("/api/v1/directory?limit=1.9")).body).toHaveLength(1);
    expect((await anon.get("/api/v1/directory?limit=abc")).body).toEqual([]);
  });

  test("search offsets past the end are empty pages", async () => {
    for (const type of ["accounts", "hashtags", "statuses"]) {
      const res = await alice.client.get(`/api/v2/search?q=a&type=${type}&offset=${HUGE}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accounts: [], statuses: [], hashtags: [] });
    }
    const accounts = await alice.client.get(`/api/v1/accounts/search?q=bob&offset=${HUGE}`);
    expect(accounts.status).toBe(200);
    expect(accounts.body).toEqual([]);
  });
});

describe("writes", () => {
  test("a mute's duration past any date is clamped to one (a thousand years), negative is no expiry", async () => {
    for (const duration of [HUGE, 1e300, "1e400"]) {
      const res = await alice.client.post(`/api/v1/accounts/${bob.id}/mute`, { json: { duration } });
      expect(res.status).toBe(200);
      expect(res.body.muting).toBe(true);
      const row = (await server.database.port.get<{ expires_at: number | null }>("SELECT expires_at FROM mutes"))!;
      if (duration === "1e400") {
        expect(row.expires_at).toBeNull();
        continue;
      }
      expect(Number.isSafeInteger(row.expires_at)).toBe(true);
      const years = (row.expires_at! - server.clock.now()) / (365 * 24 * 3600 * 1000);
      expect(Math.round(years)).toBe(1000);
      const mutes = await alice.client.get("/api/v1/mutes");
      expect(mutes.status).toBe(200);
      expect(new Date(mutes.body[0].mute_expires_at).getTime()).toBe(row.expires_at!);
    }
    expect((await alice.client.post(`/api/v1/accounts/${bob.id}/mute`, { json: { duration: -5 } })).status).toBe(200);
    expect(await server.database.port.get("SELECT expires_at FROM mutes")).toEqual({ expires_at: null });
    expect((await alice.client.post(`/api/v1/accounts/${bob.id}/unmute`)).status).toBe(200);
  });

  test("a poll's expires_in past any date is too far, and nothing is posted", async () => {
    const before = await count("statuses");
    for (const expires_in of [HUGE, 1e300, "1e400"]) {
      const res = await alice.client.post("/api/v1/statuses", { json: { status: "vote", poll: { options: ["a", "b"], expires_in } } });
      expect(res.status).toBe(422);
      // "1e400" reads as no number (to_i reads 1): too soon either way.
      expect(res.body).toEqual({ error: `Validation failed: Deadline is ${expires_in === "1e400" ? "too soon" : "too far into the future"}` });
    }
    const negative = await alice.client.post("/api/v1/statuses", { json: { status: "vote", poll: { options: ["a", "b"], expires_in: `-${HUGE}` } } });
    expect(negative.status).toBe(422);
    expect(negative.body).toEqual({ error: "Validation failed: Deadline is too soon" });
    expect(await count("statuses")).toBe(before);
  });

  test("a filter's expires_in past any date is invalid, and nothing is stored", async () => {
    for (const expires_in of [HUGE, `-${HUGE}`, 1e300]) {
      const v2 = await alice.client.post("/api/v2/filters", { json: { title: "t", context: ["home"], expires_in } });
      expect(v2.status).toBe(422);
      expect(v2.body).toEqual({ error: "Validation failed: Expires at is invalid" });
      const v1 = await alice.client.post("/api/v1/filters", { json: { phrase: "t", context: ["home"], expires_in } });
      expect(v1.status).toBe(422);
      expect(v1.body).toEqual({ error: "Validation failed: Expires at is invalid" });
    }
    expect(await count("custom_filters")).toBe(0);
  });
});
