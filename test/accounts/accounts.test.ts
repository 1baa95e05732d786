import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { appToken, createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let http: Client;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATIONS: "open" });
  http = new Client(server.base);
  alice = await createUser(server, "alice");
  bob = await createUser(server, "bob");
});
afterAll(() => server.close());

const ACCOUNT_KEYS = [
  "id",
  "username",
  "acct",
  "display_name",
  "locked",
  "bot",
  "discoverable",
  "indexable",
  "group",
  "created_at",
  "note",
  "url",
  "uri",
  "avatar",
  "avatar_static",
  "header",
  "header_static",
  "followers_count",
  "following_count",
  "statuses_count",
  "last_status_at",
  "hide_collections",
  "noindex",
  "emojis",
  "roles",
  "fields",
];

describe("POST /api/v1/accounts (registration)", () => {
  test("an app token registers an account that can sign in at once", async () => {
    const { token } = await appToken(server, "read write");
    const res = await http.post("/api/v1/accounts", {
      token,
      form: { username: "newbie", email: "newbie@example.test", password: "s3cret-enough", agreement: "true", locale: "en" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: "Bearer", scope: "read write" });
    const me = await http.get("/api/v1/accounts/verify_credentials", { token: res.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.username).toBe("newbie");
    expect(me.body.acct).toBe("newbie");
  });

  test("invalid input: 422 with Mastodon's error and details, nothing stored", async () => {
    const { token } = await appToken(server, "read write");
    const res = await http.post("/api/v1/accounts", {
      token,
      json: { username: "alice", email: "bad-email", password: "short", agreement: false },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error:
        "Validation failed: E-mail address is invalid, Password is too short (minimum is 8 characters), Username has already been taken, Service agreement must be accepted",
      details: {
        email: [{ error: "ERR_INVALID", description: "is invalid" }],
        password: [{ error: "ERR_TOO_SHORT", description: "is too short (minimum is 8 characters)" }],
        username: [{ error: "ERR_TAKEN", description: "has already been taken" }],
        agreement: [{ error: "ERR_ACCEPTED", description: "must be accepted" }],
      },
    });

    const more = await http.post("/api/v1/accounts", {
      token,
      json: { username: "bad name!", email: "ALICE@example.test", password: "x".repeat(73), agreement: "1" },
    });
    expect(more.status).toBe(422);
    expect(more.body.details).toEqual({
      email: [{ error: "ERR_TAKEN", description: "has already been taken" }],
      password: [{ error: "ERR_TOO_LONG", description: "is too long (maximum is 72 characters)" }],
      username: [{ error: "ERR_INVALID", description: "must contain only letters, numbers and underscores" }],
    });

    const blank = await http.post("/api/v1/accounts", { token, json: { agreement: true } });
    expect(blank.status).toBe(422);
    expect(Object.keys(blank.body.details)).toEqual(["email", "password", "username"]);
    expect(blank.body.details.username[0].error).toBe("ERR_BLANK");

    const reserved = await http.post("/api/v1/accounts", { token, json: { username: "Admin", email: "a@b.test", password: "longenough", agreement: true } });
    expect(reserved.body.details.username).toEqual([{ error: "ERR_RESERVED", description: "is reserved" }]);

    const tooLong = await http.post("/api/v1/accounts", { token, json: { username: "a".repeat(31), email: "c@d.test", password: "longenough", agreement: true } });
    expect(tooLong.body.details.username).toEqual([{ error: "ERR_TOO_LONG", description: "is too long (maximum is 30 characters)" }]);

    expect((await server.ctx.services.accounts.getLocal("bad name!"))).toBeUndefined();
    expect((await server.ctx.services.accounts.list()).some((r) => r.email === "a@b.test")).toBe(false);
  });

  test("usernames are unique regardless of case", async () => {
    const { token } = await appToken(server, "write");
    const res = await http.post("/api/v1/accounts", { token, json: { username: "ALICE", email: "other@example.test", password: "longenough", agreement: true } });
    expect(res.status).toBe(422);
    expect(res.body.details.username[0].error).toBe("ERR_TAKEN");
  });

  test("needs a token with write:accounts", async () => {
    const none = await http.post("/api/v1/accounts", { json: { username: "x" } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
    const { token } = await appToken(server, "read");
    const scoped = await http.post("/api/v1/accounts", { token, json: { username: "x" } });
    expect(scoped.status).toBe(403);
    expect(scoped.body).toEqual({ error: "This action is outside the authorized scopes" });
  });

  test("closed registrations answer 403 Forbidden", async () => {
    const closed = await startTestServer({ REGISTRATIONS: "closed" });
    try {
      const { token } = await appToken(closed, "read write");
      const res = await new Client(closed.base).post("/api/v1/accounts", {
        token,
        json: { username: "someone", email: "someone@example.test", password: "longenough", agreement: true },
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: "Forbidden" });
      expect((await closed.ctx.services.accounts.getLocal("someone"))).toBeUndefined();
    } finally {
      await closed.close();
    }
  });
});

describe("the account entity", () => {
  test("GET /api/v1/accounts/:id has every field in Mastodon's order", async () => {
    const res = await http.get(`/api/v1/accounts/${alice.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(ACCOUNT_KEYS);
    expect(res.body).toMatchObject({
      id: alice.id,
      username: "alice",
      acct: "alice",
      display_name: "",
      locked: false,
      bot: false,
      note: "",
      url: `${server.base}/@alice`,
      uri: `${server.base}/users/alice`,
      avatar: `${server.base}/avatars/original/missing.png`,
      header: `${server.base}/headers/original/missing.png`,
      followers_count: 0,
      last_status_at: null,
      emojis: [],
      fields: [],
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
    const avatar = await fetch(res.body.avatar);
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get("content-type")).toBe("image/png");
  });

  test("unknown and malformed ids are 404", async () => {
    for (const id of ["999999", "abc", "-1", "1e5"]) {
      const res = await http.get(`/api/v1/accounts/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
  });

  test("lookup by acct", async () => {
    expect((await http.get("/api/v1/accounts/lookup", { query: { acct: "ALICE" } })).body.id).toBe(alice.id);
    expect((await http.get("/api/v1/accounts/lookup", { query: { acct: `@alice@${server.ctx.config.domain}` } })).body.id).toBe(alice.id);
    for (const acct of ["nobody", "", "alice@elsewhere.example"]) {
      const res = await http.get("/api/v1/accounts/lookup", { query: { acct } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
  });

  test("GET /api/v1/accounts?id[]= returns the known ones in order", async () => {
    const res = await http.get("/api/v1/accounts", { query: { "id[]": [bob.id, "123", alice.id] } });
    expect(res.body.map((a: { id: string }) => a.id)).toEqual([bob.id, alice.id]);
  });

  test("verify_credentials adds source and role", async () => {
    const res = await alice.client.get("/api/v1/accounts/verify_credentials");
    expect(res.status).toBe(200);
    expect(res.body.source).toEqual({
      privacy: "public",
      sensitive: false,
      language: null,
      note: "",
      fields: [],
      follow_requests_count: 0,
      hide_collections: false,
      discoverable: true,
      indexable: true,
      quote_policy: "public",
    });
    expect(res.body.role).toEqual({ id: "-99", name: "", permissions: "65536", color: "", highlighted: false });
  });
});

describe("PATCH /api/v1/accounts/update_credentials", () => {
  test("display name, note, flags, fields and defaults", async () => {
    const user = await createUser(server, "carol");
    const res = await user.client.patch("/api/v1/accounts/update_credentials", {
      form: [
        ["display_name", "Carol <3"],
        ["note", "Hello @alice, see https://example.com #intro\n\nbye <b>"],
        ["locked", "true"],
        ["bot", "1"],
        ["fields_attributes[0][name]", "Site"],
        ["fields_attributes[0][value]", "https://carol.example"],
        ["fields_attributes[1][name]", "Pronouns"],
        ["fields_attributes[1][value]", "she/her"],
        ["source[privacy]", "unlisted"],
        ["source[sensitive]", "true"],
        ["source[language]", "fr"],
        ["source[quote_policy]", "followers"],
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.display_name).toBe("Carol <3");
    expect(res.body.locked).toBe(true);
    expect(res.body.bot).toBe(true);
    expect(res.body.note).toContain('<span class="h-card" translate="no"><a href="' + server.base + '/@alice" class="u-url mention">@<span>alice</span></a></span>');
    expect(res.body.note).toContain("#<span>intro</span>");
    expect(res.body.note).toContain("</p><p>bye &lt;b&gt;</p>");
    expect(res.body.source.note).toBe("Hello @alice, see https://example.com #intro\n\nbye <b>");
    expect(res.body.fields).toHaveLength(2);
    expect(res.body.fields[0].name).toBe("Site");
    expect(res.body.fields[0].value).toContain('rel="me nofollow noopener noreferrer"');
    expect(res.body.fields[1]).toEqual({ name: "Pronouns", value: "she/her", verified_at: null });
    expect(res.body.source.fields[0]).toEqual({ name: "Site", value: "https://carol.example", verified_at: null });
    expect(res.body.source).toMatchObject({ privacy: "unlisted", sensitive: true, language: "fr", quote_policy: "followers" });
    const prefs = await user.client.get("/api/v1/preferences");
    expect(prefs.body).toEqual({
      "posting:default:visibility": "unlisted",
      "posting:default:sensitive": true,
      "posting:default:language": "fr",
      "posting:default:quote_policy": "followers",
      "reading:expand:media": "default",
      "reading:expand:spoilers": false,
      "reading:autoplay:gifs": false,
    });
  });

  test("JSON bodies with fields as an array", async () => {
    const user = await createUser(server, "dave");
    const res = await user.client.patch("/api/v1/accounts/update_credentials", {
      json: { display_name: "Dave", fields_attributes: [{ name: "a", value: "1" }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.fields).toEqual([{ name: "a", value: "1", verified_at: null }]);
  });

  test("limits: 422 and nothing changes", async () => {
    const user = await createUser(server, "erin");
    const long = await user.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "x".repeat(31), note: "ok" } });
    expect(long.status).toBe(422);
    expect(long.body.error).toBe("Validation failed: Display name is too long (maximum is 30 characters)");
    const note = await user.client.patch("/api/v1/accounts/update_credentials", { json: { note: "y".repeat(501) } });
    expect(note.status).toBe(422);
    expect(note.body.error).toBe("Validation failed: Note character limit of 500 exceeded");
    const fields = await user.client.patch("/api/v1/accounts/update_credentials", {
      json: { fields_attributes: Array.from({ length: 5 }, (_, i) => ({ name: `n${i}`, value: "v" })) },
    });
    expect(fields.status).toBe(422);
    const privacy = await user.client.patch("/api/v1/accounts/update_credentials", { json: { source: { privacy: "everyone" } } });
    expect(privacy.status).toBe(422);
    const me = await user.client.get("/api/v1/accounts/verify_credentials");
    expect(me.body.display_name).toBe("");
    expect(me.body.note).toBe("");
    expect(me.body.fields).toEqual([]);
    expect(me.body.source.privacy).toBe("public");
  });

  test("avatar and header are decoded, resized, stripped and served", async () => {
    const user = await createUser(server, "frank");
    const png = await sharp({ create: { width: 900, height: 600, channels: 3, background: "#3366aa" } }).png().toBuffer();
    const form = new FormData();
    form.append("avatar", new Blob([png], { type: "image/png" }), "me.png");
    form.append("header", new Blob([png], { type: "application/octet-stream" }), "header.bin");
    const res = await user.client.patch("/api/v1/accounts/update_credentials", { multipart: form });
    expect(res.status).toBe(200);
    expect(res.body.avatar).toStartWith(`${server.base}/system/avatars/`);
    const avatar = await fetch(res.body.avatar);
    expect(avatar.headers.get("content-type")).toBe("image/webp");
    const meta = await sharp(Buffer.from(await avatar.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([400, 400]);
    const header = await sharp(Buffer.from(await (await fetch(res.body.header)).arrayBuffer())).metadata();
    expect([header.width, header.height]).toEqual([1500, 500]);

    const junk = new FormData();
    junk.append("avatar", new Blob([new Uint8Array(1000).fill(7)], { type: "image/png" }), "fake.png");
    const bad = await user.client.patch("/api/v1/accounts/update_credentials", { multipart: junk });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("Validation failed: Avatar content type is invalid, Avatar is invalid");
    expect((await user.client.get("/api/v1/accounts/verify_credentials")).body.avatar).toBe(res.body.avatar);
  });

  test("media paths cannot lead outside the media folder", async () => {
    for (const path of ["/system/../rookery.sqlite3", "/system/%2e%2e/rookery.sqlite3", "/system/avatars/2026/11/..%2f..%2fx.webp", "/system/avatars/x"]) {
      const res = await http.get(path);
      expect(res.status).toBe(404);
    }
  });
});

describe("follows", () => {
  test("follow, counts, relationships, unfollow", async () => {
    const a = await createUser(server, "gina");
    const b = await createUser(server, "hank");
    const res = await a.client.post(`/api/v1/accounts/${b.id}/follow`, { json: { reblogs: false, notify: true, languages: ["en"] } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([
      "id",
      "following",
      "showing_reblogs",
      "notifying",
      "languages",
      "followed_by",
      "blocking",
      "blocked_by",
      "muting",
      "muting_notifications",
      "requested",
      "requested_by",
      "domain_blocking",
      "endorsed",
      "note",
    ]);
    expect(res.body).toMatchObject({ id: b.id, following: true, showing_reblogs: false, notifying: true, languages: ["en"], requested: false });
    expect((await http.get(`/api/v1/accounts/${b.id}`)).body.followers_count).toBe(1);
    expect((await http.get(`/api/v1/accounts/${a.id}`)).body.following_count).toBe(1);

    const again = await a.client.post(`/api/v1/accounts/${b.id}/follow`, { json: { reblogs: true } });
    expect(again.body).toMatchObject({ following: true, showing_reblogs: true, notifying: true });
    expect((await http.get(`/api/v1/accounts/${b.id}`)).body.followers_count).toBe(1);

    const rel = await b.client.get("/api/v1/accounts/relationships", { query: { "id[]": [a.id, "424242"] } });
    expect(rel.body).toHaveLength(1);
    expect(rel.body[0]).toMatchObject({ id: a.id, following: false, followed_by: true });

    const un = await a.client.post(`/api/v1/accounts/${b.id}/unfollow`);
    expect(un.body).toMatchObject({ following: false, followed_by: false });
    expect((await http.get(`/api/v1/accounts/${b.id}`)).body.followers_count).toBe(0);
    expect((await http.get(`/api/v1/accounts/${a.id}`)).body.following_count).toBe(0);
  });

  test("following yourself or nobody is 404", async () => {
    const self = await alice.client.post(`/api/v1/accounts/${alice.id}/follow`);
    expect(self.status).toBe(404);
    expect(self.body).toEqual({ error: "Record not found" });
    expect((await alice.client.post("/api/v1/accounts/31337/follow")).status).toBe(404);
    const scope = await (await createUser(server, "readonly1", { scopes: "read" })).client.post(`/api/v1/accounts/${bob.id}/follow`);
    expect(scope.status).toBe(403);
  });

  test("locked accounts get follow requests to authorize or reject", async () => {
    const owner = await createUser(server, "ivy", { locked: true });
    const fan = await createUser(server, "jack");
    const fan2 = await createUser(server, "kate");
    const asked = await fan.client.post(`/api/v1/accounts/${owner.id}/follow`);
    expect(asked.body).toMatchObject({ following: false, requested: true, showing_reblogs: true });
    await fan2.client.post(`/api/v1/accounts/${owner.id}/follow`);
    expect((await http.get(`/api/v1/accounts/${owner.id}`)).body.followers_count).toBe(0);
    expect((await owner.client.get("/api/v1/accounts/verify_credentials")).body.source.follow_requests_count).toBe(2);

    const list = await owner.client.get("/api/v1/follow_requests");
    expect(list.body.map((a: { id: string }) => a.id)).toEqual([fan2.id, fan.id]);
    const rel = await owner.client.get("/api/v1/accounts/relationships", { query: { "id[]": fan.id } });
    expect(rel.body[0].requested_by).toBe(true);

    const ok = await owner.client.post(`/api/v1/follow_requests/${fan.id}/authorize`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: fan.id, followed_by: true, requested_by: false });
    const no = await owner.client.post(`/api/v1/follow_requests/${fan2.id}/reject`);
    expect(no.body).toMatchObject({ id: fan2.id, followed_by: false, requested_by: false });
    expect((await owner.client.post(`/api/v1/follow_requests/${fan2.id}/reject`)).status).toBe(404);
    expect((await owner.client.post(`/api/v1/follow_requests/${fan2.id}/authorize`)).status).toBe(404);
    expect((await http.get(`/api/v1/accounts/${owner.id}`)).body.followers_count).toBe(1);
    const fanView = await fan.client.get("/api/v1/accounts/relationships", { query: { "id[]": owner.id } });
    expect(fanView.body[0]).toMatchObject({ following: true, requested: false });
  });

  test("followers and following paginate with Link headers by follow id", async () => {
    const star = await createUser(server, "star");
    const fans: TestUser[] = [];
    for (let i = 0; i < 5; i++) {
      const fan = await createUser(server, `fan${i}`);
      await fan.client.post(`/api/v1/accounts/${star.id}/follow`);
      fans.push(fan);
    }
    const first = await http.get(`/api/v1/accounts/${star.id}/followers`, { query: { limit: "2" } });
    expect(first.body.map((a: { username: string }) => a.username)).toEqual(["fan4", "fan3"]);
    const link = first.headers.get("link")!;
    expect(link).toMatch(/^<http:\/\/localhost:\d+\/api\/v1\/accounts\/\d+\/followers\?limit=2&max_id=\d+>; rel="next", <http:\/\/localhost:\d+\/api\/v1\/accounts\/\d+\/followers\?limit=2&min_id=\d+>; rel="prev"$/);
    const next = link.match(/<([^>]+)>; rel="next"/)![1]!;
    const second = await http.get(next);
    expect(second.body.map((a: { username: string }) => a.username)).toEqual(["fan2", "fan1"]);
    const third = await http.get(second.headers.get("link")!.match(/<([^>]+)>; rel="next"/)![1]!);
    expect(third.body.map((a: { username: string }) => a.username)).toEqual(["fan0"]);
    expect(third.headers.get("link")).not.toContain('rel="next"');
    const prev = await http.get(second.headers.get("link")!.match(/<([^>]+)>; rel="prev"/)![1]!);
    expect(prev.body.map((a: { username: string }) => a.username)).toEqual(["fan4", "fan3"]);

    const following = await http.get(`/api/v1/accounts/${fans[0]!.id}/following`);
    expect(following.body.map((a: { id: string }) => a.id)).toEqual([star.id]);
  });
});

describe("GET /api/v1/accounts/familiar_followers", () => {
  test("accounts I follow that follow each target; hidden collections show none", async () => {
    const [me, friend, other, target, shy] = await Promise.all(["ff_me", "ff_friend", "ff_other", "ff_target", "ff_shy"].map((n) => createUser(server, n)));
    await me!.client.post(`/api/v1/accounts/${friend!.id}/follow`);
    for (const who of [friend!, other!]) {
      await who.client.post(`/api/v1/accounts/${target!.id}/follow`);
      await who.client.post(`/api/v1/accounts/${shy!.id}/follow`);
    }
    await shy!.client.patch("/api/v1/accounts/update_credentials", { json: { hide_collections: true } });
    // In the order asked for, whichever account is older (they were created at once, in any order).
    for (const order of [[target!, shy!], [shy!, target!]]) {
      const res = await me!.client.get("/api/v1/accounts/familiar_followers", { query: { "id[]": [order[0]!.id, "999999", order[1]!.id] } });
      expect(res.status).toBe(200);
      const want: Record<string, string[]> = { [target!.id]: ["ff_friend"], [shy!.id]: [] };
      expect(res.body.map((r: { id: string; accounts: { username: string }[] }) => [r.id, r.accounts.map((a) => a.username)])).toEqual(order.map((u) => [u.id, want[u.id]]));
    }
    const none = await http.get("/api/v1/accounts/familiar_followers", { query: { "id[]": target!.id } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: "The access token is invalid" });
  });
});

describe("markers", () => {
  test("save and read back; the version moves with the position", async () => {
    const empty = await alice.client.get("/api/v1/markers", { query: { "timeline[]": ["home", "notifications"] } });
    expect(empty.body).toEqual({});
    const saved = await alice.client.post("/api/v1/markers", { form: { "home[last_read_id]": "100", "notifications[last_read_id]": "7" } });
    expect(saved.status).toBe(200);
    expect(saved.body.home).toMatchObject({ last_read_id: "100", version: 1 });
    expect(saved.body.notifications).toMatchObject({ last_read_id: "7", version: 1 });
    const same = await alice.client.post("/api/v1/markers", { json: { home: { last_read_id: "100" } } });
    expect(same.body.home.version).toBe(1);
    const moved = await alice.client.post("/api/v1/markers", { json: { home: { last_read_id: "120" } } });
    expect(moved.body.home.version).toBe(2);
    const read = await alice.client.get("/api/v1/markers", { query: { timeline: "home" } });
    expect(Object.keys(read.body)).toEqual(["home"]);
    expect(read.body.home.last_read_id).toBe("120");
  });
});

test("login with the account password works for the password grant", async () => {
  const verified = await server.ctx.services.accounts.verifyLogin("alice", PASSWORD);
  expect(verified).toBe(alice.account.id);
  expect(await server.ctx.services.accounts.verifyLogin("alice", "nope")).toBeNull();
});
