/**
 * The invite page in a real browser (Debian's Chromium through playwright-core): a person fills
 * the form by its labels, is told what was wrong, signs up, and lands on the welcome page; the
 * pages break no CSP rule and run no script. Screenshots (light and dark) go to test-artifacts/.
 * Without /usr/bin/chromium the test skips and says why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { ARTIFACTS, CHROMIUM, chromiumAvailable, launchChromium } from "../support/chromium.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const available = chromiumAvailable;
if (!available) console.log(`invite page screenshots skipped: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);

let server: TestServer;
let browser: Browser;
let owner: TestUser;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startTestServer({ REGISTRATIONS: "closed", INSTANCE_TITLE: "Rook Hill" });
  owner = await createUser(server, "owner");
  await server.ctx.services.instanceInfo.addRule("Be kind to corvids", "");
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe.skipIf(!available)("the invite page in Chromium", () => {
  for (const scheme of ["light", "dark"] as const) {
    test(`sign up through an invite link while registrations are closed, ${scheme}`, async () => {
      const issued = await server.ctx.services.invites.create(owner.account.id, { maxUses: 1 });
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 420, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        // The refusals' own statuses (422, 410) are the point; anything else (a CSP violation) is not.
        if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of")) problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(String(e)));
      const name = `rook_${scheme}`;
      try {
        expect((await page.goto(issued.url))?.status()).toBe(200);
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        expect(background).toBe(scheme === "dark" ? "rgb(23, 23, 28)" : "rgb(255, 255, 255)");
        await page.screenshot({ path: join(ARTIFACTS, `invite-form-${scheme}.png`), fullPage: true });

        // Every field is found by its label; a mismatched confirmation is told, nothing else lost.
        await page.getByLabel("Username").fill(name);
        await page.getByLabel("E-mail address").fill(`${name}@example.test`);
        await page.getByLabel("Password", { exact: true }).fill("rooks-nest-42");
        await page.getByLabel("Confirm password").fill("rooks-nest-43");
        await page.getByLabel("I have read and agree to the server rules.").check();
        await page.getByRole("button", { name: "Sign up" }).click();
        await page.waitForLoadState();
        expect(await page.getByRole("alert").textContent()).toContain("Password confirmation doesn't match Password");
        expect(await page.getByLabel("Username").inputValue()).toBe(name);
        await page.screenshot({ path: join(ARTIFACTS, `invite-form-error-${scheme}.png`), fullPage: true });

        await page.getByLabel("Password", { exact: true }).fill("rooks-nest-42");
        await page.getByLabel("Confirm password").fill("rooks-nest-42");
        await page.getByLabel("I have read and agree to the server rules.").check();
        // Submitted from the keyboard, as a person without a mouse does.
        await page.getByLabel("Confirm password").press("Enter");
        await page.waitForLoadState();
        expect(await page.textContent("h1")).toBe(`Welcome, @${name}!`);
        await page.screenshot({ path: join(ARTIFACTS, `invite-welcome-${scheme}.png`), fullPage: true });
        expect((await server.ctx.services.accounts.getUser((await server.ctx.services.accounts.getLocal(name))!.id))?.approved).toBe(true);

        // Used up now: the link says so.
        expect((await page.goto(issued.url))?.status()).toBe(410);
        expect(await page.textContent("h1")).toBe("This invite link has been used up");
        await page.screenshot({ path: join(ARTIFACTS, `invite-used-up-${scheme}.png`), fullPage: true });
        expect(problems.join(" | ")).toBe("");
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
