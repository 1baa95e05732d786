/**
 * The admin pages for the server itself, over HTTP: domain blocks and allows, relays, custom
 * emojis (a multipart upload), rules, announcements, the description and registrations, the
 * audit log. Each action by an admin is in the audit log; a moderator gets the 403 page; a
 * post without a ticket, or refused by the rules, changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import type { BrowserSession } from "../support/browser.ts";
import { appToken, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, auditSince, createStaff, remoteAccount } from "../support/staff.ts";

let server: TestServer;
let admin: TestUser;
let browser: BrowserSession;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
  await createStaff(server, "mona", "moderator");
  browser = await signedIn(server, "adam");
});
afterAll(() => server?.close());

const count = async (table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
const ticketOf = async (b: BrowserSession, path = "/settings/profile") => /name="authenticity_token" value="([^"]+)"/.exec((await b.get(path)).text)![1]!;

describe("domain blocks and allows", () => {
  test("block a domain (its accounts here go), refuse a covered one, unblock; allow and remove; each in the audit log", async () => {
    const spammer = await remoteAccount(server, "spam", "spam.example");
    const before = (await auditLines(server)).length;
    const { page } = await submitOn(browser, "/admin/domain_blocks", "/admin/domain_blocks", { domain: "Spam.Example" });
    expect(noticeOf(page)).toBe("spam.example is blocked.");
    expect(await server.ctx.services.accounts.get(spammer.id)).toBeUndefined();
    expect(server.ctx.services.federationDomains.refuses("spam.example")).toBe(true);
    const again = await submitOn(browser, "/admin/domain_blocks", "/admin/domain_blocks", { domain: "sub.spam.example" });
    expect(again.post.status).toBe(422);
    expect(noticeOf(again.page)).toBe("You have already imposed stricter limits on spam.example.");
    expect(await count("domain_blocks")).toBe(1);
    const id = (await server.database.port.get<{ id: number }>("SELECT id FROM domain_blocks"))!;
    const removed = await submitOn(browser, "/admin/domain_blocks", `/admin/domain_blocks/${id.id}/delete`);
    expect(noticeOf(removed.page)).toBe("spam.example is no longer blocked.");
    expect(server.ctx.services.federationDomains.refuses("spam.example")).toBe(false);

    const allowed = await submitOn(browser, "/admin/domain_allows", "/admin/domain_allows", { domain: "friends.example" });
    expect(noticeOf(allowed.page)).toBe("friends.example is allowed.");
    expect(allowed.page.text).toContain("WHITELIST_MODE is off");
    const allow = (await server.database.port.get<{ id: number }>("SELECT id FROM domain_allows"))!;
    expect(noticeOf((await submitOn(browser, "/admin/domain_allows", `/admin/domain_allows/${allow.id}/delete`)).page)).toBe("friends.example is no longer allowed.");
    expect((await auditSince(server, before)).map(([a, t, , who]) => `${a} ${t} ${who}`)).toEqual([
      `create DomainBlock ${admin.account.id}`,
      `destroy DomainBlock ${admin.account.id}`,
      `create DomainAllow ${admin.account.id}`,
      `destroy DomainAllow ${admin.account.id}`,
    ]);
  });

  test("a bad domain is refused in the rules' words and nothing is added", async () => {
    const before = (await auditLines(server)).length;
    const res = await submitOn(browser, "/admin/domain_blocks", "/admin/domain_blocks", { domain: "not a domain" });
    expect(res.post.status).toBe(422);
    expect(noticeOf(res.page)).toStartWith("Validation failed");
    expect(await count("domain_blocks")).toBe(0);
    expect((await auditLines(server)).length).toBe(before);
  });
});

describe("relays", () => {
  test("added pending and listed, removed; a URL that is no http(s) is refused; each change in the audit log", async () => {
    const before = (await auditLines(server)).length;
    const { page } = await submitOn(browser, "/admin/relays", "/admin/relays", { url: "https://relay.example/inbox", kind: "mastodon" });
    expect(noticeOf(page)).toBe("https://relay.example/inbox is added; it is pending until the relay accepts.");
    expect(page.text).toContain("pending since");
    const bad = await submitOn(browser, "/admin/relays", "/admin/relays", { url: "ftp://relay.example/inbox", kind: "mastodon" });
    expect(bad.post.status).toBe(422);
    expect(await count("relays")).toBe(1);
    const removed = await submitOn(browser, "/admin/relays", "/admin/relays/delete", { url: "https://relay.example/inbox" });
    expect(noticeOf(removed.page)).toBe("https://relay.example/inbox is removed.");
    expect(await count("relays")).toBe(0);
    expect((await auditSince(server, before)).map(([a, t]) => `${a} ${t}`)).toEqual(["create Relay", "destroy Relay"]);
  });
});

describe("custom emojis", () => {
  test("uploaded from a multipart form and shown; a bad shortcode or a file that is no image is refused; removed", async () => {
    const png = new Uint8Array(await sharp({ create: { width: 32, height: 32, channels: 4, background: "#00aa00" } }).png().toBuffer());
    const page = await browser.get("/admin/custom_emojis");
    expect(page.text).toContain('enctype="multipart/form-data"');
    const form = formTo(page, "/admin/custom_emojis");
    const upload = (shortcode: string, bytes: Uint8Array<ArrayBuffer>, type = "image/png") => {
      const data = new FormData();
      data.set("authenticity_token", form.fields.authenticity_token!);
      data.set("shortcode", shortcode);
      data.set("category", "Blobs");
      data.set("image", new File([bytes], "blob.png", { type }));
      return browser.post("/admin/custom_emojis", { multipart: data });
    };
    const before = (await auditLines(server)).length;
    const added = await upload("blob_green", png);
    expect(added.status).toBe(303);
    const shown = await browser.get("/admin/custom_emojis");
    expect(noticeOf(shown)).toBe(":blob_green: is added.");
    expect(shown.text).toMatch(/<img src="http:\/\/[^"]+\/system\/custom_emojis\/[^"]+\.png" alt=":blob_green:"/);

    const badName = await upload("x", png);
    expect(badName.status).toBe(422);
    expect(noticeOf(badName)).toBe("Validation failed: Shortcode is invalid");
    const notImage = await upload("not_image", new TextEncoder().encode("<svg></svg>"), "image/png");
    expect(notImage.status).toBe(422);
    expect(noticeOf(notImage)).toBe("Validation failed: Image content type is invalid");
    expect(await count("custom_emojis")).toBe(1);

    const removed = await submitOn(browser, "/admin/custom_emojis", "/admin/custom_emojis/delete", { shortcode: "blob_green" });
    expect(noticeOf(removed.page)).toBe(":blob_green: is removed.");
    expect(await count("custom_emojis")).toBe(0);
    expect((await auditSince(server, before)).map(([a, t]) => `${a} ${t}`)).toEqual(["create CustomEmoji", "destroy CustomEmoji"]);
  });
});

describe("rules, announcements, description", () => {
  test("a rule added shows in the instance's rules, and is removed; a blank one is refused", async () => {
    const before = (await auditLines(server)).length;
    expect(noticeOf((await submitOn(browser, "/admin/rules", "/admin/rules", { text: "Be kind", hint: "Always" })).page)).toBe("The rule is added.");
    const rules = await new Client(server.base).get("/api/v1/instance/rules");
    expect(rules.body.map((r: { text: string }) => r.text)).toEqual(["Be kind"]);
    const blank = await submitOn(browser, "/admin/rules", "/admin/rules", { text: "  " });
    expect(blank.post.status).toBe(422);
    expect(noticeOf(blank.page)).toBe("Validation failed: Text can't be blank");
    expect(noticeOf((await submitOn(browser, "/admin/rules", `/admin/rules/${rules.body[0].id}/delete`)).page)).toBe("The rule is removed.");
    expect(await count("instance_rules")).toBe(0);
    expect((await auditSince(server, before)).map(([a, t]) => `${a} ${t}`)).toEqual(["create Rule", "destroy Rule"]);
  });

  test("an announcement is published to users' apps and removed; an end before the start is refused", async () => {
    const before = (await auditLines(server)).length;
    expect(noticeOf((await submitOn(browser, "/admin/announcements", "/admin/announcements", { text: "Maintenance tonight" })).page)).toBe("The announcement is published.");
    const shown = await admin.client.get("/api/v1/announcements");
    expect(shown.body.map((a: { content: string }) => a.content)).toEqual(["<p>Maintenance tonight</p>"]);
    const bad = await submitOn(browser, "/admin/announcements", "/admin/announcements", { text: "x", starts_at: "2026-12-02T00:00Z", ends_at: "2026-12-01T00:00Z" });
    expect(bad.post.status).toBe(422);
    expect(noticeOf(bad.page)).toBe("Validation failed: Ends at must be after the start");
    const notDate = await submitOn(browser, "/admin/announcements", "/admin/announcements", { text: "x", starts_at: "soon", ends_at: "later" });
    expect(noticeOf(notDate.page)).toBe("Validation failed: Starts is not a date");
    expect(await count("announcements")).toBe(1);
    expect(noticeOf((await submitOn(browser, "/admin/announcements", `/admin/announcements/${shown.body[0].id}/delete`)).page)).toBe("The announcement is removed.");
    expect(await count("announcements")).toBe(0);
    expect((await auditSince(server, before)).map(([a, t]) => `${a} ${t}`)).toEqual(["create Announcement", "destroy Announcement"]);
  });

  test("the extended description is saved and served; the registrations mode is shown, following REGISTRATIONS", async () => {
    const before = (await auditLines(server)).length;
    const { page } = await submitOn(browser, "/admin/settings", "/admin/settings", { extended_description: "A small server for knitters." });
    expect(noticeOf(page)).toBe("Changes successfully saved!");
    expect(page.text).toContain(">A small server for knitters.</textarea>");
    expect(page.text).toContain("Mode: <strong>closed</strong>");
    expect(page.text).toContain('<option value="setting" selected>As the REGISTRATIONS setting says (closed)</option>');
    const served = await new Client(server.base).get("/api/v1/instance/extended_description");
    expect(served.body.content).toContain("A small server for knitters.");
    expect((await auditSince(server, before))).toEqual([["update", "Instance", null, admin.account.id]]);
  });
});

describe("the registrations mode", () => {
  const modeRow = async () => (await server.database.port.get<{ value: string }>("SELECT value FROM instance_settings WHERE key = 'registrations_mode'")) ?? null;
  const signUp = async (username: string) => {
    const { token } = await appToken(server, "read write");
    return new Client(server.base).post("/api/v1/accounts", { token, json: { username, email: `${username}@example.test`, password: "longenough", agreement: true, locale: "en", reason: "Knitting" } });
  };

  test("set to approval, it is what the instance, NodeInfo, the about page and sign-up go by; set back, REGISTRATIONS applies again", async () => {
    const before = (await auditLines(server)).length;
    expect((await signUp("early")).status).toBe(403);
    const { page } = await submitOn(browser, "/admin/settings", "/admin/settings/registrations", { registrations_mode: "approval" });
    expect(noticeOf(page)).toBe("Changes successfully saved!");
    expect(page.text).toContain("Mode: <strong>approval</strong>");
    expect(page.text).toContain('<option value="approval" selected>');
    expect(await modeRow()).toEqual({ value: "approval" });

    const http = new Client(server.base);
    const v1 = await http.get("/api/v1/instance");
    expect([v1.body.registrations, v1.body.approval_required]).toEqual([true, true]);
    expect((await http.get("/api/v2/instance")).body.registrations).toMatchObject({ enabled: true, approval_required: true });
    expect((await http.get("/nodeinfo/2.0")).body.openRegistrations).toBe(true);
    expect((await http.get("/", { headers: { accept: "text/html" } })).text).toContain("Sign-ups are reviewed");
    const joined = await signUp("hopeful");
    expect(joined.status).toBe(200);
    const hopeful = await server.database.port.get<{ approved: unknown }>("SELECT u.approved FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = 'hopeful'");
    // A boolean column reads 0 on SQLite, false on PostgreSQL.
    expect(hopeful && Boolean(hopeful.approved)).toBe(false);

    const back = await submitOn(browser, "/admin/settings", "/admin/settings/registrations", { registrations_mode: "setting" });
    expect(noticeOf(back.page)).toBe("Changes successfully saved!");
    expect(await modeRow()).toBeNull();
    expect((await http.get("/api/v1/instance")).body.registrations).toBe(false);
    expect((await signUp("late")).status).toBe(403);
    expect((await auditSince(server, before)).map(([a, t, id, who]) => `${a} ${t} ${id} ${who}`)).toEqual([`update Instance null ${admin.account.id}`, `update Instance null ${admin.account.id}`]);
    const summaries = await server.database.port.all<{ summary: string }>("SELECT summary FROM admin_actions ORDER BY id DESC LIMIT 2");
    expect(summaries.map((r) => r.summary)).toEqual(["registrations mode: as REGISTRATIONS says (closed)", "registrations mode: approval"]);
  });

  test("a mode that is none of them, a post without a ticket, and a moderator are refused, and nothing changes", async () => {
    const before = (await auditLines(server)).length;
    const bad = await submitOn(browser, "/admin/settings", "/admin/settings/registrations", { registrations_mode: "sometimes" });
    expect(bad.post.status).toBe(422);
    expect(noticeOf(bad.page)).toBe("Validation failed: Registrations mode is not included in the list");
    const missing = await browser.post("/admin/settings/registrations", { form: { registrations_mode: "open" } });
    expect(missing.status).toBe(422);
    const mod = await signedIn(server, "mona");
    const byModerator = await mod.post("/admin/settings/registrations", { form: { authenticity_token: await ticketOf(mod), registrations_mode: "open" } });
    expect(byModerator.status).toBe(403);
    expect(await modeRow()).toBeNull();
    expect((await new Client(server.base).get("/api/v1/instance")).body.registrations).toBe(false);
    expect((await auditLines(server)).length).toBe(before);
  });
});

describe("the audit log page", () => {
  test("shows who did what, newest first; the operator at the command line by that name", async () => {
    const page = await browser.get("/admin/action_logs");
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Audit log</h1>");
    expect(page.text).toContain("<td><bdi>@adam</bdi></td><td>update</td>");
    expect(page.text).toContain("Instance: extended description");
    // The admin was made one at the command line (test/support/staff.ts).
    expect(page.text).toContain("the operator (command line)");
  });
});

describe("refusals", () => {
  test("a moderator gets the 403 page for every server page and action; a post without a ticket changes nothing", async () => {
    const mod = await signedIn(server, "mona");
    const ticket = await ticketOf(mod);
    const before = (await auditLines(server)).length;
    for (const path of ["/admin/domain_blocks", "/admin/domain_allows", "/admin/relays", "/admin/custom_emojis", "/admin/rules", "/admin/announcements", "/admin/settings", "/admin/federation", "/admin/action_logs"]) {
      const get = await mod.get(path);
      expect([path, get.status]).toEqual([path, 403]);
      if (path === "/admin/federation" || path === "/admin/action_logs") continue; // pages to read, with nothing to post
      const post = await mod.post(path, { form: { authenticity_token: ticket, domain: "x.example", text: "x", url: "https://r.example/inbox", extended_description: "x" } });
      expect([path, post.status]).toEqual([path, 403]);
    }
    const missing = await browser.post("/admin/rules", { form: { text: "No ticket" } });
    expect(missing.status).toBe(422);
    expect(await count("instance_rules")).toBe(0);
    expect(await count("domain_blocks")).toBe(0);
    expect((await auditLines(server)).length).toBe(before);
  });
});
