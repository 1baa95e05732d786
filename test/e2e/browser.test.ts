/**
 * The OAuth sign-in and consent pages of the compiled executable, in a real browser:
 * Debian's Chromium driven by playwright-core (no browser download). Screenshots are kept
 * in test-artifacts/. Without /usr/bin/chromium (a laptop), the test skips and says why;
 * `.ci/run` installs Chromium first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createOAuthAPIClient, createRestAPIClient } from "masto";
import type { Browser, Page } from "playwright-core";
import { ARTIFACTS, CHROMIUM, chromiumAvailable, launchChromium } from "../support/chromium.ts";
import { buildExecutable, startExecutable, type RunningExecutable } from "./executable.ts";

const available = chromiumAvailable;
if (!available) console.log(`browser test skipped: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);

const PASSWORD = "a long and secret passphrase";
const CALLBACK = "https://app.example/callback";

let build: { file: string; cleanup(): void };
let exe: RunningExecutable;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  build = buildExecutable();
  exe = await startExecutable(build.file);
  expect(exe.run(["accounts", "create", "hana", "--email", "hana@e2e.test", "--password", PASSWORD]).code).toBe(0);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await exe?.stop();
  build?.cleanup();
});

async function registerApp() {
  const app = await createRestAPIClient({ url: exe.url }).v1.apps.create({ clientName: "Browser Test App", redirectUris: CALLBACK, scopes: "read write", website: "https://app.example" });
  return app as typeof app & { clientId: string; clientSecret: string };
}

/**
 * Submits the page's sign-in form and waits for the server's answer to it, whose status it
 * returns; an unexpected answer then fails with what the page shows instead of a wait for
 * an element that never comes.
 */
async function submitSignIn(page: Page): Promise<{ status: number; describe(): Promise<string> }> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/oauth/authorize/sign_in"),
    page.click("button[type=submit]"),
  ]);
  await page.waitForLoadState("domcontentloaded");
  return { status: response.status(), describe: async () => `${response.status()} from ${response.url()}: ${(await response.text()).slice(0, 500)}` };
}

/** A page whose navigations to the app's callback are answered here (the network is closed). */
async function pageWithCallback() {
  const page = await browser.newPage();
  // Playwright's own waits (30 s by default) get most of the test's time: on a busy machine
  // Chromium and the executable are slow, not broken.
  page.setDefaultTimeout(100_000);
  const callbacks: URL[] = [];
  await page.route(`${CALLBACK}**`, (route) => {
    callbacks.push(new URL(route.request().url()));
    return route.fulfill({ status: 200, contentType: "text/html", body: "<h1>Back in the app</h1>" });
  });
  return { page, callbacks };
}

describe.skipIf(!available)("OAuth pages in Chromium", () => {
  test("sign in (after a wrong password), authorize, and the app gets a working token", async () => {
    const app = await registerApp();
    const { page, callbacks } = await pageWithCallback();
    const authorize = `${exe.url}/oauth/authorize?response_type=code&client_id=${app.clientId}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=read+write&state=xyz`;
    await page.goto(authorize);
    await expect(page.title()).resolves.toContain("Sign in");
    await page.screenshot({ path: join(ARTIFACTS, "oauth-sign-in.png"), fullPage: true });

    await page.fill("#username", "hana@e2e.test");
    await page.fill("#password", "not the password");
    const refused = await submitSignIn(page);
    expect({ status: refused.status, answer: await refused.describe() }).toMatchObject({ status: 401 });
    await expect(page.locator(".error").textContent()).resolves.toBe("Invalid username, e-mail address or password.");

    await page.fill("#username", "hana");
    await page.fill("#password", PASSWORD);
    const signedIn = await submitSignIn(page);
    expect({ status: signedIn.status, answer: await signedIn.describe() }).toMatchObject({ status: 200 });
    await expect(page.locator("h1").textContent()).resolves.toBe("Authorize Browser Test App?");
    await expect(page.locator("li").allTextContents()).resolves.toEqual([expect.stringMatching(/^read: /), expect.stringMatching(/^write: /)]);
    await page.screenshot({ path: join(ARTIFACTS, "oauth-consent.png"), fullPage: true });

    await page.click("button[value=approve]");
    await page.waitForURL(`${CALLBACK}**`);
    expect(callbacks).toHaveLength(1);
    expect(callbacks[0]!.searchParams.get("state")).toBe("xyz");
    const code = callbacks[0]!.searchParams.get("code")!;
    const token = await createOAuthAPIClient({ url: exe.url }).token.create({
      grantType: "authorization_code",
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      code,
      redirectUri: CALLBACK,
    });
    const me = await createRestAPIClient({ url: exe.url, accessToken: token.accessToken }).v1.accounts.verifyCredentials();
    expect(me.username).toBe("hana");
    expect(existsSync(join(ARTIFACTS, "oauth-consent.png"))).toBe(true);
    await page.close();
  }, 120_000);

  test("deny sends the browser back with access_denied", async () => {
    const app = await registerApp();
    const { page, callbacks } = await pageWithCallback();
    await page.goto(`${exe.url}/oauth/authorize?response_type=code&client_id=${app.clientId}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=read`);
    await page.fill("#username", "hana");
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    await page.click("button[value=deny]");
    await page.waitForURL(`${CALLBACK}**`);
    expect(callbacks[0]!.searchParams.get("error")).toBe("access_denied");
    expect(callbacks[0]!.searchParams.get("code")).toBeNull();
    await page.close();
  }, 120_000);
});
