/**
 * /settings/password, /settings/sessions and /settings/applications: a password change asks for
 * the current one and signs other browsers out; a session or an app is revoked by its owner
 * only, and a revoked app's token no longer works.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseScopes } from "../../src/auth/scopes.ts";
import { BrowserSession } from "../support/browser.ts";
import { createUser, PASSWORD, registerApp, type TestUser } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let erin: TestUser;
let frank: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  erin = await createUser(server, "erin");
  frank = await createUser(server, "frank");
  await createUser(server, "gus");
});
afterAll(() => server.close());

const hashOf = async (id: number) => (await server.database.port.get<{ h: string }>("SELECT password_hash AS h FROM users WHERE account_id = ?", [id]))!.h;
const sessionCount = async (id: number) => (await server.database.port.get<{ n: number }>("SELECT count(*) AS n FROM web_sessions WHERE account_id = ?", [id]))!.n;

describe("password", () => {
  test("wrong or blank current password, short or unconfirmed new one: refused in Mastodon's words, nothing changed", async () => {
    const browser = await signedIn(server, "erin");
    const hash = await hashOf(erin.account.id);
    for (const [fields, error] of [
      [{ current_password: "not it", password: "a new passphrase", password_confirmation: "a new passphrase" }, "Validation failed: Current password is invalid"],
      [{ current_password: "", password: "a new passphrase", password_confirmation: "a new passphrase" }, "Validation failed: Current password can't be blank"],
      [{ current_password: PASSWORD, password: "short", password_confirmation: "short" }, "Validation failed: Password is too short (minimum is 8 characters)"],
      [{ current_password: PASSWORD, password: "a new passphrase", password_confirmation: "another one" }, "Validation failed: Password confirmation doesn't match Password"],
    ] as const) {
      const { post } = await submitOn(browser, "/settings/password", "/settings/password", fields);
      expect([post.status, noticeOf(post)]).toEqual([422, error]);
    }
    const noTicket = await browser.post("/settings/password", { form: { current_password: PASSWORD, password: "a new passphrase", password_confirmation: "a new passphrase" } });
    expect(noTicket.status).toBe(422);
    expect((await hashOf(erin.account.id))).toBe(hash);
  });

  test("changed: the new password signs in, the old does not, other browsers are signed out, apps are not", async () => {
    const browser = await signedIn(server, "frank");
    const other = await signedIn(server, "frank");
    expect((await sessionCount(frank.account.id))).toBe(2);
    const page = await browser.get("/settings/password");
    for (const name of ["current_password", "password", "password_confirmation"]) expect(page.text).toContain(`<label for="f-${name}">`);
    const { post, page: after } = await submitOn(browser, "/settings/password", "/settings/password", { current_password: PASSWORD, password: "a brand new passphrase", password_confirmation: "a brand new passphrase" });
    expect(post.status).toBe(303);
    expect(noticeOf(after)).toBe("Your password has been changed. 1 other browser was signed out.");
    expect((await browser.get("/settings/password")).status).toBe(200);
    expect((await other.get("/settings/password")).status).toBe(303);
    expect((await sessionCount(frank.account.id))).toBe(1);
    expect(await server.ctx.services.accounts.verifyLogin("frank", PASSWORD)).toBeNull();
    expect(await server.ctx.services.accounts.verifyLogin("frank", "a brand new passphrase")).toBe(frank.account.id);
    expect((await frank.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });
});

const ANDROID = "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36";

/** A browser signed in as `username` that says it is `userAgent`. */
async function signedInAs(username: string, userAgent: string) {
  const browser = new BrowserSession(server.base);
  const form = formTo(await browser.get("/oauth/sign_in", { headers: { "user-agent": userAgent } }), "/oauth/sign_in");
  expect((await browser.post("/oauth/sign_in", { form: { ...form.fields, username, password: PASSWORD }, headers: { "user-agent": userAgent } })).status).toBe(303);
  const id = (await server.database.port.get<{ id: number }>("SELECT id FROM web_sessions WHERE user_agent = ? ORDER BY id DESC", [userAgent]))!.id;
  return { browser, id };
}

describe("sign-in sessions", () => {
  test("lists the browsers as they said they were, and signs one out", async () => {
    const browser = await signedIn(server, "erin");
    const phone = await signedInAs("erin", ANDROID);
    const page = await browser.get("/settings/sessions");
    expect(page.text).toContain("Chrome on Android");
    expect(page.text).toContain("127.0.0.1");
    expect(page.text).toContain("(this browser)");
    const { post, page: after } = await submitOn(browser, "/settings/sessions", `/settings/sessions/${phone.id}/revoke`);
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe(`${server.base}/settings/sessions`);
    expect(noticeOf(after)).toBe("Session successfully revoked.");
    expect(after.text).not.toContain("Chrome on Android");
    expect((await phone.browser.get("/settings/profile")).status).toBe(303);
    expect((await browser.get("/settings/profile")).status).toBe(200);
  });

  test("another account's session, or one without the ticket, is not signed out", async () => {
    const browser = await signedIn(server, "erin");
    const theirs = await signedInAs("gus", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0");
    const ticket = formTo(await browser.get("/settings/sessions"), "/settings/sign_out").fields.authenticity_token!;
    const foreign = await browser.post(`/settings/sessions/${theirs.id}/revoke`, { form: { authenticity_token: ticket } });
    expect(foreign.status).toBe(404);
    expect(noticeOf(foreign)).toBe("Record not found");
    const mine = await signedInAs("erin", ANDROID);
    const noTicket = await browser.post(`/settings/sessions/${mine.id}/revoke`, { form: {} });
    expect(noTicket.status).toBe(422);
    expect((await theirs.browser.get("/settings/profile")).status).toBe(200);
    expect((await mine.browser.get("/settings/profile")).status).toBe(200);
  });
});

describe("authorised apps", () => {
  test("lists the apps holding tokens, and revoking one takes its tokens and unexchanged codes back", async () => {
    const { services } = server.ctx;
    const app = (await services.applications.register({ name: "Pocket Elephant", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write push", website: "https://pocket.example" })).app;
    const one = await services.tokens.issue(app.id, erin.account.id, parseScopes("read"));
    const two = await services.tokens.issue(app.id, erin.account.id, parseScopes("read write"));
    const theirs = await services.tokens.issue(app.id, frank.account.id, parseScopes("read"));
    const browser = await signedIn(server, "erin");
    const page = await browser.get("/settings/applications");
    expect(page.text).toContain('<a href="https://pocket.example" rel="noopener noreferrer nofollow"><bdi>Pocket Elephant</bdi></a>');
    expect(page.text).toContain("read, write");
    // The test's own client (createUser's app) is there too.
    expect(page.text).toContain("Test client");

    const { post, page: after } = await submitOn(browser, "/settings/applications", `/settings/applications/${app.id}/revoke`);
    expect(post.status).toBe(303);
    expect(noticeOf(after)).toBe("Application revoked.");
    expect(after.text).not.toContain("Pocket Elephant");
    for (const t of [one, two]) expect((await new Client(server.base, t.accessToken).get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    // Only erin's: frank's token of the same app, and erin's other apps, still work.
    expect((await new Client(server.base, theirs.accessToken).get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    expect((await erin.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });

  test("an app that holds nothing of the account, or a post without the ticket: refused, nothing revoked", async () => {
    const { services } = server.ctx;
    const app = (await registerApp(server, "read")).app;
    const token = await services.tokens.issue(app.id, frank.account.id, parseScopes("read"));
    const mine = await services.tokens.issue(app.id, erin.account.id, parseScopes("read"));
    const browser = await signedIn(server, "erin");
    const ticket = formTo(await browser.get("/settings/applications"), "/settings/sign_out").fields.authenticity_token!;
    const none = await browser.post("/settings/applications/999999/revoke", { form: { authenticity_token: ticket } });
    expect(none.status).toBe(404);
    const noTicket = await browser.post(`/settings/applications/${app.id}/revoke`, { form: {} });
    expect(noTicket.status).toBe(422);
    for (const t of [token, mine]) expect((await new Client(server.base, t.accessToken).get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });
});
