/**
 * Two-factor sign-in in a real browser (Debian's Chromium through playwright-core): a member sets
 * it up from the settings by label and button, signs out, signs in again with a code, then with
 * a recovery code, and turns it off; no page runs a script or breaks its CSP. Screenshots are
 * kept in test-artifacts/two-factor/. Without /usr/bin/chromium the test skips and says why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ManualClock } from "../../src/clock.ts";
import { ARTIFACTS, CHROMIUM, chromiumAvailable, launchChromium } from "../support/chromium.ts";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { codeFor, START, STEP_MS } from "../two-factor/support.ts";
import { INVALID_SIGN_IN_CODE } from "../../src/services/accounts/two-factor.ts";

const available = chromiumAvailable;
if (!available) console.log(`two-factor browser test skipped: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);

const SHOTS = join(ARTIFACTS, "two-factor");

let server: TestServer;
let browser: Browser;
let rosa: TestUser;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  // The server's clock is the test's: codes are computed for it, and a step is moved on at will.
  server = await startTestServer({}, { clock: new ManualClock(START) });
  rosa = await createUser(server, "rosa");
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const notice = (page: Page) => page.locator("#flash").textContent();
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

async function submit(page: Page, button: string) {
  await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: button, exact: true }).first().click()]);
}

async function passwordStep(page: Page) {
  await page.goto(`${server.base}/settings/two-factor`);
  expect(new URL(page.url()).pathname).toBe("/oauth/sign_in");
  await page.getByLabel("Username or e-mail address").fill("rosa");
  await page.getByLabel("Password").fill(PASSWORD);
  await submit(page, "Sign in");
}

describe.skipIf(!available)("two-factor sign-in in Chromium", () => {
  test("set up, sign in with a code and with a recovery code, disable", async () => {
    for (const scheme of ["light", "dark"] as const) {
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1000, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      const problems: string[] = [];
      page.on("console", (m) => {
        // The refusals this test asks for (401, 422) are logged as failed loads; anything else (a CSP violation) is a problem.
        if (m.type() === "error" && !/^Failed to load resource: the server responded with a status of (401|422)\b/.test(m.text())) problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(String(e)));

      // Signed in with the password only, the member sets it up.
      await passwordStep(page);
      expect(new URL(page.url()).pathname).toBe("/settings/two-factor");
      await submit(page, "Set up");
      const qr = page.getByRole("img", { name: "QR code of the two-factor secret for your authenticator app" });
      expect(await qr.isVisible()).toBe(true);
      const box = (await qr.boundingBox())!;
      expect(box.width).toBeGreaterThan(150);
      await qr.screenshot({ path: join(SHOTS, `qr-${scheme}.png`) });
      await shot(page, `setup-${scheme}`);
      const secret = (await page.locator("code.secret").textContent())!.replaceAll(" ", "");
      await page.getByLabel("Two-factor code").fill("000000");
      await submit(page, "Enable");
      expect(await notice(page)).toBe("The entered code was invalid! Are server time and device time correct?");
      await page.getByLabel("Two-factor code").fill(codeFor(server, secret));
      await submit(page, "Enable");
      expect(await notice(page)).toBe("Two-factor authentication successfully enabled.");
      const codes = await page.locator("ol.codes code").allTextContents();
      expect(codes).toHaveLength(10);
      await shot(page, `recovery-codes-${scheme}`);
      await submit(page, "Sign out");
      expect(await context.cookies()).not.toContainEqual(expect.objectContaining({ name: "_rookery_session" }));

      // Signing in now asks for a code after the password.
      server.clock.advance(STEP_MS);
      await passwordStep(page);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain("Sign in to");
      await page.getByLabel("Two-factor code").fill("123456");
      await submit(page, "Sign in");
      expect(await page.getByRole("alert").textContent()).toBe(INVALID_SIGN_IN_CODE);
      await shot(page, `code-refused-${scheme}`);
      await page.getByLabel("Two-factor code").fill(codeFor(server, secret));
      await submit(page, "Sign in");
      expect(new URL(page.url()).pathname).toBe("/settings/two-factor");
      expect(await page.getByText("You have 10 recovery codes left.").isVisible()).toBe(true);
      await submit(page, "Sign out");

      // A recovery code, once.
      await passwordStep(page);
      await page.getByLabel("Two-factor code").fill(codes[0]!);
      await submit(page, "Sign in");
      expect(await page.getByText("You have 9 recovery codes left.").isVisible()).toBe(true);
      await shot(page, `enabled-${scheme}`);

      // Turned off with the password: the next sign-in asks for none.
      await page.locator("#disable-password").fill(PASSWORD);
      await submit(page, "Disable two-factor authentication");
      expect(await notice(page)).toBe("Two-factor authentication successfully disabled.");
      expect(await server.ctx.services.twoFactor.enabled(rosa.account.id)).toBe(false);
      expect(problems).toEqual([]);
      await context.close();
    }
  }, 120_000);
});
