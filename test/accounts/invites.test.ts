/**
 * Invite links: `/invite/:code` signs its holder up in a browser even while registrations are
 * closed, approved at once; expired, used-up, revoked and unknown links are refused with a page
 * saying which; the form is refused without its ticket, from another browser or another site.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appToken, createUser, registerApp, type TestUser } from "../support/fixtures.ts";
import { BrowserSession } from "../support/browser.ts";
import { parseForms, type HtmlForm } from "../support/html.ts";
import { Client, type Res } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let http: Client;
let owner: TestUser;

beforeAll(async () => {
  server = await startTestServer({ REGISTRATIONS: "closed", INSTANCE_TITLE: "Rook Hill" });
  http = new Client(server.base);
  owner = await createUser(server, "owner");
  await server.database.port.run("UPDATE users SET role = 'owner' WHERE account_id = ?", [owner.account.id]);
  await server.ctx.services.instanceInfo.addRule("Be kind to corvids", "No <b>crow</b> jokes");
});
afterAll(() => server.close());

const count = async (table: string) => (await server.database.port.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
const usesOf = async (id: number) => (await server.ctx.services.invites.list()).find((l) => l.invite.id === id)!.invite.uses;
const invite = (input: Parameters<TestServer["ctx"]["services"]["invites"]["create"]>[1] = {}) => server.ctx.services.invites.create(owner.account.id, input);
const pathOf = (url: string) => new URL(url).pathname;

/** A browser on an invite's sign-up page, and its form. */
async function openInvite(url: string) {
  const browser = new BrowserSession(server.base);
  const page = await browser.get(pathOf(url));
  expect(page.status).toBe(200);
  const form = parseForms(page.text).find((f) => f.method === "post")!;
  return { browser, page, form };
}

const person = (name: string) => ({ username: name, email: `${name}@example.test`, password: "rooks-nest-42", password_confirmation: "rooks-nest-42", agreement: "1" });

function expectRefusedPage(res: Res, status: number, words: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.text).toContain(words);
  expect(parseForms(res.text).filter((f) => f.method === "post")).toEqual([]);
}

describe("the invite page", () => {
  test("shows a labelled sign-up form with the rules, under the pages' CSP, with no script", async () => {
    const { page, form } = await openInvite((await invite()).url);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self'");
    expect(page.headers.get("cache-control")).toBe("private, no-store");
    expect(page.text).not.toContain("<script");
    expect(page.text).toContain("<h1>Join Rook Hill</h1>");
    expect(page.text).toContain("Be kind to corvids");
    expect(page.text).toContain("No &lt;b&gt;crow&lt;/b&gt; jokes");
    for (const id of ["username", "email", "password", "password_confirmation", "agreement"]) {
      expect(page.text).toContain(`<label for="${id}">`);
      expect(page.text).toContain(`id="${id}"`);
    }
    expect(form.fields.authenticity_token).toMatch(/^ey/);
    expect(page.headers.getSetCookie().some((c) => c.startsWith("_rookery_invite_form=") && c.includes("Path=/invite") && c.includes("HttpOnly"))).toBe(true);
  });

  test("signs up while registrations are closed: approved at once, the use counted, staff told, the account signs in", async () => {
    const issued = await invite({ maxUses: 5 });
    const { browser, form } = await openInvite(issued.url);
    const res = await browser.submit(form, person("invited"));
    expect(res.status).toBe(201);
    expect(res.text).toContain("Welcome, @invited!");
    const row = await server.database.port.get<{ approved: unknown; inviteId: number }>(`SELECT u.approved, u.invite_id AS "inviteId" FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = 'invited'`);
    // A boolean column reads 1 on SQLite, true on PostgreSQL.
    expect({ ...row, approved: Boolean(row?.approved) }).toEqual({ approved: true, inviteId: issued.invite.id });
    expect(await usesOf(issued.invite.id)).toBe(1);

    const notes = await owner.client.get("/api/v1/notifications", { query: { "types[]": "admin.sign_up" } });
    expect(notes.body.map((n: any) => n.account.username)).toContain("invited");

    const { app, clientSecret } = await registerApp(server, "read");
    const grant = await http.post("/oauth/token", { form: { grant_type: "password", username: "invited", password: "rooks-nest-42", client_id: app.clientId, client_secret: clientSecret } });
    expect(grant.status).toBe(200);
    const me = await new Client(server.base, grant.body.access_token).get("/api/v1/accounts/verify_credentials");
    expect(me.status).toBe(200);
    expect(me.body.username).toBe("invited");

    // The API stays closed for everyone else.
    const { token } = await appToken(server);
    const api = await http.post("/api/v1/accounts", { token, json: { ...person("walkin"), agreement: true } });
    expect(api.status).toBe(403);
    expect(api.body).toEqual({ error: "Forbidden" });
  });

  test("invalid input: 422 with the problems listed, what was typed kept (not the password), nothing stored or counted", async () => {
    const issued = await invite();
    const { browser, form } = await openInvite(issued.url);
    const users = await count("users");
    const res = await browser.submit(form, { ...person("owner"), email: "not-an-address", agreement: "" });
    expect(res.status).toBe(422);
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain("E-mail address is invalid");
    expect(res.text).toContain("Username has already been taken");
    expect(res.text).toContain("Service agreement must be accepted");
    expect(res.text).toContain('value="not-an-address"');
    expect(res.text).not.toContain("rooks-nest-42");

    const mismatch = await browser.submit(parseForms(res.text).find((f) => f.method === "post")!, { ...person("mismatched"), password_confirmation: "something-else" });
    expect(mismatch.status).toBe(422);
    expect(mismatch.text).toContain("Password confirmation doesn&#39;t match Password");
    expect(await count("users")).toBe(users);
    expect(await usesOf(issued.invite.id)).toBe(0);
  });

  test("a used-up invite is refused: the page and the form say so, nothing is created", async () => {
    const issued = await invite({ maxUses: 1 });
    const first = await openInvite(issued.url);
    const second = await openInvite(issued.url);
    expect((await first.browser.submit(first.form, person("onlyone"))).status).toBe(201);

    const users = await count("users");
    expectRefusedPage(await second.browser.submit(second.form, person("toolate")), 410, "This invite link has been used up");
    expectRefusedPage(await http.get(pathOf(issued.url)), 410, "This invite link has been used up");
    expect(await count("users")).toBe(users);
    expect(await usesOf(issued.invite.id)).toBe(1);
  });

  test("two sign-ups racing for an invite's last use: one gets it, the other is refused, the count stays true", async () => {
    const issued = await invite({ maxUses: 1 });
    const a = await openInvite(issued.url);
    const b = await openInvite(issued.url);
    const users = await count("users");
    // Both pass the page's check before either has hashed its password; the use is counted in the account's transaction.
    const results = await Promise.all([a.browser.submit(a.form, person("racer_a")), b.browser.submit(b.form, person("racer_b"))]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 410]);
    expect(results.find((r) => r.status === 410)!.text).toContain("This invite link has been used up");
    expect(await count("users")).toBe(users + 1);
    expect(await usesOf(issued.invite.id)).toBe(1);
  });

  test("an expired invite is refused", async () => {
    const issued = await invite({ expiresInMs: 60 * 60 * 1000 });
    const { browser, form } = await openInvite(issued.url);
    server.clock.advance(60 * 60 * 1000 + 1);
    const users = await count("users");
    expectRefusedPage(await browser.submit(form, person("tardy")), 410, "This invite link has expired");
    expectRefusedPage(await http.get(pathOf(issued.url)), 410, "This invite link has expired");
    expect(await count("users")).toBe(users);
  });

  test("a revoked invite is refused (it expires now, as Mastodon's)", async () => {
    const issued = await invite();
    const { browser, form } = await openInvite(issued.url);
    expect(await server.ctx.services.invites.revoke(issued.invite.id)).toBe("revoked");
    expect(await server.ctx.services.invites.revoke(issued.invite.id)).toBe("expired");
    const users = await count("users");
    expectRefusedPage(await browser.submit(form, person("revoked")), 410, "This invite link has expired");
    expect(await count("users")).toBe(users);
  });

  test("an unknown code is 404, and a suspended maker's invites stop working", async () => {
    expectRefusedPage(await http.get("/invite/not-a-real-code"), 404, "This invite link is not valid");
    expectRefusedPage(await http.post("/invite/not-a-real-code", { form: person("nobody"), headers: { origin: server.base } }), 404, "This invite link is not valid");

    const maker = await createUser(server, "maker");
    const issued = await server.ctx.services.invites.create(maker.account.id, {});
    await server.database.port.run("UPDATE accounts SET suspended_at = 1 WHERE id = ?", [maker.account.id]);
    expectRefusedPage(await http.get(pathOf(issued.url)), 410, "This invite link no longer works");
    expect((await server.ctx.services.invites.list()).find((l) => l.invite.id === issued.invite.id)!.state).toBe("disabled");
  });

  test("the only copy of a code is the link: the table keeps its digest", async () => {
    const issued = await invite();
    const stored = (await server.database.port.get<{ h: string }>("SELECT code_hash AS h FROM invites WHERE id = ?", [issued.invite.id]))!;
    expect(stored.h).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.h).not.toContain(issued.code);
    expect(issued.code).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe("the invite form's CSRF protection", () => {
  async function refused(send: (form: HtmlForm, browser: BrowserSession) => Promise<Res>, status: number, words: string) {
    const issued = await invite();
    const { browser, form } = await openInvite(issued.url);
    const users = await count("users");
    const res = await send(form, browser);
    expect(res.status).toBe(status);
    expect(res.text).toContain(words);
    expect(await count("users")).toBe(users);
    expect(await usesOf(issued.invite.id)).toBe(0);
  }

  test("without the ticket: 422", () =>
    refused((form, browser) => browser.submit({ ...form, fields: {} }, person("noticket")), 422, "Your sign-up form expired"));

  test("with a forged ticket: 422", () =>
    refused((form, browser) => browser.submit(form, { ...person("forged"), authenticity_token: "eyJhbGciOiJIUzI1NiJ9.e30.forged" }), 422, "Your sign-up form expired"));

  test("with another browser's ticket (no form cookie): 403", () =>
    refused((form) => http.post(form.action, { form: { ...form.fields, ...person("stolen") }, headers: { origin: server.base } }), 403, "opened in another browser"));

  test("posted from another site, or with no Origin or Referer: 403", async () => {
    await refused((form, browser) => http.post(form.action, { form: { ...form.fields, ...person("crosssite") }, headers: { origin: "https://evil.example", cookie: browser.cookieHeader } }), 403, "did not come from this server");
    await refused((form, browser) => http.post(form.action, { form: { ...form.fields, ...person("noorigin") }, headers: { cookie: browser.cookieHeader } }), 403, "did not come from this server");
  });

  test("a ticket of the sign-in form is not one of the invite form", async () => {
    const signIn = new BrowserSession(server.base);
    const loginTicket = parseForms((await signIn.get("/oauth/sign_in")).text)[0]!.fields.authenticity_token!;
    await refused((form, browser) => browser.submit(form, { ...person("crossform"), authenticity_token: loginTicket }), 422, "Your sign-up form expired");
  });
});

describe("REGISTRATIONS=approval", () => {
  test("an invited user skips the wait", async () => {
    const approval = await startTestServer({ REGISTRATIONS: "approval" });
    try {
      const maker = await createUser(approval, "maker");
      const issued = await approval.ctx.services.invites.create(maker.account.id, {});
      const browser = new BrowserSession(approval.base);
      const page = await browser.get(pathOf(issued.url));
      const res = await browser.submit(parseForms(page.text).find((f) => f.method === "post")!, person("vouched"));
      expect(res.status).toBe(201);
      const row = await approval.database.port.get<{ approved: unknown }>("SELECT approved FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = 'vouched'");
      expect(Boolean(row?.approved)).toBe(true);
    } finally {
      await approval.close();
    }
  });
});
