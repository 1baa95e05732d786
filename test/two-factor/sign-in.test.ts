/**
 * Signing in to an account with two-factor: the member sign-in and the OAuth sign-in ask for a
 * code after the password, a code works once, a recovery code once, and the password grant is
 * refused as Mastodon refuses it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { BrowserSession } from "../support/browser.ts";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { decodeEntities, parseForms, type HtmlForm } from "../support/html.ts";
import { Client, type Res } from "../support/http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { codeFor, count, enableTwoFactor, START, STEP_MS } from "./support.ts";
import { INVALID_SIGN_IN_CODE } from "../../src/services/accounts/two-factor.ts";

let server: TestServer;
let http: Client;
let alice: TestUser;
let secret: string;
let recoveryCodes: string[];

const CALLBACK = "https://app.example/callback";
const INVALID_GRANT =
  "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(START) });
  http = new Client(server.base);
  alice = await createUser(server, "alice");
  await createUser(server, "bob");
  ({ secret, recoveryCodes } = await enableTwoFactor(server, alice.account.id, "alice"));
});
afterAll(() => server.close());

const sessions = () => count(server, "web_sessions");

/** A browser through the member sign-in's password step, on the code page. */
async function passwordStep(username = "alice"): Promise<{ browser: BrowserSession; page: Res; form: HtmlForm }> {
  const browser = new BrowserSession(server.base);
  const signIn = await browser.get("/oauth/sign_in", { query: { return_to: "/settings/profile" } });
  const page = await browser.submit(parseForms(signIn.text)[0]!, { username, password: PASSWORD });
  const form = parseForms(page.text)[0]!;
  return { browser, page, form };
}

function errorOf(page: Res): string | null {
  const m = /<p class="error" role="alert">([\s\S]*?)<\/p>/.exec(page.text);
  return m ? decodeEntities(m[1]!) : null;
}

function expectNoSession(res: Res) {
  expect(res.headers.getSetCookie().filter((c) => c.startsWith("_rookery_session="))).toEqual([]);
}

describe("the member sign-in", () => {
  test("asks for the code after the right password, and signs in with it", async () => {
    const before = await sessions();
    const { browser, page, form } = await passwordStep();
    expect(page.status).toBe(200);
    expect(page.text).toContain("<title>Two-factor authentication - Rookery</title>");
    expect(form.action).toBe("/oauth/sign_in/two_factor");
    expect(Object.keys(form.fields)).toEqual(["ticket", "otp_attempt"]);
    expect(page.text).toContain(`autocomplete="one-time-code"`);
    // The password alone signs nobody in.
    expectNoSession(page);
    expect(await sessions()).toBe(before);
    const done = await browser.submit(form, { otp_attempt: codeFor(server, secret) });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${server.base}/settings/profile`);
    expect(await sessions()).toBe(before + 1);
    expect((await browser.get("/settings/profile")).status).toBe(200);
  });

  test("a wrong password is refused before any code is asked", async () => {
    const browser = new BrowserSession(server.base);
    const signIn = await browser.get("/oauth/sign_in");
    const res = await browser.submit(parseForms(signIn.text)[0]!, { username: "alice", password: "wrong password" });
    expect(res.status).toBe(401);
    expect(parseForms(res.text)[0]!.action).toBe("/oauth/sign_in");
  });

  test("a wrong code is refused, the code page shown again, and nobody signed in", async () => {
    server.clock.advance(STEP_MS);
    const before = await sessions();
    const { browser, form } = await passwordStep();
    for (const wrong of ["000000", codeFor(server, secret, 3), "", "abcd-efgh-ijkl-mnop", "1".repeat(100)]) {
      const res = await browser.submit(form, { otp_attempt: wrong });
      expect(res.status).toBe(401);
      expect(errorOf(res)).toBe(INVALID_SIGN_IN_CODE);
      expect(parseForms(res.text)[0]!.action).toBe("/oauth/sign_in/two_factor");
      expectNoSession(res);
    }
    expect(await sessions()).toBe(before);
    // The page asks again with the same ticket: the right code still works.
    expect((await browser.submit(form, { otp_attempt: codeFor(server, secret) })).status).toBe(303);
  });

  test("a code works once: the same code again is refused within its window, the next one works", async () => {
    server.clock.advance(STEP_MS);
    const code = codeFor(server, secret);
    const first = await passwordStep();
    expect((await first.browser.submit(first.form, { otp_attempt: code })).status).toBe(303);
    const before = await sessions();
    const second = await passwordStep();
    const replay = await second.browser.submit(second.form, { otp_attempt: code });
    expect(replay.status).toBe(401);
    expect(errorOf(replay)).toBe(INVALID_SIGN_IN_CODE);
    expect(await sessions()).toBe(before);
    // Nor does the code of the step before, which drift would otherwise let in.
    expect((await second.browser.submit(second.form, { otp_attempt: codeFor(server, secret, -1) })).status).toBe(401);
    server.clock.advance(STEP_MS);
    expect((await second.browser.submit(second.form, { otp_attempt: codeFor(server, secret) })).status).toBe(303);
  });

  test("a phone a step off still signs in; two steps off does not", async () => {
    server.clock.advance(5 * STEP_MS);
    const late = await passwordStep();
    expect((await late.browser.submit(late.form, { otp_attempt: codeFor(server, secret, 2) })).status).toBe(401);
    expect((await late.browser.submit(late.form, { otp_attempt: codeFor(server, secret, -2) })).status).toBe(401);
    expect((await late.browser.submit(late.form, { otp_attempt: codeFor(server, secret, -1) })).status).toBe(303);
    server.clock.advance(5 * STEP_MS);
    const early = await passwordStep();
    expect((await early.browser.submit(early.form, { otp_attempt: codeFor(server, secret, 1) })).status).toBe(303);
  });

  test("a recovery code works once, typed with or without its dashes", async () => {
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
    expect(new Set(recoveryCodes).size).toBe(10);
    const code = recoveryCodes[0]!;
    const first = await passwordStep();
    expect((await first.browser.submit(first.form, { otp_attempt: ` ${code.toUpperCase()} ` })).status).toBe(303);
    expect(await count(server, "two_factor_recovery_codes", `account_id = ${alice.account.id} AND used_at IS NOT NULL`)).toBe(1);
    const again = await passwordStep();
    for (const typed of [code, code.replaceAll("-", "")]) {
      const res = await again.browser.submit(again.form, { otp_attempt: typed });
      expect(res.status).toBe(401);
      expect(errorOf(res)).toBe(INVALID_SIGN_IN_CODE);
    }
    expect((await again.browser.submit(again.form, { otp_attempt: recoveryCodes[1]!.replaceAll("-", "") })).status).toBe(303);
    // Another account's codes are not this one's.
    expect(await count(server, "two_factor_recovery_codes", `used_at IS NOT NULL`)).toBe(2);
  });

  test("an account without two-factor signs in with its password alone", async () => {
    const browser = new BrowserSession(server.base);
    const signIn = await browser.get("/oauth/sign_in");
    const res = await browser.submit(parseForms(signIn.text)[0]!, { username: "bob", password: PASSWORD });
    expect(res.status).toBe(303);
  });
});

describe("the code form is protected as the password form is", () => {
  test("a post from elsewhere, without Origin, or with Origin null is refused and signs nobody in", async () => {
    // Past the step the last test's early phone used.
    server.clock.advance(2 * STEP_MS);
    const before = await sessions();
    const { browser, form } = await passwordStep();
    const fields = { ...form.fields, otp_attempt: codeFor(server, secret) };
    for (const headers of [{ origin: "https://evil.example" }, { origin: "null" }, {}] as Record<string, string>[]) {
      const res = await http.post(form.action, { form: fields, headers: { cookie: browser.cookieHeader, ...headers } });
      expect(res.status).toBe(403);
      expect(decodeEntities(res.text)).toContain("The request did not come from this server's pages.");
      expectNoSession(res);
    }
    expect(await sessions()).toBe(before);
    // The code was not spent by the refused posts.
    expect((await browser.submit(form, { otp_attempt: fields.otp_attempt })).status).toBe(303);
  });

  test("the ticket belongs to the browser that gave the password", async () => {
    server.clock.advance(STEP_MS);
    const before = await sessions();
    const { form } = await passwordStep();
    const other = new BrowserSession(server.base);
    await other.get("/oauth/sign_in");
    const res = await other.submit(form, { otp_attempt: codeFor(server, secret) });
    expect(res.status).toBe(403);
    expect(res.text).toContain("opened in another browser");
    expectNoSession(res);
    // Without any cookie at all, too.
    const bare = await http.post(form.action, { form: { ...form.fields, otp_attempt: codeFor(server, secret) }, headers: { origin: new URL(server.base).origin } });
    expect(bare.status).toBe(403);
    expect(await sessions()).toBe(before);
  });

  test("a forged, expired or used ticket sends the browser back to the password", async () => {
    server.clock.advance(STEP_MS);
    const before = await sessions();
    const { browser, form } = await passwordStep();
    const forged = await browser.submit(form, { ticket: `${form.fields.ticket}x`, otp_attempt: codeFor(server, secret) });
    expect(forged.status).toBe(422);
    expect(errorOf(forged)).toBe("Your sign-in expired. Please sign in again.");
    expect(parseForms(forged.text)[0]!.action).toBe("/oauth/sign_in");
    server.clock.advance(11 * 60 * 1000);
    const expired = await browser.submit(form, { otp_attempt: codeFor(server, secret) });
    expect(expired.status).toBe(422);
    expect(parseForms(expired.text)[0]!.action).toBe("/oauth/sign_in");
    expect(await sessions()).toBe(before);
    const fresh = await passwordStep();
    expect((await fresh.browser.submit(fresh.form, { otp_attempt: codeFor(server, secret) })).status).toBe(303);
    server.clock.advance(STEP_MS);
    const used = await fresh.browser.submit(fresh.form, { otp_attempt: codeFor(server, secret) });
    expect(used.status).toBe(422);
    expectNoSession(used);
  });

  test("a password changed between the two steps sends the browser back to the password", async () => {
    const carol = await createUser(server, "carol");
    const { secret: carolSecret } = await enableTwoFactor(server, carol.account.id, "carol");
    const { browser, form } = await passwordStep("carol");
    await server.database.port.run("UPDATE users SET password_hash = 'changed' WHERE account_id = ?", [carol.account.id]);
    const before = await sessions();
    const res = await browser.submit(form, { otp_attempt: codeFor(server, carolSecret) });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toBe("Your sign-in expired. Please sign in again.");
    expect(await sessions()).toBe(before);
  });
});

describe("the OAuth sign-in", () => {
  async function newApp() {
    const res = await http.post("/api/v1/apps", { json: { client_name: "Phone App", redirect_uris: CALLBACK, scopes: "read write" } });
    return res.body as { client_id: string; client_secret: string };
  }

  test("asks for the code between the password and the consent, then gives the app its code", async () => {
    server.clock.advance(STEP_MS);
    const app = await newApp();
    const browser = new BrowserSession(server.base);
    const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "read", state: "s1" } });
    const codePage = await browser.submit(parseForms(page.text)[0]!, { username: "alice", password: PASSWORD });
    expect(codePage.status).toBe(200);
    expect(codePage.text).toContain("Sign in to authorize <bdi>Phone App</bdi>");
    expectNoSession(codePage);
    const form = parseForms(codePage.text)[0]!;
    expect(form.action).toBe("/oauth/authorize/two_factor");
    const wrong = await browser.submit(form, { otp_attempt: "000000" });
    expect(wrong.status).toBe(401);
    expect(errorOf(wrong)).toBe(INVALID_SIGN_IN_CODE);
    const consent = await browser.submit(form, { otp_attempt: codeFor(server, secret) });
    expect(consent.status).toBe(200);
    expect(consent.text).toContain("Authorize <bdi>Phone App</bdi>?");
    const approve = parseForms(consent.text)[0]!;
    const redirect = await browser.submit(approve, { decision: "approve" });
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get("location")!);
    expect(location.searchParams.get("state")).toBe("s1");
    const token = await http.post("/oauth/token", {
      form: { grant_type: "authorization_code", code: location.searchParams.get("code")!, redirect_uri: CALLBACK, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(token.status).toBe(200);
    const me = await new Client(server.base, token.body.access_token).get("/api/v1/accounts/verify_credentials");
    expect(me.body.username).toBe("alice");
  });

  test("the code form of the OAuth sign-in refuses posts from elsewhere and other browsers", async () => {
    server.clock.advance(STEP_MS);
    const app = await newApp();
    const browser = new BrowserSession(server.base);
    const page = await browser.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: CALLBACK, response_type: "code" } });
    const form = parseForms((await browser.submit(parseForms(page.text)[0]!, { username: "alice", password: PASSWORD })).text)[0]!;
    const before = await sessions();
    const foreign = await http.post(form.action, { form: { ...form.fields, otp_attempt: codeFor(server, secret) }, headers: { cookie: browser.cookieHeader, origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    const other = new BrowserSession(server.base);
    await other.get("/oauth/authorize", { query: { client_id: app.client_id, redirect_uri: CALLBACK, response_type: "code" } });
    const stolen = await other.submit(form, { otp_attempt: codeFor(server, secret) });
    expect(stolen.status).toBe(403);
    const forged = await browser.submit(form, { ticket: "x", otp_attempt: codeFor(server, secret) });
    expect(forged.status).toBe(422);
    expect(forged.text).toContain("Your sign-in expired. Please start again from the application.");
    for (const res of [foreign, stolen, forged]) expectNoSession(res);
    expect(await sessions()).toBe(before);
  });
});

describe("the password grant", () => {
  test("is refused for an account with two-factor exactly as for a wrong password (Mastodon's answer)", async () => {
    const app = (await http.post("/api/v1/apps", { json: { client_name: "Bot", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read" } })).body;
    const tokens = await count(server, "oauth_access_tokens");
    const base = { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret };
    const refused = await http.post("/oauth/token", { form: { ...base, username: "alice", password: PASSWORD } });
    const wrong = await http.post("/oauth/token", { form: { ...base, username: "alice", password: "wrong password" } });
    for (const res of [refused, wrong]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "invalid_grant", error_description: INVALID_GRANT });
    }
    // A code appended to the password, or sent beside it, changes nothing.
    const withCode = await http.post("/oauth/token", { form: { ...base, username: "alice", password: PASSWORD, otp_attempt: codeFor(server, secret) } });
    expect(withCode.status).toBe(400);
    expect(await count(server, "oauth_access_tokens")).toBe(tokens);
    const bob = await http.post("/oauth/token", { form: { ...base, username: "bob", password: PASSWORD } });
    expect(bob.status).toBe(200);
  });
});

describe("throttling", () => {
  test("codes count with the password against the account's sign-in limit", async () => {
    const limited = await startTestServer({ RATE_LIMITS: "on" }, { clock: new ManualClock(START) });
    try {
      const dave = await createUser(limited, "dave");
      const { secret: daveSecret } = await enableTwoFactor(limited, dave.account.id, "dave");
      const browser = new BrowserSession(limited.base);
      const signIn = await browser.get("/oauth/sign_in");
      const form = parseForms((await browser.submit(parseForms(signIn.text)[0]!, { username: "dave", password: PASSWORD })).text)[0]!;
      let attempts = 1;
      let res: Res;
      do {
        res = await browser.submit(form, { otp_attempt: "000000" });
        attempts++;
      } while (res.status === 401 && attempts < 40);
      expect(res.status).toBe(429);
      expect(attempts).toBe(26); // the password and 24 codes were the 25 allowed
      expect(errorOf(res)).toBe("Too many sign-in attempts. Please try again later.");
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
      // Even the right code is not looked at now.
      const right = await browser.submit(form, { otp_attempt: codeFor(limited, daveSecret) });
      expect(right.status).toBe(429);
      expectNoSession(right);
      expect(await count(limited, "web_sessions")).toBe(0);
    } finally {
      await limited.close();
    }
  });
});

