/**
 * Staff turn off a member's two-factor sign-in from the account's admin page (Mastodon's
 * UserPolicy#disable_2fa?: manage_user_access and a role above the member's), in the audit log;
 * refused for an account of the same rank or above, for one without two-factor, without a
 * ticket, and for a moderator, each changing nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserSession } from "../support/browser.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff } from "../support/staff.ts";
import { count, enableTwoFactor } from "./support.ts";

let server: TestServer;
let admin: TestUser;
let adminBrowser: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
  adminBrowser = await signedIn(server, "adam");
});
afterAll(() => server?.close());

const ticketOf = async (b: BrowserSession) => /name="authenticity_token" value="([^"]+)"/.exec((await b.get("/settings/profile")).text)![1]!;
const enabled = (id: number) => server.ctx.services.twoFactor.enabled(id);

describe("an admin turns a member's two-factor off", () => {
  test("from the account's page: the state shown, the button pressed, secret and recovery codes gone, the audit line written", async () => {
    const member = await createUser(server, "lostphone");
    await enableTwoFactor(server, member.account.id, "lostphone");
    const page = await adminBrowser.get(`/admin/accounts/${member.account.id}`);
    expect(page.text).toContain("<dt>Two-factor sign-in</dt><dd>on</dd>");
    const before = (await auditLines(server)).length;
    const post = await adminBrowser.submit(formTo(page, `/admin/accounts/${member.account.id}/disable_2fa`), {});
    expect(post.status).toBe(303);
    const after = await adminBrowser.get(`/admin/accounts/${member.account.id}`);
    expect(noticeOf(after)).toBe("Two-factor sign-in is off for @lostphone: the password alone signs it in now.");
    expect(after.text).toContain("<dt>Two-factor sign-in</dt><dd>off</dd>");
    expect(after.text).not.toContain("/disable_2fa");
    expect(await enabled(member.account.id)).toBe(false);
    expect(await count(server, "two_factor_recovery_codes", `account_id = ${member.account.id}`)).toBe(0);
    expect((await auditSince(server, before))).toEqual([["disable_2fa", "User", String(member.account.id), admin.account.id]]);
    // The member signs in with the password alone again.
    expect((await signedIn(server, "lostphone")).cookies.has("_rookery_session")).toBe(true);
  });
});

describe("refusals change nothing", () => {
  test("off already, the owner's and another admin's account, no ticket, a moderator: refused, no audit line", async () => {
    const plain = await createUser(server, "nophone");
    const owner = await createStaff(server, "olga", "owner");
    const peer = await createStaff(server, "alba", "admin");
    const member = await createUser(server, "keepsit");
    // Signed in before turning it on: the sign-in would ask for a code afterwards.
    const ownerBrowser = await signedIn(server, "olga");
    for (const u of [owner, peer, member]) await enableTwoFactor(server, u.account.id, u.account.username);
    await createStaff(server, "mona", "moderator");
    const mod = await signedIn(server, "mona");
    const before = (await auditLines(server)).length;
    const ticket = await ticketOf(adminBrowser);
    const post = (b: BrowserSession, id: number, authenticity_token?: string) => b.post(`/admin/accounts/${id}/disable_2fa`, { form: authenticity_token ? { authenticity_token } : {} });

    const off = await post(adminBrowser, plain.account.id, ticket);
    expect(off.status).toBe(422);
    expect(noticeOf(off)).toBe("Two-factor authentication is not enabled.");
    for (const above of [owner, peer]) {
      expect((await adminBrowser.get(`/admin/accounts/${above.account.id}`)).text).not.toContain("/disable_2fa\"");
      const refused = await post(adminBrowser, above.account.id, ticket);
      expect(refused.status).toBe(403);
      expect(noticeOf(refused)).toBe("This action is not allowed");
    }
    expect((await post(adminBrowser, member.account.id)).status).toBe(422);
    expect((await post(mod, member.account.id, await ticketOf(mod))).status).toBe(403);
    expect(await Promise.all([owner, peer, member].map((u) => enabled(u.account.id)))).toEqual([true, true, true]);
    expect((await auditLines(server)).length).toBe(before);

    // The owner outranks an admin.
    const { page } = await submitOn(ownerBrowser, `/admin/accounts/${peer.account.id}`, `/admin/accounts/${peer.account.id}/disable_2fa`);
    expect(noticeOf(page)).toBe("Two-factor sign-in is off for @alba: the password alone signs it in now.");
    expect(await enabled(peer.account.id)).toBe(false);
  });
});
