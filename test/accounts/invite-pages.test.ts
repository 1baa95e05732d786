/**
 * Invite links from the pages: any member makes them at /settings/invites (the link shown once,
 * only its digest kept), lists and revokes their own; admins list every member's at
 * /admin/invites and revoke any, in the audit log. Bad choices, another's invite, a missing
 * ticket and a moderator are refused, and nothing changes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff } from "../support/staff.ts";
import type { BrowserSession } from "../support/browser.ts";

let server: TestServer;
let member: BrowserSession;
let admin: BrowserSession;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATIONS: "closed" });
  await createUser(server, "wren");
  await createUser(server, "jay");
  await createStaff(server, "adam", "admin");
  await createStaff(server, "mona", "moderator");
  member = await signedIn(server, "wren");
  admin = await signedIn(server, "adam");
});
afterAll(() => server?.close());

const invitesOf = (username: string) =>
  server.database.port.all<{ id: number; maxUses: number | null; lifetime: number | null; comment: string | null }>(
    'SELECT i.id, i.max_uses AS "maxUses", i.expires_at - i.created_at AS lifetime, i.comment FROM invites i JOIN accounts a ON a.id = i.account_id WHERE a.username = ? ORDER BY i.id',
    [username],
  );
const count = async () => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM invites"))!.n;
const linkIn = (text: string) => /value="(http:\/\/[^"]+\/invite\/[^"]+)"/.exec(text)?.[1];
const ticketOf = async (b: BrowserSession) => /name="authenticity_token" value="([^"]+)"/.exec((await b.get("/settings/profile")).text)![1]!;

describe("a member's invites", () => {
  test("made with a use limit, a lifetime and a note, the link shown once; it lets someone in; revoked, it lets nobody in", async () => {
    expect((await new Client(server.base).get("/api/v1/instance")).body.invites_enabled).toBe(true);
    const page = await member.get("/settings/invites");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/settings/invites" aria-current="page">Invite people</a>');
    const made = await member.submit(formTo(page, "/settings/invites"), { max_uses: "5", expires_in: "86400", comment: "for the birding club" });
    expect(made.status).toBe(200);
    expect(noticeOf(made)).toBe("The invite link is made.");
    const link = linkIn(made.text)!;
    expect(link).toMatch(/\/invite\/[A-Za-z0-9_-]{16,}$/);
    const [row] = await invitesOf("wren");
    expect(row).toMatchObject({ maxUses: 5, lifetime: 86_400_000, comment: "for the birding club" });
    expect((await server.ctx.services.invites.find(link.split("/").pop()!)).state).toBe("usable");
    expect((await new Client(server.base).get(new URL(link).pathname, { headers: { accept: "text/html" } })).status).toBe(200);

    // Listed afterwards without the link: only its digest is kept.
    const listed = await member.get("/settings/invites");
    expect(listed.text).toContain("for the birding club");
    expect(listed.text).toContain("0 of 5");
    expect(linkIn(listed.text)).toBeUndefined();

    const revoked = await submitOn(member, "/settings/invites", `/settings/invites/${row!.id}/revoke`);
    expect(noticeOf(revoked.page)).toBe("The invite is revoked: its link lets nobody in now.");
    expect((await server.ctx.services.invites.find(link.split("/").pop()!)).state).toBe("expired");
    expect(revoked.page.text).toContain("<td>Expired</td>");
  });

  test("a number of uses or a lifetime the form does not offer, an overlong note, another's invite and a missing ticket are refused; nothing changes", async () => {
    const before = await count();
    const audit = (await auditLines(server)).length;
    const uses = await submitOn(member, "/settings/invites", "/settings/invites", { max_uses: "7" });
    expect(uses.post.status).toBe(422);
    expect(noticeOf(uses.page)).toBe("Validation failed: Max uses is not included in the list");
    const expiry = await submitOn(member, "/settings/invites", "/settings/invites", { expires_in: "5" });
    expect(expiry.post.status).toBe(422);
    expect(noticeOf(expiry.page)).toBe("Validation failed: Expires in is not included in the list");
    const note = await submitOn(member, "/settings/invites", "/settings/invites", { comment: "x".repeat(421) });
    expect(note.post.status).toBe(422);
    expect(noticeOf(note.page)).toBe("Validation failed: Comment is too long (maximum is 420 characters)");
    const missing = await member.post("/settings/invites", { form: { max_uses: "", expires_in: "" } });
    expect(missing.status).toBe(422);
    expect(await count()).toBe(before);

    const theirs = await server.ctx.services.invites.create((await server.ctx.services.accounts.getLocal("jay"))!.id, {});
    const other = await member.post(`/settings/invites/${theirs.invite.id}/revoke`, { form: { authenticity_token: await ticketOf(member) } });
    expect(other.status).toBe(404);
    expect((await server.ctx.services.invites.find(theirs.code)).state).toBe("usable");
    expect((await auditLines(server)).length).toBe(audit);
  });
});

describe("/admin/invites", () => {
  test("an admin sees every member's invites with their maker and revokes one, in the audit log", async () => {
    const jay = (await server.ctx.services.accounts.getLocal("jay"))!;
    const issued = await server.ctx.services.invites.create(jay.id, { comment: "for my sister" });
    const before = (await auditLines(server)).length;
    const page = await admin.get("/admin/invites");
    expect(page.status).toBe(200);
    expect(page.text).toContain("<td><bdi>@wren</bdi></td>");
    expect(page.text).toContain("for my sister");
    const { page: after } = await submitOn(admin, "/admin/invites", `/admin/invites/${issued.invite.id}/revoke`);
    expect(noticeOf(after)).toBe("The invite is revoked: its link lets nobody in now.");
    expect((await server.ctx.services.invites.find(issued.code)).state).toBe("expired");
    const adam = (await server.ctx.services.accounts.getLocal("adam"))!;
    expect((await auditSince(server, before))).toEqual([["destroy", "Invite", String(issued.invite.id), adam.id]]);
    const summary = (await server.database.port.get<{ summary: string }>("SELECT summary FROM admin_actions ORDER BY id DESC LIMIT 1"))!;
    expect(summary.summary).toBe("@jay's invite: for my sister");
  });

  test("a moderator gets the 403 page and cannot revoke; an unknown invite is a 404 page; a post without a ticket changes nothing", async () => {
    const jay = (await server.ctx.services.accounts.getLocal("jay"))!;
    const issued = await server.ctx.services.invites.create(jay.id, {});
    const before = (await auditLines(server)).length;
    const mod = await signedIn(server, "mona");
    expect((await mod.get("/admin/invites")).status).toBe(403);
    const byModerator = await mod.post(`/admin/invites/${issued.invite.id}/revoke`, { form: { authenticity_token: await ticketOf(mod) } });
    expect(byModerator.status).toBe(403);
    const missing = await admin.post(`/admin/invites/${issued.invite.id}/revoke`, { form: {} });
    expect(missing.status).toBe(422);
    const unknown = await admin.post("/admin/invites/999999/revoke", { form: { authenticity_token: await ticketOf(admin) } });
    expect(unknown.status).toBe(404);
    expect((await server.ctx.services.invites.find(issued.code)).state).toBe("usable");
    expect((await auditLines(server)).length).toBe(before);
  });
});
