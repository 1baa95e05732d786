import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, PASSWORD, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff, NOT_ALLOWED, pendingUser, remoteAccount } from "../support/staff.ts";

let server: TestServer;
let owner: TestUser;
let admin: TestUser;
let moderator: TestUser;
let alice: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  owner = await createStaff(server, "olive", "owner");
  admin = await createStaff(server, "adam", "admin");
  moderator = await createStaff(server, "mona", "moderator");
  alice = await createStaff(server, "alice", "user");
});
afterAll(() => server?.close());

const accountRow = (id: number | string) => server.database.port.get<{ suspended_at: number | null; silenced_at: number | null }>("SELECT suspended_at, silenced_at FROM accounts WHERE id = ?", [Number(id)]);

describe("who may use the admin API", () => {
  test("a user without a staff role is refused with Mastodon's 403, whatever the scopes; nothing is logged", async () => {
    const before = (await auditLines(server)).length;
    for (const [method, path] of [
      ["GET", "/api/v1/admin/accounts"],
      ["GET", "/api/v2/admin/accounts"],
      ["GET", `/api/v1/admin/accounts/${alice.id}`],
      ["POST", `/api/v1/admin/accounts/${moderator.id}/action`],
      ["POST", `/api/v1/admin/accounts/${moderator.id}/unsilence`],
    ] as const) {
      const res = await alice.client.request(method, path, method === "POST" ? { json: { type: "suspend" } } : {});
      expect([path, res.status, res.body]).toEqual([path, 403, NOT_ALLOWED]);
    }
    expect((await accountRow(moderator.id))!.suspended_at).toBeNull();
    expect((await auditLines(server)).length).toBe(before);
  });

  test("a token without the admin scopes is outside them; no token is 401", async () => {
    const plain = await createUser(server, "plainstaff");
    await server.database.port.run("UPDATE users SET role = 'admin' WHERE account_id = ?", [plain.account.id]);
    const res = await plain.client.get("/api/v1/admin/accounts");
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "This action is outside the authorized scopes" });
    const readOnly = await createStaff(server, "readonlyadmin", "admin", "read admin:read:accounts");
    expect((await readOnly.client.get("/api/v1/admin/accounts")).status).toBe(200);
    const write = await readOnly.client.post(`/api/v1/admin/accounts/${alice.id}/action`, { json: { type: "silence" } });
    expect(write.status).toBe(403);
    expect(write.body).toEqual({ error: "This action is outside the authorized scopes" });
    expect((await accountRow(alice.id))!.silenced_at).toBeNull();
    const anonymous = await alice.client.get("/api/v1/admin/accounts", { token: null });
    expect(anonymous.status).toBe(401);
  });
});

describe("GET /api/v1/admin/accounts and /api/v2/admin/accounts", () => {
  test("an account as Admin::Account: its user, role, state and the account entity", async () => {
    const res = await moderator.client.get(`/api/v1/admin/accounts/${admin.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: admin.id,
      username: "adam",
      domain: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      email: "adam@example.test",
      ip: null,
      role: { id: "2", name: "Admin", permissions: expect.any(String), color: "", highlighted: true },
      confirmed: true,
      suspended: false,
      silenced: false,
      sensitized: false,
      disabled: false,
      approved: true,
      locale: null,
      invite_request: null,
      ips: [],
      account: expect.objectContaining({ id: admin.id, username: "adam", acct: "adam" }),
    });
    expect(Object.keys(res.body)).toEqual(["id", "username", "domain", "created_at", "email", "ip", "role", "confirmed", "suspended", "silenced", "sensitized", "disabled", "approved", "locale", "invite_request", "ips", "account"]);
    const remote = await remoteAccount(server, "carol", "far.example");
    const shown = await moderator.client.get(`/api/v1/admin/accounts/${remote.id}`);
    expect(shown.body).toMatchObject({ username: "carol", domain: "far.example", email: null, role: null, confirmed: false, approved: false });
    const missing = await moderator.client.get("/api/v1/admin/accounts/999999999");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "Record not found" });
  });

  test("v1 lists local active accounts unless asked; remote, pending and staff filters; newest first, with Link", async () => {
    await remoteAccount(server, "dave", "other.example");
    const waiting = await pendingUser(server, "pete", "I knit");
    const local = await admin.client.get("/api/v1/admin/accounts");
    expect(local.status).toBe(200);
    const names = local.body.map((a: { username: string }) => a.username);
    expect(names).toContain("alice");
    expect(names).not.toContain("carol");
    expect(local.body.map((a: { id: string }) => BigInt(a.id))).toEqual([...local.body.map((a: { id: string }) => BigInt(a.id))].sort((x, y) => (y > x ? 1 : -1)));
    const remote = await admin.client.get("/api/v1/admin/accounts", { query: { remote: "true" } });
    expect(remote.body.map((a: { username: string }) => a.username).sort()).toEqual(["carol", "dave"]);
    const pending = await admin.client.get("/api/v1/admin/accounts", { query: { pending: "true" } });
    expect(pending.body.map((a: { id: string }) => a.id)).toEqual([waiting.id]);
    expect(pending.body[0]).toMatchObject({ approved: false, invite_request: "I knit" });
    const staff = await admin.client.get("/api/v1/admin/accounts", { query: { staff: "true" } });
    expect(staff.body.map((a: { username: string }) => a.username).sort()).toEqual(expect.arrayContaining(["adam", "mona", "olive"]));
    expect(staff.body.map((a: { username: string }) => a.username)).not.toContain("alice");
    const paged = await admin.client.get("/api/v1/admin/accounts", { query: { limit: "1", staff: "true" } });
    expect(paged.body.length).toBe(1);
    expect(paged.headers.get("link")).toContain("staff=true");
    expect(paged.headers.get("link")).toContain('rel="next"');
  });

  test("v2 filters by origin, status, username and permissions; an unknown origin or status is 400", async () => {
    const remote = await owner.client.get("/api/v2/admin/accounts", { query: { origin: "remote", username: "ca" } });
    expect(remote.body.map((a: { username: string }) => a.username)).toEqual(["carol"]);
    const staff = await owner.client.get("/api/v2/admin/accounts", { query: { permissions: "staff", origin: "local" } });
    expect(staff.body.map((a: { username: string }) => a.username)).toEqual(expect.arrayContaining(["adam", "mona", "olive"]));
    expect(staff.body.map((a: { username: string }) => a.username)).not.toContain("alice");
    expect(staff.body.every((a: { role: { id: string } }) => ["1", "2", "3"].includes(a.role.id))).toBe(true);
    const byRole = await owner.client.get("/api/v2/admin/accounts", { query: { "role_ids[]": "1" } });
    expect(byRole.body.map((a: { username: string }) => a.username)).toEqual(["mona"]);
    const bad = await owner.client.get("/api/v2/admin/accounts", { query: { origin: "elsewhere" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: "Unknown origin: elsewhere" });
    const badStatus = await owner.client.get("/api/v2/admin/accounts", { query: { status: "sleeping" } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body).toEqual({ error: "Unknown status: sleeping" });
  });
});

describe("approving and rejecting sign-ups", () => {
  test("approve: the user may sign in; approving again, or a remote account, is not allowed", async () => {
    const waiting = await pendingUser(server, "quinn");
    const blocked = await waiting.client.get("/api/v1/accounts/verify_credentials");
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual({ error: "Your login is currently pending approval" });
    const before = (await auditLines(server)).length;
    const res = await moderator.client.post(`/api/v1/admin/accounts/${waiting.id}/approve`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: waiting.id, approved: true });
    expect((await auditSince(server, before))).toEqual([["approve", "User", waiting.id, moderator.account.id]]);
    expect((await waiting.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    const again = await moderator.client.post(`/api/v1/admin/accounts/${waiting.id}/approve`);
    expect([again.status, again.body]).toEqual([403, NOT_ALLOWED]);
    const remote = await remoteAccount(server, "erin", "far.example");
    const notLocal = await moderator.client.post(`/api/v1/admin/accounts/${remote.id}/approve`);
    expect([notLocal.status, notLocal.body]).toEqual([403, NOT_ALLOWED]);
    expect((await auditSince(server, before)).length).toBe(1);
  });

  test("reject: the account goes and its name is free; an approved account cannot be rejected", async () => {
    const waiting = await pendingUser(server, "rita");
    const before = (await auditLines(server)).length;
    const res = await admin.client.post(`/api/v1/admin/accounts/${waiting.id}/reject`);
    expect([res.status, res.body]).toEqual([200, {}]);
    expect(await server.ctx.services.accounts.get(waiting.account.id)).toBeUndefined();
    expect((await auditSince(server, before))).toEqual([["reject", "User", waiting.id, admin.account.id]]);
    const refused = await admin.client.post(`/api/v1/admin/accounts/${alice.id}/reject`);
    expect([refused.status, refused.body]).toEqual([403, NOT_ALLOWED]);
    expect(await server.ctx.services.accounts.get(alice.account.id)).toBeDefined();
  });
});

describe("POST /api/v1/admin/accounts/:id/action", () => {
  test("a type is required and must be one this server holds", async () => {
    const before = (await auditLines(server)).length;
    const blank = await admin.client.post(`/api/v1/admin/accounts/${alice.id}/action`, { json: {} });
    expect([blank.status, blank.body]).toEqual([422, { error: "Validation failed: Type can't be blank" }]);
    for (const type of ["explode", "disable", "sensitive"]) {
      const res = await admin.client.post(`/api/v1/admin/accounts/${alice.id}/action`, { json: { type } });
      expect([type, res.status, res.body]).toEqual([type, 422, { error: "Validation failed: Type is not included in the list" }]);
    }
    const unknownReport = await admin.client.post(`/api/v1/admin/accounts/${alice.id}/action`, { json: { type: "none", report_id: "999999999" } });
    expect(unknownReport.status).toBe(404);
    expect((await auditSince(server, before))).toEqual([]);
    expect(await accountRow(alice.id)).toEqual({ suspended_at: null, silenced_at: null });
  });

  test("nobody acts on a role as high as their own or higher: moderators and admins on the owner, an admin on an admin", async () => {
    const before = (await auditLines(server)).length;
    for (const [actor, target] of [
      [moderator, owner],
      [moderator, admin],
      [admin, owner],
      [owner, owner],
    ] as const) {
      for (const type of ["suspend", "silence"]) {
        const res = await actor.client.post(`/api/v1/admin/accounts/${target.id}/action`, { json: { type } });
        expect([actor.account.username, target.account.username, type, res.status, res.body]).toEqual([actor.account.username, target.account.username, type, 403, NOT_ALLOWED]);
      }
    }
    expect(await accountRow(owner.id)).toEqual({ suspended_at: null, silenced_at: null });
    expect(await accountRow(admin.id)).toEqual({ suspended_at: null, silenced_at: null });
    expect((await auditSince(server, before))).toEqual([]);
  });

  test("limit (silence) and unsilence: the account is `limited`; both logged", async () => {
    const target = await createUser(server, "lima");
    const before = (await auditLines(server)).length;
    const res = await moderator.client.post(`/api/v1/admin/accounts/${target.id}/action`, { json: { type: "silence" } });
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await accountRow(target.id))!.silenced_at).not.toBeNull();
    const shown = await alice.client.get(`/api/v1/accounts/${target.id}`);
    expect(shown.body.limited).toBe(true);
    const lifted = await moderator.client.post(`/api/v1/admin/accounts/${target.id}/unsilence`);
    expect(lifted.body).toMatchObject({ silenced: false });
    expect((await alice.client.get(`/api/v1/accounts/${target.id}`)).body.limited).toBeUndefined();
    expect((await auditSince(server, before))).toEqual([
      ["silence", "Account", target.id, moderator.account.id],
      ["unsilence", "Account", target.id, moderator.account.id],
    ]);
  });

  test("suspend: hidden, signed out and refused; open reports about it resolved; unsuspend brings it back", async () => {
    const bob = await createUser(server, "bob");
    const post = await postStatus(bob, { status: "soon gone" });
    const report = await alice.client.post("/api/v1/reports", { json: { account_id: bob.id, status_ids: [post.id] } });
    const before = (await auditLines(server)).length;
    const res = await moderator.client.post(`/api/v1/admin/accounts/${bob.id}/action`, { json: { type: "suspend", text: "spam" } });
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await auditSince(server, before))).toEqual([
      ["suspend", "Account", bob.id, moderator.account.id],
      ["resolve", "Report", report.body.id, moderator.account.id],
    ]);
    // Its token is revoked, and signing in again is refused.
    expect((await bob.client.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    const grant = await alice.client.post("/oauth/token", {
      token: null,
      form: { grant_type: "password", username: "bob", password: PASSWORD, client_id: bob.app.clientId, client_secret: bob.clientSecret },
    });
    expect([grant.status, grant.body.error]).toEqual([400, "invalid_grant"]);
    // Its statuses and profile are shown to nobody.
    expect((await alice.client.get(`/api/v1/statuses/${post.id}`)).status).toBe(404);
    expect((await alice.client.get(`/api/v1/accounts/${bob.id}/statuses`)).body).toEqual([]);
    const profile = await alice.client.get(`/api/v1/accounts/${bob.id}`);
    expect(profile.body).toMatchObject({ suspended: true, display_name: "", note: "", fields: [] });
    const admins = await admin.client.get(`/api/v1/admin/accounts/${bob.id}`);
    expect(admins.body).toMatchObject({ suspended: true });
    // A suspended account's report was resolved by whoever suspended it.
    expect((await admin.client.get(`/api/v1/admin/reports/${report.body.id}`)).body).toMatchObject({ action_taken: true, action_taken_by_account: { id: moderator.id } });

    const listed = await admin.client.get("/api/v2/admin/accounts", { query: { status: "suspended" } });
    expect(listed.body.map((a: { id: string }) => a.id)).toContain(bob.id);
    const back = await admin.client.post(`/api/v1/admin/accounts/${bob.id}/unsuspend`);
    expect(back.body).toMatchObject({ id: bob.id, suspended: false });
    expect((await alice.client.get(`/api/v1/statuses/${post.id}`)).status).toBe(200);
    const again = await admin.client.post(`/api/v1/admin/accounts/${bob.id}/unsuspend`);
    expect([again.status, again.body]).toEqual([403, NOT_ALLOWED]);
    expect((await auditSince(server, before)).map((l) => l[0])).toEqual(["suspend", "resolve", "unsuspend"]);
  });

  test("a token of an account suspended since it was issued (by another process) is refused as Mastodon's require_user!", async () => {
    const sam = await createUser(server, "sam");
    await server.database.port.run("UPDATE accounts SET suspended_at = 1 WHERE id = ?", [sam.account.id]);
    const res = await sam.client.get("/api/v1/accounts/verify_credentials");
    expect([res.status, res.body]).toEqual([403, { error: "Your login is currently disabled" }]);
  });
});

describe("DELETE /api/v1/admin/accounts/:id", () => {
  test("only a suspended account, and only by a role that deletes user data; its data goes, its row stays a tombstone", async () => {
    const dora = await createUser(server, "dora");
    await postStatus(dora, { status: "my last words" });
    await alice.client.post(`/api/v1/accounts/${dora.id}/follow`);
    const before = (await auditLines(server)).length;
    const early = await admin.client.delete(`/api/v1/admin/accounts/${dora.id}`);
    expect([early.status, early.body]).toEqual([403, NOT_ALLOWED]);
    await admin.client.post(`/api/v1/admin/accounts/${dora.id}/action`, { json: { type: "suspend" } });
    const byModerator = await moderator.client.delete(`/api/v1/admin/accounts/${dora.id}`);
    expect([byModerator.status, byModerator.body]).toEqual([403, NOT_ALLOWED]);
    expect((await server.ctx.services.accounts.getUser(dora.account.id))).toBeDefined();

    const res = await admin.client.delete(`/api/v1/admin/accounts/${dora.id}`);
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await auditSince(server, before))).toEqual([
      ["suspend", "Account", dora.id, admin.account.id],
      ["destroy", "Account", dora.id, admin.account.id],
    ]);
    expect((await server.ctx.services.accounts.getUser(dora.account.id))).toBeUndefined();
    const row = (await server.ctx.services.accounts.get(dora.account.id))!;
    expect(row).toMatchObject({ username: "dora", statusesCount: 0, followersCount: 0 });
    expect(row.suspendedAt).not.toBeNull();
    const statuses = (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM statuses WHERE account_id = ?", [dora.account.id]))!;
    expect(statuses.n).toBe(0);
    expect((await alice.client.get(`/api/v1/accounts/relationships`, { query: { "id[]": dora.id } })).body[0].following).toBe(false);
    // Gone for good: its actor and WebFinger answer 410; its name cannot be taken again, nor can it be unsuspended.
    const actor = await fetch(`${server.base}/users/dora`, { headers: { accept: "application/activity+json" } });
    expect([actor.status, await actor.text()]).toEqual([410, expect.any(String)]);
    const finger = await fetch(`${server.base}/.well-known/webfinger?resource=acct:dora@${new URL(server.base).host}`);
    expect(finger.status).toBe(410);
    const unsuspend = await admin.client.post(`/api/v1/admin/accounts/${dora.id}/unsuspend`);
    expect([unsuspend.status, unsuspend.body]).toEqual([403, NOT_ALLOWED]);
    await expect(server.ctx.services.accounts.create({ username: "dora", email: "dora2@example.test", password: PASSWORD }, { api: false })).rejects.toThrow();
  });
});

describe("the credential account's role", () => {
  test("is the user's role as Mastodon's Role entity, with the permissions bitmask", async () => {
    const me = async (user: TestUser) => (await user.client.get("/api/v1/accounts/verify_credentials")).body.role;
    expect(await me(alice)).toEqual({ id: "-99", name: "", permissions: "65536", color: "", highlighted: false });
    expect(await me(moderator)).toEqual({ id: "1", name: "Moderator", permissions: String(65536 | 8 | 4 | (1 << 20) | (1 << 10) | (1 << 4) | (1 << 8)), color: "", highlighted: true });
    expect(await me(owner)).toEqual({ id: "3", name: "Owner", permissions: String((1 << 23) - 1), color: "", highlighted: true });
  });
});
