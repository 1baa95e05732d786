import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff, NOT_ALLOWED } from "../support/staff.ts";

let server: TestServer;
let admin: TestUser;
let moderator: TestUser;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
  moderator = await createStaff(server, "mona", "moderator");
  alice = await createStaff(server, "alice", "user");
  bob = await createUser(server, "bob");
});
afterAll(() => server?.close());

async function report(body: Record<string, unknown> = {}) {
  const res = await alice.client.post("/api/v1/reports", { json: { account_id: bob.id, ...body } });
  if (res.status !== 200) throw new Error(`report failed: ${res.status}`);
  return res.body.id as string;
}

const reportRow = async (id: string) =>
  (await server.database.port.get<{ action_taken_at: number | null; action_taken_by_account_id: number | null; assigned_account_id: number | null; category: string }>(
    "SELECT action_taken_at, action_taken_by_account_id, assigned_account_id, category FROM reports WHERE id = ?",
    [Number(id)],
  ))!;

describe("/api/v1/admin/reports", () => {
  test("a report as Admin::Report: both accounts as Admin::Account, its statuses (even private ones) and rules", async () => {
    const rule = await server.ctx.services.instanceInfo.addRule("Be kind");
    const secret = await postStatus(bob, { status: "for followers", visibility: "private" });
    await alice.client.post(`/api/v1/accounts/${bob.id}/follow`);
    const id = await report({ status_ids: [secret.id], rule_ids: [String(rule.id)], comment: "unkind" });
    const res = await moderator.client.get(`/api/v1/admin/reports/${id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([
      "id",
      "action_taken",
      "action_taken_at",
      "category",
      "comment",
      "forwarded",
      "created_at",
      "updated_at",
      "account",
      "target_account",
      "assigned_account",
      "action_taken_by_account",
      "statuses",
      "rules",
    ]);
    expect(res.body).toMatchObject({
      id,
      action_taken: false,
      action_taken_at: null,
      category: "violation",
      comment: "unkind",
      forwarded: false,
      account: { id: alice.id, username: "alice", email: "alice@example.test", account: { id: alice.id } },
      target_account: { id: bob.id, username: "bob" },
      assigned_account: null,
      action_taken_by_account: null,
      statuses: [{ id: secret.id, content: expect.stringContaining("for followers") }],
      rules: [{ id: String(rule.id), text: "Be kind", hint: "" }],
    });
  });

  test("open reports unless `resolved`; filters by reporter and target; newest first", async () => {
    const one = await report();
    const two = await report();
    const open = await moderator.client.get("/api/v1/admin/reports", { query: { target_account_id: bob.id } });
    expect(open.status).toBe(200);
    const ids = open.body.map((r: { id: string }) => r.id);
    expect(ids.slice(0, 2)).toEqual([two, one]);
    await moderator.client.post(`/api/v1/admin/reports/${one}/resolve`);
    const resolved = await moderator.client.get("/api/v1/admin/reports", { query: { resolved: "true" } });
    expect(resolved.body.map((r: { id: string }) => r.id)).toContain(one);
    expect(resolved.body.map((r: { id: string }) => r.id)).not.toContain(two);
    const byOther = await moderator.client.get("/api/v1/admin/reports", { query: { account_id: bob.id } });
    expect(byOther.body).toEqual([]);
  });

  test("assign to self, unassign, resolve and reopen: each answers the report and is in the audit log", async () => {
    const id = await report();
    const before = (await auditLines(server)).length;
    const assigned = await moderator.client.post(`/api/v1/admin/reports/${id}/assign_to_self`);
    expect(assigned.body).toMatchObject({ id, assigned_account: { id: moderator.id } });
    const unassigned = await moderator.client.post(`/api/v1/admin/reports/${id}/unassign`);
    expect(unassigned.body.assigned_account).toBeNull();
    const resolved = await admin.client.post(`/api/v1/admin/reports/${id}/resolve`);
    expect(resolved.body).toMatchObject({ action_taken: true, action_taken_at: expect.any(String), action_taken_by_account: { id: admin.id } });
    const reopened = await moderator.client.post(`/api/v1/admin/reports/${id}/reopen`);
    expect(reopened.body).toMatchObject({ action_taken: false, action_taken_at: null, action_taken_by_account: null });
    expect((await auditSince(server, before))).toEqual([
      ["assigned_to_self", "Report", id, moderator.account.id],
      ["unassigned", "Report", id, moderator.account.id],
      ["resolve", "Report", id, admin.account.id],
      ["reopen", "Report", id, moderator.account.id],
    ]);
  });

  test("PUT changes the category and rules, as Report validates them; invalid ones are 422 and change nothing", async () => {
    const id = await report({ category: "spam" });
    const before = (await auditLines(server)).length;
    const bad = await moderator.client.put(`/api/v1/admin/reports/${id}`, { json: { category: "rude" } });
    expect([bad.status, bad.body]).toEqual([422, { error: "Validation failed: Category is not included in the list" }]);
    const noRules = await moderator.client.put(`/api/v1/admin/reports/${id}`, { json: { category: "violation", rule_ids: ["999999"] } });
    expect([noRules.status, noRules.body]).toEqual([422, { error: "Validation failed: Rule ids does not reference valid rules" }]);
    expect((await reportRow(id)).category).toBe("spam");
    expect((await auditSince(server, before))).toEqual([]);
    const ok = await moderator.client.put(`/api/v1/admin/reports/${id}`, { json: { category: "legal" } });
    expect(ok.body.category).toBe("legal");
    expect((await auditSince(server, before))).toEqual([["update", "Report", id, moderator.account.id]]);
  });

  test("a user without a role that manages reports is refused; an unknown report is 404; nothing changes", async () => {
    const id = await report();
    const before = (await auditLines(server)).length;
    for (const [method, path] of [
      ["GET", "/api/v1/admin/reports"],
      ["GET", `/api/v1/admin/reports/${id}`],
      ["POST", `/api/v1/admin/reports/${id}/resolve`],
      ["POST", `/api/v1/admin/reports/${id}/assign_to_self`],
      ["PUT", `/api/v1/admin/reports/${id}`],
    ] as const) {
      const res = await alice.client.request(method, path);
      expect([path, res.status, res.body]).toEqual([path, 403, NOT_ALLOWED]);
    }
    const missing = await moderator.client.post("/api/v1/admin/reports/999999999/resolve");
    expect([missing.status, missing.body]).toEqual([404, { error: "Record not found" }]);
    expect(await reportRow(id)).toMatchObject({ action_taken_at: null, assigned_account_id: null });
    expect((await auditSince(server, before))).toEqual([]);
  });

  test("acting on the account with a report resolves it; `none` resolves only the report named", async () => {
    const first = await report();
    const second = await report();
    const before = (await auditLines(server)).length;
    const none = await moderator.client.post(`/api/v1/admin/accounts/${bob.id}/action`, { json: { type: "none", report_id: first } });
    expect(none.status).toBe(200);
    expect((await reportRow(first)).action_taken_by_account_id).toBe(moderator.account.id);
    expect((await reportRow(second)).action_taken_at).toBeNull();
    const silence = await moderator.client.post(`/api/v1/admin/accounts/${bob.id}/action`, { json: { type: "silence", report_id: second } });
    expect(silence.status).toBe(200);
    expect((await reportRow(second)).action_taken_at).not.toBeNull();
    expect((await auditSince(server, before)).map((l) => [l[0], l[1]])).toEqual(expect.arrayContaining([["resolve", "Report"], ["silence", "Account"]]));
  });
});
