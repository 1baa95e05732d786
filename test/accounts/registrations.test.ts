/**
 * REGISTRATIONS=open|approval|closed through POST /api/v1/accounts: what the instance says,
 * who is let in and when, what an account waiting for approval may do (nothing that needs a
 * user, as Mastodon answers it), and the `admin.sign_up` notification staff get.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appToken, createUser, PASSWORD, registerApp, type TestUser } from "../support/fixtures.ts";
import { BrowserSession } from "../support/browser.ts";
import { parseForms } from "../support/html.ts";
import { Client } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { OPERATOR } from "../../src/services/admin/audit-log.ts";

const PENDING = { error: "Your login is currently pending approval" };

async function setRole(server: TestServer, user: TestUser, role: string) {
  await server.database.port.run("UPDATE users SET role = ? WHERE account_id = ?", [role, user.account.id]);
}

async function userRow(server: TestServer, username: string) {
  const row = await server.database.port.get<{ approved: unknown; reason: string | null; inviteId: number | null }>(
    'SELECT u.approved, u.sign_up_reason AS reason, u.invite_id AS "inviteId" FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = ?',
    [username],
  );
  // A boolean column reads 1/0 on SQLite, true/false on PostgreSQL.
  return row ? { ...row, approved: Boolean(row.approved) } : null;
}

const count = async (server: TestServer, table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;

async function approve(server: TestServer, username: string) {
  await server.database.port.run("UPDATE users SET approved = ? WHERE account_id = (SELECT id FROM accounts WHERE username = ?)", [true, username]);
}

async function signUp(server: TestServer, body: Record<string, unknown>) {
  const { token } = await appToken(server, "read write");
  return new Client(server.base).post("/api/v1/accounts", { token, json: { password: "longenough", agreement: true, locale: "en", ...body } });
}

describe("REGISTRATIONS=approval", () => {
  let server: TestServer;
  let http: Client;
  let owner: TestUser;
  let moderator: TestUser;
  let admin: TestUser;
  let plain: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ REGISTRATIONS: "approval" });
    http = new Client(server.base);
    owner = await createUser(server, "owner");
    moderator = await createUser(server, "moddy");
    admin = await createUser(server, "adminka");
    plain = await createUser(server, "plain");
    await setRole(server, owner, "owner");
    await setRole(server, moderator, "moderator");
    await setRole(server, admin, "admin");
  });
  afterAll(() => server.close());

  test("the instance says sign-ups are possible and need approval (v1, v2, NodeInfo, the about page)", async () => {
    const v1 = await http.get("/api/v1/instance");
    expect(v1.body.registrations).toBe(true);
    expect(v1.body.approval_required).toBe(true);
    // Every member may make invite links (Mastodon: the everyone role can invite_users).
    expect(v1.body.invites_enabled).toBe(true);
    const v2 = await http.get("/api/v2/instance");
    expect(v2.body.registrations).toEqual({ enabled: true, approval_required: true, reason_required: false, message: null, url: null });
    const nodeinfo = await http.get("/nodeinfo/2.0");
    expect(nodeinfo.body.openRegistrations).toBe(true);
    const about = await http.get("/", { headers: { accept: "text/html" } });
    expect(about.text).toContain("Sign-ups are reviewed");
  });

  test("a sign-up with a reason gets a token, but waits: every request needing a user is 403 pending approval", async () => {
    const res = await signUp(server, { username: "hopeful", email: "hopeful@example.test", reason: "I birdwatch rooks." });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: "Bearer", scope: "read write" });
    expect(await userRow(server, "hopeful")).toEqual({ approved: false, reason: "I birdwatch rooks.", inviteId: null });

    const client = new Client(server.base, res.body.access_token);
    const me = await client.get("/api/v1/accounts/verify_credentials");
    expect(me.status).toBe(403);
    expect(me.body).toEqual(PENDING);
    const statuses = await count(server, "statuses");
    const post = await client.post("/api/v1/statuses", { json: { status: "let me in" } });
    expect(post.status).toBe(403);
    expect(post.body).toEqual(PENDING);
    expect(await count(server, "statuses")).toBe(statuses);
    // A public read is still a public read (Mastodon's optional-token endpoints).
    expect((await client.get("/api/v1/timelines/public")).status).toBe(200);
  });

  test("the reason is optional, and at most 420 characters (422, nothing stored)", async () => {
    const none = await signUp(server, { username: "noreason", email: "noreason@example.test" });
    expect(none.status).toBe(200);
    expect(await userRow(server, "noreason")).toEqual({ approved: false, reason: null, inviteId: null });

    const users = await count(server, "users");
    const long = await signUp(server, { username: "wordy", email: "wordy@example.test", reason: "r".repeat(421) });
    expect(long.status).toBe(422);
    expect(long.body).toEqual({
      error: "Validation failed: Reason is too long (maximum is 420 characters)",
      details: { reason: [{ error: "ERR_TOO_LONG", description: "is too long (maximum is 420 characters)" }] },
    });
    expect(await count(server, "users")).toBe(users);
    expect(await userRow(server, "wordy")).toBeNull();
  });

  test("staff (moderator, admin, owner) get admin.sign_up with the new account; other users do not", async () => {
    const res = await signUp(server, { username: "newcomer", email: "newcomer@example.test", reason: "hello" });
    expect(res.status).toBe(200);
    for (const staff of [owner, moderator, admin]) {
      const list = await staff.client.get("/api/v1/notifications", { query: { "types[]": "admin.sign_up" } });
      expect(list.status).toBe(200);
      const mine = list.body.filter((n: any) => n.account.username === "newcomer");
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ type: "admin.sign_up", account: { username: "newcomer", acct: "newcomer" } });
      expect(mine[0].status).toBeUndefined();
      // Grouped (v2) as well, ungrouped as Mastodon keeps them.
      const grouped = await staff.client.get("/api/v2/notifications", { query: { "types[]": "admin.sign_up" } });
      expect(grouped.body.notification_groups.some((g: any) => g.type === "admin.sign_up" && g.group_key.startsWith("ungrouped-"))).toBe(true);
    }
    const others = await plain.client.get("/api/v1/notifications");
    expect(others.body.filter((n: any) => n.type === "admin.sign_up")).toEqual([]);
  });

  test("an account waiting for approval is in neither the directory nor account search (Mastodon's without_unapproved)", async () => {
    expect((await signUp(server, { username: "unlisted_one", email: "unlisted@example.test" })).status).toBe(200);
    const directory = await plain.client.get("/api/v1/directory", { query: { local: "true", limit: "80" } });
    expect(directory.status).toBe(200);
    const names = directory.body.map((a: any) => a.username);
    expect(names).toContain("owner");
    expect(names).not.toContain("unlisted_one");
    for (const q of ["unlisted", "unlisted_one"]) {
      const search = await plain.client.get("/api/v2/search", { query: { q, type: "accounts" } });
      expect(search.status).toBe(200);
      expect(search.body.accounts).toEqual([]);
    }
    const anonymous = await http.get("/api/v2/search", { query: { q: `unlisted_one@${server.ctx.config.domain}`, type: "accounts" } });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.accounts).toEqual([]);
    // Approved, it is found like anyone.
    await approve(server, "unlisted_one");
    expect((await http.get("/api/v2/search", { query: { q: `unlisted_one@${server.ctx.config.domain}`, type: "accounts" } })).body.accounts.map((a: any) => a.username)).toEqual(["unlisted_one"]);
  });

  test("the password grant answers as Mastodon's: a token whose requests are refused until approval, then accepted", async () => {
    expect((await signUp(server, { username: "patient", email: "patient@example.test" })).status).toBe(200);
    const { app, clientSecret } = await registerApp(server, "read write");
    const grant = await http.post("/oauth/token", {
      form: { grant_type: "password", username: "patient@example.test", password: "longenough", client_id: app.clientId, client_secret: clientSecret, scope: "read" },
    });
    expect(grant.status).toBe(200);
    const client = new Client(server.base, grant.body.access_token);
    const before = await client.get("/api/v1/accounts/verify_credentials");
    expect(before.status).toBe(403);
    expect(before.body).toEqual(PENDING);

    // Approved (by staff, whose service owns it; here straight in the table): the same token,
    // kept in the token cache, now works.
    await approve(server, "patient");
    const after = await client.get("/api/v1/accounts/verify_credentials");
    expect(after.status).toBe(200);
    expect(after.body.username).toBe("patient");
  });

  test("the sign-in forms refuse an account waiting for approval: no session, no authorization", async () => {
    expect((await signUp(server, { username: "waiting", email: "waiting@example.test" })).status).toBe(200);
    const sessions = await count(server, "web_sessions");

    const member = new BrowserSession(server.base);
    const [form] = parseForms((await member.get("/oauth/sign_in")).text);
    const res = await member.submit(form!, { username: "waiting", password: "longenough" });
    expect(res.status).toBe(403);
    expect(res.text).toContain("Your application is pending review by our staff.");
    expect(res.headers.getSetCookie().filter((c) => c.startsWith("_rookery_session="))).toEqual([]);

    const app = (await http.post("/api/v1/apps", { json: { client_name: "App", redirect_uris: "https://app.example/cb", scopes: "read" } })).body;
    const browser = new BrowserSession(server.base);
    const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: "https://app.example/cb", response_type: "code" } });
    const authorize = await browser.submit(parseForms(page.text)[0]!, { username: "waiting@example.test", password: "longenough" });
    expect(authorize.status).toBe(403);
    expect(authorize.text).toContain("pending review");
    expect(authorize.text).not.toContain("Authorize");
    expect(await count(server, "web_sessions")).toBe(sessions);
    expect(await count(server, "oauth_authorization_codes")).toBe(0);

    // An approved account signs in as ever.
    const fresh = new BrowserSession(server.base);
    const okForm = parseForms((await fresh.get("/oauth/sign_in")).text)[0]!;
    expect((await fresh.submit(okForm, { username: "plain", password: PASSWORD })).status).toBe(303);
  });

  test("a usable invite code given to the API spares the wait; an unusable one is ignored", async () => {
    const invite = await server.ctx.services.invites.create(owner.account.id, { maxUses: 1 });
    const res = await signUp(server, { username: "invitee", email: "invitee@example.test", invite_code: invite.code });
    expect(res.status).toBe(200);
    expect(await userRow(server, "invitee")).toEqual({ approved: true, reason: null, inviteId: invite.invite.id });
    expect((await new Client(server.base, res.body.access_token).get("/api/v1/accounts/verify_credentials")).status).toBe(200);

    // Used up now: the next sign-up with it waits like any other.
    const again = await signUp(server, { username: "latecomer", email: "latecomer@example.test", invite_code: invite.code });
    expect(again.status).toBe(200);
    expect(await userRow(server, "latecomer")).toEqual({ approved: false, reason: null, inviteId: null });
    expect((await server.ctx.services.invites.list()).find((l) => l.invite.id === invite.invite.id)?.invite.uses).toBe(1);
  });
});

describe("REGISTRATIONS=open and closed", () => {
  test("open: approved at once, staff told", async () => {
    const server = await startTestServer({ REGISTRATIONS: "open" });
    try {
      const owner = await createUser(server, "boss");
      await setRole(server, owner, "owner");
      const res = await signUp(server, { username: "walkin", email: "walkin@example.test" });
      expect(res.status).toBe(200);
      expect(await userRow(server, "walkin")).toEqual({ approved: true, reason: null, inviteId: null });
      const list = await owner.client.get("/api/v1/notifications");
      expect(list.body.map((n: any) => [n.type, n.account.username])).toEqual([["admin.sign_up", "walkin"]]);
      const v2 = await new Client(server.base).get("/api/v2/instance");
      expect(v2.body.registrations).toMatchObject({ enabled: true, approval_required: false });
    } finally {
      await server.close();
    }
  });

  test("closed: 403 Forbidden, an invite code given to the API included (Mastodon checks the mode alone there); nothing stored", async () => {
    const server = await startTestServer({ REGISTRATIONS: "closed" });
    try {
      const owner = await createUser(server, "boss");
      const invite = await server.ctx.services.invites.create(owner.account.id, {});
      const users = await count(server, "users");
      for (const body of [{ username: "shut", email: "shut@example.test" }, { username: "shut", email: "shut@example.test", invite_code: invite.code }]) {
        const res = await signUp(server, body);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: "Forbidden" });
      }
      expect(await count(server, "users")).toBe(users);
      expect((await server.ctx.services.invites.list())[0]!.invite.uses).toBe(0);
      const v1 = await new Client(server.base).get("/api/v1/instance");
      expect([v1.body.registrations, v1.body.approval_required]).toEqual([false, false]);
    } finally {
      await server.close();
    }
  });
});

describe("a registrations mode saved by an admin", () => {
  test("wins over REGISTRATIONS after a restart, until set back to follow it", async () => {
    let server = await startTestServer({ REGISTRATIONS: "open" });
    try {
      const { adminInstance } = server.ctx.services;
      await adminInstance.setRegistrationsMode(OPERATOR, "closed");
      server = await server.restart();
      const closed = await new Client(server.base).get("/api/v1/instance");
      expect([closed.body.registrations, await server.ctx.services.registrations.mode()]).toEqual([false, "closed"]);
      await server.ctx.services.adminInstance.setRegistrationsMode(OPERATOR, null);
      expect((await new Client(server.base).get("/api/v1/instance")).body.registrations).toBe(true);
    } finally {
      await server.close();
    }
  });
});
