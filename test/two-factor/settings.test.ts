/**
 * The two-factor page of the settings: enrolment with a QR code and a first code, recovery
 * codes shown once, new ones, disabling with the password or a code; every form refused from
 * elsewhere or without its ticket, and throttled.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/clock.ts";
import { qrSvg } from "../../src/web/qr.ts";
import { BrowserSession } from "../support/browser.ts";
import { createUser, PASSWORD } from "../support/fixtures.ts";
import { parseForms } from "../support/html.ts";
import { Client, type Res } from "../support/http.ts";
import { formTo, noticeOf, signedIn, submitOn } from "../support/pages.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { codeFor, count, enableTwoFactor, START, STEP_MS } from "./support.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, { clock: new ManualClock(START) });
});
afterAll(() => server.close());

const PAGE = "/settings/two-factor";
const secretRow = async (accountId: number) =>
  (await server.database.port.get<{ sealed_secret: string; enabled_at: number | null }>("SELECT sealed_secret, enabled_at FROM two_factor_secrets WHERE account_id = ?", [accountId])) ?? null;

/** The recovery codes a page shows. */
const codesOn = (page: Res) => [...page.text.matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((m) => m[1]!);
const alertOf = (page: Res) => (/<p id="flash" class="notice alert"/.test(page.text) ? noticeOf(page) : null);

/** Signs in through the code step (the member sign-in of an account with two-factor). */
async function signInWithCode(username: string, code: string): Promise<Res> {
  const browser = new BrowserSession(server.base);
  const form = await browser.get("/oauth/sign_in");
  const step = await browser.submit(parseForms(form.text)[0]!, { username, password: PASSWORD });
  return browser.submit(parseForms(step.text)[0]!, { otp_attempt: code });
}

describe("enrolment", () => {
  let browser: BrowserSession;
  let accountId: number;

  beforeAll(async () => {
    accountId = (await createUser(server, "alice")).account.id;
    browser = await signedIn(server, "alice");
  });

  test("the page offers to set it up; the setup shows the secret as a QR code of its otpauth URI and as text", async () => {
    const page = await browser.get(PAGE);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<a href="${PAGE}" aria-current="page">Two-factor authentication</a>`);
    const { post, page: setup } = await submitOn(browser, PAGE, "/settings/two-factor/setup");
    expect(post.status).toBe(303);
    expect(setup.status).toBe(200);
    const secret = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replaceAll(" ", "");
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const host = new URL(server.base).host;
    const uri = `otpauth://totp/${encodeURIComponent(host)}:alice?secret=${secret}&issuer=${encodeURIComponent(host)}`;
    expect(setup.text).toContain(qrSvg(uri, "QR code of the two-factor secret for your authenticator app").value);
    expect(setup.headers.get("cache-control")).toBe("private, no-store");
    // Waiting for a code is not on: signing in still needs the password only.
    expect(await server.ctx.services.twoFactor.enabled(accountId)).toBe(false);
    // Sealed at rest, under a key file of its own that only the server's user reads.
    expect((await secretRow(accountId))!.sealed_secret).not.toContain(secret);
    expect(statSync(join(server.dataDir, "two-factor.key")).mode & 0o777).toBe(0o600);
  });

  test("a wrong first code is refused and changes nothing; the right one turns it on and shows ten recovery codes once", async () => {
    const setup = await browser.get(PAGE);
    const secret = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replaceAll(" ", "");
    for (const wrong of ["123456", codeFor(server, secret, 2), ""]) {
      const res = await browser.submit(formTo(setup, "/settings/two-factor/confirm"), { otp_attempt: wrong });
      expect(res.status).toBe(422);
      expect(alertOf(res)).toBe("The entered code was invalid! Are server time and device time correct?");
      expect((await secretRow(accountId))!.enabled_at).toBeNull();
    }
    expect(await count(server, "two_factor_recovery_codes", `account_id = ${accountId}`)).toBe(0);
    const done = await browser.submit(formTo(setup, "/settings/two-factor/confirm"), { otp_attempt: codeFor(server, secret) });
    expect(done.status).toBe(200);
    expect(noticeOf(done)).toBe("Two-factor authentication successfully enabled.");
    const codes = codesOn(done);
    expect(codes).toHaveLength(10);
    expect(await count(server, "two_factor_recovery_codes", `account_id = ${accountId}`)).toBe(10);
    // Kept only as digests.
    const stored = await server.database.port.all<{ code_digest: string }>("SELECT code_digest FROM two_factor_recovery_codes WHERE account_id = ?", [accountId]);
    for (const { code_digest } of stored) expect(codes.some((c) => code_digest.includes(c.replaceAll("-", "")))).toBe(false);
    // The page shows the state, never the codes again.
    const after = await browser.get(PAGE);
    expect(after.text).toContain("You have 10 recovery codes left.");
    expect(codesOn(after)).toEqual([]);
    expect(after.text).not.toContain(`class="secret"`);
    // And signing in now asks for a code; a code from the page works.
    server.clock.advance(STEP_MS);
    expect((await signInWithCode("alice", codes[0]!)).status).toBe(303);
    expect((await browser.get(PAGE)).text).toContain("You have 9 recovery codes left.");
  });

  test("setting up again while it is on is refused", async () => {
    const page = await browser.get(PAGE);
    expect(parseForms(page.text).map((f) => f.action)).not.toContain("/settings/two-factor/setup");
    const forged = await browser.post("/settings/two-factor/setup", { form: { authenticity_token: formTo(page, "/settings/two-factor/disable").fields.authenticity_token! } });
    expect(forged.status).toBe(422);
    expect(alertOf(forged)).toBe("Two-factor authentication is already enabled.");
    expect((await secretRow(accountId))!.enabled_at).not.toBeNull();
  });
});

describe("once it is on", () => {
  test("new recovery codes need the password or a code; the old ones stop working", async () => {
    const bob = await createUser(server, "bob");
    const { secret, recoveryCodes } = await enableTwoFactor(server, bob.account.id, "bob");
    const browser = await signInBrowser("bob", secret);
    const page = await browser.get(PAGE);
    const before = await digestsOf(bob.account.id);
    const wrong = await browser.submit(formTo(page, "/settings/two-factor/recovery-codes"), { current_password: "wrong password" });
    expect(wrong.status).toBe(422);
    expect(alertOf(wrong)).toBe("Enter your current password or a two-factor code to confirm.");
    const blank = await browser.submit(formTo(page, "/settings/two-factor/recovery-codes"), {});
    expect(blank.status).toBe(422);
    const badCode = await browser.submit(formTo(page, "/settings/two-factor/recovery-codes"), { otp_attempt: "000000" });
    expect(badCode.status).toBe(422);
    expect(alertOf(badCode)).toBe("Invalid two-factor code.");
    expect(await digestsOf(bob.account.id)).toEqual(before);
    server.clock.advance(STEP_MS);
    const made = await browser.submit(formTo(page, "/settings/two-factor/recovery-codes"), { otp_attempt: codeFor(server, secret) });
    expect(made.status).toBe(200);
    expect(noticeOf(made)).toBe("Recovery codes successfully regenerated.");
    const fresh = codesOn(made);
    expect(fresh).toHaveLength(10);
    expect(await digestsOf(bob.account.id)).not.toEqual(before);
    expect((await signInWithCode("bob", recoveryCodes[5]!)).status).toBe(401);
    expect((await signInWithCode("bob", fresh[5]!)).status).toBe(303);
    // By password too.
    const byPassword = await browser.submit(formTo(page, "/settings/two-factor/recovery-codes"), { current_password: PASSWORD });
    expect(byPassword.status).toBe(200);
  });

  test("disabling: refused without the right password or code, done with either; then the password alone signs in", async () => {
    const carol = await createUser(server, "carol");
    const { secret } = await enableTwoFactor(server, carol.account.id, "carol");
    const browser = await signInBrowser("carol", secret);
    const page = await browser.get(PAGE);
    for (const fields of [{ current_password: "wrong password" }, {}, { otp_attempt: "000000", current_password: PASSWORD }] as Record<string, string>[]) {
      const res = await browser.submit(formTo(page, "/settings/two-factor/disable"), fields);
      expect(res.status).toBe(422);
      expect(await server.ctx.services.twoFactor.enabled(carol.account.id)).toBe(true);
    }
    const { post, page: after } = await submitOn(browser, PAGE, "/settings/two-factor/disable", { current_password: PASSWORD });
    expect(post.status).toBe(303);
    expect(noticeOf(after)).toBe("Two-factor authentication successfully disabled.");
    expect(await secretRow(carol.account.id)).toBeNull();
    expect(await count(server, "two_factor_recovery_codes", `account_id = ${carol.account.id}`)).toBe(0);
    expect(parseForms(after.text).map((f) => f.action)).toContain("/settings/two-factor/setup");
    // A bot's password grant works again.
    const app = (await new Client(server.base).post("/api/v1/apps", { json: { client_name: "Bot", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read" } })).body;
    const grant = await new Client(server.base).post("/oauth/token", { form: { grant_type: "password", username: "carol", password: PASSWORD, client_id: app.client_id, client_secret: app.client_secret } });
    expect(grant.status).toBe(200);
    // With a code, on another account.
    const dave = await createUser(server, "dave");
    const daveKeys = await enableTwoFactor(server, dave.account.id, "dave");
    const daveBrowser = await signInBrowser("dave", daveKeys.secret);
    server.clock.advance(STEP_MS);
    const byCode = await submitOn(daveBrowser, PAGE, "/settings/two-factor/disable", { otp_attempt: codeFor(server, daveKeys.secret) });
    expect(byCode.post.status).toBe(303);
    expect(await server.ctx.services.twoFactor.enabled(dave.account.id)).toBe(false);
  });
});

describe("every form of the page is refused from elsewhere or without its ticket", () => {
  test("setup, confirm, new codes and disable", async () => {
    const erin = await createUser(server, "erin");
    const { secret } = await enableTwoFactor(server, erin.account.id, "erin");
    const browser = await signInBrowser("erin", secret);
    const page = await browser.get(PAGE);
    const token = formTo(page, "/settings/two-factor/disable").fields.authenticity_token!;
    const state = async () => JSON.stringify([await secretRow(erin.account.id), await count(server, "two_factor_recovery_codes", `account_id = ${erin.account.id} AND used_at IS NULL`)]);
    const before = await state();
    server.clock.advance(STEP_MS);
    const fields = { current_password: PASSWORD, otp_attempt: codeFor(server, secret) };
    for (const action of ["/settings/two-factor/setup", "/settings/two-factor/confirm", "/settings/two-factor/recovery-codes", "/settings/two-factor/disable"]) {
      const foreign = await new Client(server.base).post(action, { form: { authenticity_token: token, ...fields }, headers: { cookie: browser.cookieHeader, origin: "https://evil.example" } });
      expect(foreign.status).toBe(403);
      const noOrigin = await new Client(server.base).post(action, { form: { authenticity_token: token, ...fields }, headers: { cookie: browser.cookieHeader } });
      expect(noOrigin.status).toBe(403);
      const noTicket = await browser.post(action, { form: fields });
      expect(noTicket.status).toBe(422);
      expect(alertOf(noTicket)).toBe("Your form expired or was incomplete. Please try again.");
      expect(codesOn(noTicket)).toEqual([]);
      expect(await state()).toBe(before);
    }
    // The code those posts carried was not spent.
    const done = await browser.submit(formTo(page, "/settings/two-factor/disable"), { otp_attempt: fields.otp_attempt });
    expect(done.status).toBe(303);
  });

  test("signed out, the page and its forms lead to the sign-in", async () => {
    const anonymous = new Client(server.base);
    const res = await anonymous.get(PAGE);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("/oauth/sign_in?return_to=%2Fsettings%2Ftwo-factor");
    const post = await anonymous.post("/settings/two-factor/disable", { form: { current_password: PASSWORD }, headers: { origin: new URL(server.base).origin } });
    expect(post.status).toBe(303);
  });
});

describe("throttling", () => {
  test("passwords and codes given to the page count against the account's sign-in limit", async () => {
    const limited = await startTestServer({ RATE_LIMITS: "on" }, { clock: new ManualClock(START) });
    try {
      const frank = await createUser(limited, "frank");
      const { secret } = await enableTwoFactor(limited, frank.account.id, "frank");
          const browser = new BrowserSession(limited.base);
      const signIn = await browser.get("/oauth/sign_in");
      const step = await browser.submit(parseForms(signIn.text)[0]!, { username: "frank", password: PASSWORD });
      expect((await browser.submit(parseForms(step.text)[0]!, { otp_attempt: codeFor(limited, secret) })).status).toBe(303);
      const page = await browser.get(PAGE);
      let res: Res;
      let attempts = 2; // the password and the code of the sign-in
      do {
        res = await browser.submit(formTo(page, "/settings/two-factor/disable"), { otp_attempt: "000000" });
        attempts++;
      } while (res.status === 422 && attempts < 40);
      expect(res.status).toBe(429);
      expect(attempts).toBe(26);
      expect(alertOf(res)).toBe("Too many attempts. Please try again later.");
      limited.clock.advance(STEP_MS);
      const right = await browser.submit(formTo(page, "/settings/two-factor/disable"), { current_password: PASSWORD });
      expect(right.status).toBe(429);
      expect(await limited.ctx.services.twoFactor.enabled(frank.account.id)).toBe(true);
    } finally {
      await limited.close();
    }
  });
});

/** A browser signed in to an account with two-factor (password, then a code of the next step). */
async function signInBrowser(username: string, secret: string): Promise<BrowserSession> {
  const browser = new BrowserSession(server.base);
  const form = await browser.get("/oauth/sign_in");
  const step = await browser.submit(parseForms(form.text)[0]!, { username, password: PASSWORD });
  const done = await browser.submit(parseForms(step.text)[0]!, { otp_attempt: codeFor(server, secret) });
  expect(done.status).toBe(303);
  return browser;
}

async function digestsOf(accountId: number): Promise<string[]> {
  return (await server.database.port.all<{ code_digest: string }>("SELECT code_digest FROM two_factor_recovery_codes WHERE account_id = ? ORDER BY code_digest", [accountId])).map((r) => r.code_digest);
}
