/**
 * /admin/accounts over HTTP as a browser drives it: who may see it (admins; a moderator and a
 * user get the 403 page), each action on a local and a remote account with its audit line, and
 * refusals (no ticket, another site, a role too low) that change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BrowserSession } from "../support/browser.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff, pendingUser, remoteAccount } from "../support/staff.ts";

let server: TestServer;
let admin: TestUser;
let adminBrowser: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
  await createStaff(server, "mona", "moderator");
  await createUser(server, "ursula");
  adminBrowser = await signedIn(server, "adam");
});
afterAll(() => server?.close());

const state = (id: number) =>
  server.database.port.get<{ suspended: number | null; silenced: number | null; approved: unknown; role: string | null }>(
    "SELECT a.suspended_at AS suspended, a.silenced_at AS silenced, u.approved AS approved, u.role AS role FROM accounts a LEFT JOIN users u ON u.account_id = a.id WHERE a.id = ?",
    [id],
  );

/** Posts the form of the account's page to `action` (the button a person would press), following the redirect. */
const press = (browser: BrowserSession, id: number, action: string, fields: Record<string, string> = {}) => submitOn(browser, `/admin/accounts/${id}`, `/admin/accounts/${id}/${action}`, fields);

describe("who sees /admin/accounts", () => {
  test("signed out: the sign-in, coming back here", async () => {
    const res = await new Client(server.base).get("/admin/accounts");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${server.base}/oauth/sign_in?return_to=${encodeURIComponent("/admin/accounts")}`);
  });

  test("a user and a moderator get the 403 page; a moderator's /admin is the reports", async () => {
    for (const name of ["ursula", "mona"]) {
      const browser = await signedIn(server, name);
      const res = await browser.get("/admin/accounts");
      expect(res.status).toBe(403);
      expect(noticeOf(res)).toBe("You are not allowed to see this page.");
    }
    const user = await signedIn(server, "ursula");
    expect((await user.get("/admin")).status).toBe(403);
    const mod = await signedIn(server, "mona");
    expect((await mod.get("/admin")).headers.get("location")).toBe(`${server.base}/admin/reports`);
    expect((await mod.get("/admin/reports")).status).toBe(200);
  });

  test("an admin sees the local accounts, filters them, and the navigation of the area", async () => {
    expect((await adminBrowser.get("/admin")).headers.get("location")).toBe(`${server.base}/admin/accounts`);
    const page = await adminBrowser.get("/admin/accounts");
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Accounts</h1>");
    for (const name of ["@adam", "@mona", "@ursula"]) expect(page.text).toContain(name);
    expect(page.text).toContain('<a href="/admin/federation">Federation health</a>');
    const filtered = await adminBrowser.get("/admin/accounts", { query: { username: "mo" } });
    expect(filtered.text).toContain("@mona");
    expect(filtered.text).not.toContain("@ursula");
  });
});

describe("actions on a local account", () => {
  test("approve a sign-up waiting for review: it can sign in, and the audit log says who approved it", async () => {
    const pending = await pendingUser(server, "penny", "I knit");
    const page = await adminBrowser.get(`/admin/accounts/${pending.account.id}`);
    expect(page.text).toContain("Pending review");
    expect(page.text).toContain("I knit");
    const before = (await auditLines(server)).length;
    const { post, page: after } = await press(adminBrowser, pending.account.id, "approve");
    expect(post.status).toBe(303);
    expect(noticeOf(after)).toBe("@penny is approved: it can sign in now.");
    // A boolean column reads 1 on SQLite, true on PostgreSQL.
    expect(Boolean((await state(pending.account.id))!.approved)).toBe(true);
    expect((await auditSince(server, before))).toEqual([["approve", "User", String(pending.account.id), admin.account.id]]);
  });

  test("limit, undo, suspend, undo, suspend and delete: each on the page, each in the audit log", async () => {
    const victim = await createUser(server, "vic");
    const id = victim.account.id;
    const before = (await auditLines(server)).length;
    expect(noticeOf((await press(adminBrowser, id, "silence")).page)).toBe("@vic is limited.");
    expect((await state(id))!.silenced).not.toBeNull();
    expect(noticeOf((await press(adminBrowser, id, "unsilence")).page)).toBe("@vic is no longer limited.");
    expect((await state(id))!.silenced).toBeNull();
    expect(noticeOf((await press(adminBrowser, id, "suspend")).page)).toBe("@vic is suspended.");
    expect((await state(id))!.suspended).not.toBeNull();
    // A suspended account is signed out everywhere: its token is revoked.
    expect((await victim.client.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    expect(noticeOf((await press(adminBrowser, id, "unsuspend")).page)).toBe("@vic is no longer suspended.");
    expect((await state(id))!.suspended).toBeNull();
    // Deleting needs a suspension first: there is no button before it.
    expect((await adminBrowser.get(`/admin/accounts/${id}`)).text).not.toContain(`/admin/accounts/${id}/delete`);
    await press(adminBrowser, id, "suspend");
    const { page } = await press(adminBrowser, id, "delete");
    expect(noticeOf(page)).toBe("@vic's data is deleted.");
    expect(page.text).toContain("Deleted");
    expect((await auditSince(server, before)).map(([action, type]) => `${action} ${type}`)).toEqual([
      "silence Account",
      "unsilence Account",
      "suspend Account",
      "unsuspend Account",
      "suspend Account",
      "destroy Account",
    ]);
    expect((await auditSince(server, before)).every(([, , target, who]) => target === String(id) && who === admin.account.id)).toBe(true);
  });

  test("reset password: a random one shown once, the old one and every sign-in gone; a chosen one too short is refused", async () => {
    const rita = await createUser(server, "rita");
    const ritaBrowser = await signedIn(server, "rita");
    const before = (await auditLines(server)).length;
    const { page } = await press(adminBrowser, rita.account.id, "reset_password", { password: "" });
    const shown = /new password is (\S+) \(shown this once\)/.exec(noticeOf(page) ?? "")?.[1];
    expect(shown).toBeString();
    expect((await ritaBrowser.get("/settings/profile")).status).toBe(303);
    await signedIn(server, "rita", shown!);
    expect((await auditSince(server, before))).toEqual([["reset_password", "User", String(rita.account.id), admin.account.id]]);

    const short = await press(adminBrowser, rita.account.id, "reset_password", { password: "short" });
    expect(short.post.status).toBe(422);
    expect(noticeOf(short.page)).toBe("Validation failed: Password is too short (minimum is 8 characters)");
    expect((await auditLines(server)).length).toBe(before + 1);
  });

  test("role: an admin makes a moderator; making an owner (above its own rank) is refused and changes nothing", async () => {
    const max = await createUser(server, "max");
    const before = (await auditLines(server)).length;
    const { page } = await press(adminBrowser, max.account.id, "role", { role: "moderator" });
    expect(noticeOf(page)).toBe("@max is now moderator.");
    expect((await state(max.account.id))!.role).toBe("moderator");
    const refused = await press(adminBrowser, max.account.id, "role", { role: "owner" });
    expect(refused.post.status).toBe(403);
    expect(noticeOf(refused.page)).toBe("This action is not allowed");
    expect((await state(max.account.id))!.role).toBe("moderator");
    expect((await auditSince(server, before))).toEqual([["change_role", "User", String(max.account.id), admin.account.id]]);
  });

  test("an unknown account is a 404 page", async () => {
    const res = await adminBrowser.get("/admin/accounts/999999999");
    expect(res.status).toBe(404);
    expect(noticeOf(res)).toBe("There is no such account.");
  });
});

describe("actions on a remote account", () => {
  test("limit and suspend, with the audit lines", async () => {
    const remote = await remoteAccount(server, "troll", "remote.example");
    const page = await adminBrowser.get(`/admin/accounts/${remote.id}`);
    expect(page.text).toContain("remote.example");
    expect(page.text).not.toContain("reset_password");
    const before = (await auditLines(server)).length;
    expect(noticeOf((await press(adminBrowser, remote.id, "silence")).page)).toBe("@troll@remote.example is limited.");
    expect(noticeOf((await press(adminBrowser, remote.id, "suspend")).page)).toBe("@troll@remote.example is suspended.");
    expect(await state(remote.id)).toMatchObject({ silenced: expect.any(Number), suspended: expect.any(Number) });
    expect((await auditSince(server, before)).map(([a]) => a)).toEqual(["silence", "suspend"]);
  });
});

describe("refusals change nothing", () => {
  test("no ticket, another site's post, and a moderator's or a user's valid ticket: refused, no audit line", async () => {
    const target = await createUser(server, "tess");
    const id = target.account.id;
    const before = (await auditLines(server)).length;
    const page = await adminBrowser.get(`/admin/accounts/${id}`);
    const form = formTo(page, `/admin/accounts/${id}/suspend`);

    const missing = await adminBrowser.post(`/admin/accounts/${id}/suspend`, { form: {} });
    expect(missing.status).toBe(422);
    expect(noticeOf(missing)).toBe("Your form expired or was incomplete. Please try again.");
    const elsewhere = await adminBrowser.post(`/admin/accounts/${id}/suspend`, { form: form.fields, headers: { origin: "https://evil.example" } });
    expect(elsewhere.status).toBe(403);

    for (const name of ["mona", "ursula"]) {
      const browser = await signedIn(server, name);
      // A ticket of their own session, from a page they may see.
      const ticket = formTo(await browser.get("/settings/profile"), "/settings/profile").fields.authenticity_token!;
      const res = await browser.post(`/admin/accounts/${id}/suspend`, { form: { authenticity_token: ticket } });
      expect(res.status).toBe(403);
      expect(noticeOf(res)).toBe("You are not allowed to see this page.");
    }
    expect((await state(id))!.suspended).toBeNull();
    expect((await auditLines(server)).length).toBe(before);
  });
});
