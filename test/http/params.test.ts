import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { humanize } from "../../src/http/params.ts";
import { appToken, createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import type { Client } from "../support/http.ts";
import { databaseFingerprint } from "../support/fingerprint.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Every parameter of every endpoint, sent with the wrong shape (an array or a hash where one
 * value goes, a hash inside a list of values): refused with the parameter's name, and nothing
 * changes. Silently dropping one would, for example, publish a status meant for later.
 */
let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let ids: Record<string, string>;

const fingerprint = () => databaseFingerprint(server);

beforeAll(async () => {
  server = await startTestServer({ REGISTRATIONS: "open" });
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
  const status = await postStatus(alice, { status: "mine" });
  const poll = await postStatus(bob, { status: "vote", poll: { options: ["a", "b"], expires_in: 3600 } });
  const list = await alice.client.post("/api/v1/lists", { json: { title: "friends" } });
  const filter = await alice.client.post("/api/v2/filters", { json: { title: "f", context: ["home"], keywords_attributes: [{ keyword: "k" }] } });
  const form = new FormData();
  form.append("file", new Blob([await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000" } }).png().toBuffer()]), "a.png");
  const media = await alice.client.post("/api/v1/media", { multipart: form });
  const later = new Date(server.clock.now() + 3_600_000).toISOString();
  const scheduled = await alice.client.post("/api/v1/statuses", { json: { status: "later", scheduled_at: later } });
  ids = {
    status: status.id,
    poll: poll.poll.id,
    list: list.body.id,
    filter: filter.body.id,
    keyword: filter.body.keywords[0].id,
    media: media.body.id,
    scheduled: scheduled.body.id,
    bob: bob.id,
  };
});
afterAll(() => server.close());

interface WriteCase {
  method: "POST" | "PUT" | "PATCH";
  path: () => string;
  /** A valid body the wrong value is mixed into, so that only the wrong shape can refuse it. */
  base?: Record<string, unknown>;
  /** Parameters that take one value. */
  scalars: string[];
  /** Parameters that take a list of values (a hash inside is refused). */
  lists?: string[];
  /** Parameters that take a hash (a lone value or a list is refused). */
  hashes?: string[];
  client?: () => Promise<Client>;
}

const WRITES: WriteCase[] = [
  {
    method: "POST",
    path: () => "/api/v1/statuses",
    base: { status: "hello" },
    scalars: ["status", "in_reply_to_id", "sensitive", "spoiler_text", "visibility", "language", "scheduled_at"],
    lists: ["media_ids"],
    hashes: ["poll"],
  },
  { method: "POST", path: () => "/api/v1/statuses", base: { status: "poll", poll: { options: ["a", "b"], expires_in: 600 } }, scalars: ["poll[expires_in]", "poll[multiple]", "poll[hide_totals]"], lists: ["poll[options]"] },
  { method: "PUT", path: () => `/api/v1/statuses/${ids.status}`, base: { status: "edited" }, scalars: ["status", "spoiler_text", "sensitive", "language"], lists: ["media_ids"] },
  { method: "POST", path: () => `/api/v1/statuses/${ids.status}/reblog`, scalars: ["visibility"] },
  { method: "POST", path: () => `/api/v1/polls/${ids.poll}/votes`, base: { choices: ["0"] }, scalars: [], lists: ["choices"] },
  {
    method: "PATCH",
    path: () => "/api/v1/accounts/update_credentials",
    base: { display_name: "changed" },
    scalars: ["display_name", "note", "locked", "bot", "discoverable", "hide_collections", "indexable", "source[privacy]", "source[sensitive]", "source[language]", "avatar", "header"],
    hashes: ["source"],
  },
  { method: "POST", path: () => `/api/v1/accounts/${ids.bob}/follow`, scalars: ["reblogs", "notify"], lists: ["languages"] },
  { method: "POST", path: () => `/api/v1/accounts/${ids.bob}/mute`, scalars: ["notifications", "duration"] },
  {
    method: "POST",
    path: () => "/api/v1/apps",
    base: { client_name: "typed", redirect_uris: "urn:ietf:wg:oauth:2.0:oob" },
    scalars: ["client_name", "website"],
    lists: ["redirect_uris", "scopes"],
  },
  { method: "PUT", path: () => `/api/v1/media/${ids.media}`, base: { description: "d" }, scalars: ["description", "focus", "file", "thumbnail"] },
  { method: "POST", path: () => "/api/v1/lists", base: { title: "new list" }, scalars: ["title", "replies_policy", "exclusive"] },
  { method: "PUT", path: () => `/api/v1/lists/${ids.list}`, base: { title: "renamed" }, scalars: ["title", "replies_policy", "exclusive"] },
  { method: "POST", path: () => `/api/v1/lists/${ids.list}/accounts`, scalars: [], lists: ["account_ids"] },
  { method: "POST", path: () => "/api/v2/filters", base: { title: "t", context: ["home"] }, scalars: ["title", "filter_action", "expires_in"], lists: ["context"] },
  { method: "PUT", path: () => `/api/v2/filters/${ids.filter}`, base: { title: "t2" }, scalars: ["title", "filter_action", "expires_in"], lists: ["context"] },
  { method: "POST", path: () => `/api/v2/filters/${ids.filter}/keywords`, base: { keyword: "k2" }, scalars: ["keyword", "whole_word"] },
  { method: "PUT", path: () => `/api/v2/filters/keywords/${ids.keyword}`, base: { keyword: "k3" }, scalars: ["keyword", "whole_word"] },
  { method: "POST", path: () => `/api/v2/filters/${ids.filter}/statuses`, base: { status_id: "1" }, scalars: ["status_id"] },
  { method: "POST", path: () => "/api/v1/filters", base: { phrase: "p", context: ["home"] }, scalars: ["phrase", "irreversible", "whole_word", "expires_in"], lists: ["context"] },
  { method: "PUT", path: () => `/api/v1/scheduled_statuses/${ids.scheduled}`, scalars: ["scheduled_at"] },
  { method: "POST", path: () => "/api/v1/markers", base: { notifications: { last_read_id: "1" } }, scalars: ["home[last_read_id]"], hashes: ["home"] },
  {
    method: "POST",
    path: () => "/api/v1/accounts",
    base: { username: "typed", email: "typed@example.test", password: "long enough pw", agreement: true },
    scalars: ["username", "email", "password", "locale"],
    client: async () => alice.client.withToken((await appToken(server, "read write")).token),
  },
];

/** `poll[expires_in]` set to `value` inside a copy of `base`. */
function withParam(base: Record<string, unknown>, name: string, value: unknown): Record<string, unknown> {
  const body = structuredClone(base);
  const m = /^(\w+)\[(\w+)\]$/.exec(name);
  if (!m) {
    body[name] = value;
    return body;
  }
  const outer = (body[m[1]!] ??= {}) as Record<string, unknown>;
  outer[m[2]!] = value;
  return body;
}

/** The same body as form pairs, Rails-style (`poll[options][]=a`). */
function formPairs(body: Record<string, unknown>, prefix = ""): [string, string][] {
  return Object.entries(body).flatMap(([k, v]): [string, string][] => {
    const key = prefix ? `${prefix}[${k}]` : k;
    if (Array.isArray(v)) return v.flatMap((item): [string, string][] => (item !== null && typeof item === "object" ? formPairs(item as Record<string, unknown>, `${key}[]`) : [[`${key}[]`, String(item)]]));
    if (v !== null && typeof v === "object") return formPairs(v as Record<string, unknown>, key);
    return [[key, String(v)]];
  });
}

function wrongShapes(c: WriteCase): { name: string; value: unknown }[] {
  return [
    ...c.scalars.flatMap((name) => [{ name, value: ["x"] }, { name, value: { a: "x" } }]),
    ...(c.lists ?? []).flatMap((name) => [{ name, value: [{ a: "x" }] }, { name, value: { "0": { a: "x" } } }]),
    ...(c.hashes ?? []).flatMap((name) => [{ name, value: "x" }, { name, value: ["x"] }]),
  ];
}

describe("a write parameter of the wrong shape is 422, and nothing changes", () => {
  for (const c of WRITES) {
    test(`${c.method} ${c.path.toString().replace(/^\(\) => |[`"]/g, "")}: ${[...c.scalars, ...(c.lists ?? []), ...(c.hashes ?? [])].join(", ")}`, async () => {
      const client = (await c.client?.()) ?? alice.client;
      for (const { name, value } of wrongShapes(c)) {
        const body = withParam(c.base ?? {}, name, value);
        const expected = { error: `Validation failed: ${humanize(name)} is invalid` };
        for (const encoding of ["json", "form"] as const) {
          const before = await fingerprint();
          const res = await client.request(c.method, c.path(), encoding === "json" ? { json: body } : { form: formPairs(body) });
          expect({ name, value, encoding, status: res.status, body: res.body }).toEqual({ name, value, encoding, status: 422, body: expected });
          expect(await fingerprint()).toBe(before);
        }
      }
    });
  }

  test("the same bodies with the right shapes do write (so the checks above can fail)", async () => {
    for (const c of WRITES.filter((w) => w.path() === "/api/v1/statuses" || w.path() === "/api/v1/lists" || w.method === "PATCH")) {
      const before = await fingerprint();
      const res = await alice.client.request(c.method, c.path(), { json: c.base });
      expect(res.status).toBe(200);
      expect(await fingerprint()).not.toBe(before);
    }
  });

  test("the Rails form spellings of the report: scheduled_at[]=x and scheduled_at[a]=x post nothing", async () => {
    const statuses = (await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.length;
    const scheduled = (await alice.client.get("/api/v1/scheduled_statuses")).body.length;
    for (const key of ["scheduled_at[]", "scheduled_at[a]"]) {
      const res = await alice.client.post("/api/v1/statuses", { form: [["status", "meant for later"], [key, "2099-01-01T00:00:00Z"]] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Validation failed: Scheduled at is invalid" });
    }
    expect((await alice.client.get(`/api/v1/accounts/${alice.id}/statuses`)).body.length).toBe(statuses);
    expect((await alice.client.get("/api/v1/scheduled_statuses")).body.length).toBe(scheduled);
  });

  test("uploads: description and focus of a new media, and a text where the file goes", async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000" } }).png().toBuffer();
    for (const [key, name] of [["description[]", "description"], ["focus[a]", "focus"], ["file", "file"]] as const) {
      const before = await fingerprint();
      const form = new FormData();
      if (name !== "file") form.append("file", new Blob([png]), "a.png");
      form.append(key, "x");
      const res = await alice.client.post("/api/v1/media", { multipart: form });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: `Validation failed: ${humanize(name)} is invalid` });
      expect(await fingerprint()).toBe(before);
    }
  });

  test("a hash inside a Rails-style JSON key ({\"media_ids[]\": [{}]}) is refused too", async () => {
    const before = await fingerprint();
    const res = await alice.client.post("/api/v1/statuses", { json: { status: "hello", "media_ids[]": [{ a: "x" }] } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation failed: Media ids is invalid" });
    expect(await fingerprint()).toBe(before);
  });

  test("a file where text goes is refused too", async () => {
    const before = await fingerprint();
    const form = new FormData();
    form.append("status", new Blob(["hello"]), "status.txt");
    const res = await alice.client.post("/api/v1/statuses", { multipart: form });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation failed: Status is invalid" });
    expect(await fingerprint()).toBe(before);
  });
});

/**
 * Reads: Mastodon has no rule here (`limit[]=1` is a NoMethodError, a 500, in Rails' to_i);
 * a read validates no record, so the answer is Rails' 400 for a bad request, in the same words.
 */
const READS: { path: () => string; params: string[]; lists?: string[] }[] = [
  { path: () => "/api/v1/timelines/home", params: ["limit", "max_id", "since_id", "min_id"] },
  { path: () => "/api/v1/timelines/public", params: ["local", "remote", "only_media", "limit"] },
  { path: () => "/api/v1/timelines/tag/cats", params: ["local", "remote", "only_media"], lists: ["any", "all", "none"] },
  { path: () => `/api/v1/accounts/${ids.bob}/statuses`, params: ["pinned", "exclude_replies", "exclude_reblogs", "only_media", "tagged", "max_id"] },
  { path: () => "/api/v1/notifications", params: ["account_id", "limit"], lists: ["types", "exclude_types"] },
  { path: () => "/api/v2/search", params: ["q", "type", "offset", "limit", "resolve", "following"] },
  { path: () => "/api/v1/accounts/search", params: ["q", "offset", "limit", "following"] },
  { path: () => "/api/v1/accounts/lookup", params: ["acct"] },
  { path: () => "/api/v1/accounts/relationships", params: [], lists: ["id"] },
  { path: () => "/api/v1/markers", params: [], lists: ["timeline"] },
  { path: () => `/api/v1/lists/${ids.list}/accounts`, params: ["limit"] },
];

describe("a query parameter of the wrong shape is 400", () => {
  for (const r of READS) {
    test(`GET ${r.path.toString().replace(/^\(\) => |[`"]/g, "")}: ${[...r.params, ...(r.lists ?? [])].join(", ")}`, async () => {
      const spellings = [...r.params.flatMap((p) => [[`${p}[]`, p], [`${p}[a]`, p]]), ...(r.lists ?? []).map((p) => [`${p}[][a]`, p])];
      for (const [key, name] of spellings) {
        const res = await alice.client.get(r.path(), { query: r.path().includes("search") ? { q: "a", [key!]: "1" } : { [key!]: "1" } });
        expect({ key, status: res.status, body: res.body }).toEqual({ key, status: 400, body: { error: `${humanize(name!)} is invalid` } });
      }
    });
  }
});
