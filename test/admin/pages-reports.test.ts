/**
 * /admin/reports over HTTP: moderators and admins read reports with their statuses and act on
 * them (resolve, reopen, assign, limit or suspend the account, delete a status), each in the
 * audit log; a user gets the 403 page, and a post without its ticket changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserSession } from "../support/browser.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff } from "../support/staff.ts";

let server: TestServer;
let moderator: TestUser;
let alice: TestUser;
let mod: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  await createStaff(server, "adam", "admin");
  moderator = await createStaff(server, "mona", "moderator");
  alice = await createUser(server, "alice");
  mod = await signedIn(server, "mona");
});
afterAll(() => server?.close());

async function reportOf(target: TestUser, statusIds: string[] = [], comment = "not nice") {
  const res = await alice.client.post("/api/v1/reports", { json: { account_id: target.id, status_ids: statusIds, comment } });
  expect(res.status).toBe(200);
  return Number(res.body.id);
}

const row = async (id: number) =>
  (await server.database.port.get<{ resolved: number | null; by: number | null; assigned: number | null }>(
    'SELECT action_taken_at AS resolved, action_taken_by_account_id AS "by", assigned_account_id AS assigned FROM reports WHERE id = ?',
    [id],
  ))!;
const press = (id: number, action: string) => submitOn(mod, `/admin/reports/${id}`, `/admin/reports/${id}/${action}`);

describe("/admin/reports", () => {
  test("lists the open reports, and a report's page shows its statuses and comment", async () => {
    const bob = await createUser(server, "bob");
    const status = await postStatus(bob, { status: "a rude <b>remark</b>" });
    const id = await reportOf(bob, [status.id], "rude");
    const list = await mod.get("/admin/reports");
    expect(list.status).toBe(200);
    expect(list.text).toContain(`<a href="/admin/reports/${id}">#${id}</a>`);
    const page = await mod.get(`/admin/reports/${id}`);
    expect(page.text).toContain(`<h1>Report #${id}</h1>`);
    expect(page.text).toContain("rude");
    // The status's sanitized HTML: the text is there, the markup escaped when typed.
    expect(page.text).toContain("a rude &lt;b&gt;remark&lt;/b&gt;");
    // A moderator's navigation has the reports only, and no link to an account's page (a 403 for them).
    expect(page.text).not.toContain('href="/admin/accounts"');
    expect(page.text).not.toContain(`href="/admin/accounts/${bob.account.id}"`);
  });

  test("resolve, reopen, assign to self and unassign: each in the audit log, as the moderator", async () => {
    const carl = await createUser(server, "carl");
    const id = await reportOf(carl);
    const before = (await auditLines(server)).length;
    expect(noticeOf((await press(id, "assign_to_self")).page)).toBe(`Report #${id} is assigned to you.`);
    expect((await row(id)).assigned).toBe(moderator.account.id);
    expect(noticeOf((await press(id, "resolve")).page)).toBe(`Report #${id} is resolved.`);
    expect(await row(id)).toMatchObject({ resolved: expect.any(Number), by: moderator.account.id });
    expect((await mod.get("/admin/reports")).text).not.toContain(`#${id}<`);
    expect((await mod.get("/admin/reports", { query: { resolved: "1" } })).text).toContain(`#${id}<`);
    expect(noticeOf((await press(id, "reopen")).page)).toBe(`Report #${id} is open again.`);
    expect((await row(id)).resolved).toBeNull();
    expect(noticeOf((await press(id, "unassign")).page)).toBe(`Report #${id} is assigned to nobody.`);
    expect((await auditSince(server, before))).toEqual(
      ["assigned_to_self", "resolve", "reopen", "unassigned"].map((action) => [action, "Report", String(id), moderator.account.id]),
    );
  });

  test("limit or suspend the reported account from the report: the account changes and its open reports resolve", async () => {
    const dave = await createUser(server, "dave");
    const first = await reportOf(dave);
    const second = await reportOf(dave);
    const before = (await auditLines(server)).length;
    expect(noticeOf((await press(first, "silence")).page)).toBe("@dave is limited, and its reports are resolved.");
    expect((await row(first)).resolved).not.toBeNull();
    expect((await row(second)).resolved).not.toBeNull();
    const eve = await createUser(server, "eve");
    const third = await reportOf(eve);
    expect(noticeOf((await press(third, "suspend")).page)).toBe("@eve is suspended, and its reports are resolved.");
    const accounts = await server.database.port.all<{ silenced_at: number | null; suspended_at: number | null }>("SELECT id, silenced_at, suspended_at FROM accounts WHERE id IN (?, ?) ORDER BY id", [dave.account.id, eve.account.id]);
    expect(accounts.map((a) => [a.silenced_at !== null, a.suspended_at !== null])).toEqual([
      [true, false],
      [false, true],
    ]);
    expect((await auditSince(server, before)).map(([a, t]) => `${a} ${t}`)).toEqual(["silence Account", "resolve Report", "resolve Report", "suspend Account", "resolve Report"]);
  });

  test("delete a reported status: gone, with its audit line; a status the report does not name is a 404 and stays", async () => {
    const fred = await createUser(server, "fred");
    const bad = await postStatus(fred, { status: "spam spam" });
    const other = await postStatus(fred, { status: "not reported" });
    const id = await reportOf(fred, [bad.id]);
    const before = (await auditLines(server)).length;
    const { post, page } = await submitOn(mod, `/admin/reports/${id}`, `/admin/reports/${id}/statuses/${bad.id}/delete`);
    expect(post.status).toBe(303);
    expect(noticeOf(page)).toBe("The status is deleted.");
    expect(page.text).toContain("The statuses it named are deleted.");
    expect((await fred.client.get(`/api/v1/statuses/${bad.id}`)).status).toBe(404);
    expect((await auditSince(server, before))).toEqual([["destroy", "Status", bad.id, moderator.account.id]]);

    const ticket = /name="authenticity_token" value="([^"]+)"/.exec((await mod.get(`/admin/reports/${id}`)).text)![1]!;
    const refused = await mod.post(`/admin/reports/${id}/statuses/${other.id}/delete`, { form: { authenticity_token: ticket } });
    expect(refused.status).toBe(404);
    expect(noticeOf(refused)).toBe("Record not found");
    expect((await fred.client.get(`/api/v1/statuses/${other.id}`)).status).toBe(200);
    expect((await auditLines(server)).length).toBe(before + 1);
  });

  test("a user gets the 403 page; a post without a ticket is refused; an unknown report is a 404 page; nothing changes", async () => {
    const gus = await createUser(server, "gus");
    const id = await reportOf(gus);
    const before = (await auditLines(server)).length;
    const user = await signedIn(server, "alice");
    expect((await user.get("/admin/reports")).status).toBe(403);
    const ticket = /name="authenticity_token" value="([^"]+)"/.exec((await user.get("/settings/profile")).text)![1]!;
    const byUser = await user.post(`/admin/reports/${id}/resolve`, { form: { authenticity_token: ticket } });
    expect(byUser.status).toBe(403);
    const missing = await mod.post(`/admin/reports/${id}/resolve`, { form: {} });
    expect(missing.status).toBe(422);
    expect(noticeOf(missing)).toBe("Your form expired or was incomplete. Please try again.");
    expect((await row(id)).resolved).toBeNull();
    expect((await auditLines(server)).length).toBe(before);
    const unknown = await mod.get("/admin/reports/999999999");
    expect(unknown.status).toBe(404);
    expect(noticeOf(unknown)).toBe("There is no such report.");
  });
});
