/**
 * The settings pages in a real browser (Debian's Chromium through playwright-core): a member
 * signs in and does each action a person would, by label and button, with no script on any
 * page; the pages read in light and dark, and keyboard focus shows. Screenshots of each page
 * are kept in test-artifacts/settings/. Without /usr/bin/chromium the test skips and says why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { parseScopes } from "../../src/auth/scopes.ts";
import { ARTIFACTS, CHROMIUM, chromiumAvailable, launchChromium } from "../support/chromium.ts";
import { createUser, PASSWORD, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

const available = chromiumAvailable;
if (!available) console.log(`settings pages test skipped: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);

const SHOTS = join(ARTIFACTS, "settings");
const NEW_PASSWORD = "a fresh and longer passphrase";

let server: TestServer;
let browser: Browser;
let nora: TestUser;
let domain: string;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  server = await startTestServer();
  domain = new URL(server.base).host;
  nora = await createUser(server, "nora");
  await createUser(server, "otto");
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A browser context that records every console error and page error (a CSP violation is one). */
async function open(scheme: "light" | "dark" = "light") {
  const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1000, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  return { context, page, problems };
}

async function signIn(page: Page, password = PASSWORD) {
  await page.goto(`${server.base}/settings`);
  expect(new URL(page.url()).pathname).toBe("/oauth/sign_in");
  await page.getByLabel("Username or e-mail address").fill("nora");
  await page.getByLabel("Password").fill(password);
  await Promise.all([page.waitForURL(`${server.base}/settings/profile`), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** Clicks a submit button and waits for the page the post leads to. */
async function submit(page: Page, button: string) {
  await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: button, exact: true }).first().click()]);
}

const notice = (page: Page) => page.locator("#flash").textContent();
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

describe.skipIf(!available)("settings pages in Chromium", () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    ({ context, page, problems } = await open());
    await signIn(page);
  }, 60_000);
  afterAll(() => context?.close());

  test("public profile and posting defaults", async () => {
    await page.getByLabel("This is an automated account").check();
    await page.getByLabel("Require follow requests").check();
    await submit(page, "Save changes");
    expect(await notice(page)).toBe("Changes successfully saved!");
    expect(await page.getByLabel("This is an automated account").isChecked()).toBe(true);
    await shot(page, "profile");
    await page.getByRole("link", { name: "Posting defaults" }).click();
    await page.getByLabel("Default visibility").selectOption("private");
    await page.getByLabel("Who may quote your posts").selectOption("followers");
    await page.getByLabel("Posting language").selectOption("de");
    await submit(page, "Save changes");
    expect(await notice(page)).toBe("Changes successfully saved!");
    await shot(page, "preferences");
    const me = (await nora.client.get("/api/v1/accounts/verify_credentials")).body;
    expect([me.bot, me.locked, me.source.privacy, me.source.quote_policy, me.source.language]).toEqual([true, true, "private", "followers", "de"]);
  }, 60_000);

  test("notification policy", async () => {
    await page.getByRole("link", { name: "Notifications" }).click();
    await page.getByLabel("New accounts").selectOption("drop");
    await submit(page, "Save changes");
    expect(await notice(page)).toBe("Changes successfully saved!");
    await shot(page, "notifications");
    expect((await nora.client.get("/api/v2/notifications/policy")).body.for_new_accounts).toBe("drop");
  }, 60_000);

  test("authorised apps: one revoked", async () => {
    const app = (await server.ctx.services.applications.register({ name: "Tusky Test", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read", website: "https://tusky.example" })).app;
    const { accessToken } = await server.ctx.services.tokens.issue(app.id, nora.account.id, parseScopes("read"));
    await page.getByRole("link", { name: "Authorised apps" }).click();
    await shot(page, "applications");
    await submit(page, "Revoke Tusky Test");
    expect(await notice(page)).toBe("Application revoked.");
    expect(await server.ctx.services.tokens.authenticate(accessToken)).toBeNull();
  }, 60_000);

  test("sessions: another browser signed out; then the password changed", async () => {
    const other = await open();
    try {
      await signIn(other.page);
      await page.getByRole("link", { name: "Sign-in sessions" }).click();
      expect(await page.locator("tbody tr").count()).toBe(2);
      await shot(page, "sessions");
      // The other browser's row (the header's "Sign out" is this browser's own).
      await Promise.all([page.waitForEvent("load"), page.locator("tbody").getByRole("button", { name: /^Sign out Chrome/ }).click()]);
      expect(await notice(page)).toBe("Session successfully revoked.");
      await other.page.reload();
      expect(new URL(other.page.url()).pathname).toBe("/oauth/sign_in");
    } finally {
      await other.context.close();
    }
    await page.getByRole("link", { name: "Password" }).click();
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel("Confirm new password").fill(NEW_PASSWORD);
    await shot(page, "password");
    await submit(page, "Change password");
    expect(await notice(page)).toBe("Your password has been changed.");
    expect(await server.ctx.services.accounts.verifyLogin("nora", NEW_PASSWORD)).toBe(nora.account.id);
  }, 60_000);

  test("aliases, and a redirect set and cancelled", async () => {
    await page.getByRole("link", { name: "Account aliases" }).click();
    await page.getByLabel("Handle or address of the old account").fill(`@otto@${domain}`);
    await submit(page, "Add alias");
    expect(await notice(page)).toBe(`Alias ${server.base}/users/otto added.`);
    await shot(page, "aliases");
    await page.getByRole("link", { name: "Move to another account" }).click();
    await page.getByLabel("Handle or address of the new account").fill(`@otto@${domain}`);
    await page.getByLabel("Only redirect").check();
    await page.getByLabel("Current password").fill(NEW_PASSWORD);
    await submit(page, "Move");
    expect(await notice(page)).toBe(`Your profile now points to @otto@${domain}.`);
    await shot(page, "migration");
    await submit(page, "Cancel the redirect");
    expect(await notice(page)).toBe("The redirect is cancelled: your profile is yours again.");
  }, 60_000);

  test("a CSV imported, its progress shown; a list exported", async () => {
    await page.getByRole("link", { name: "Import" }).click();
    await page.getByLabel("Import type").selectOption("following");
    await page.getByLabel("CSV file").setInputFiles({ name: "following_accounts.csv", mimeType: "text/csv", buffer: Buffer.from(`Account address,Show boosts\notto@${domain},true\n`) });
    await submit(page, "Upload");
    expect(await notice(page)).toBe("Your file was uploaded: 1 entry will be imported.");
    await eventually(async () => {
      await page.reload();
      return (await page.locator("tbody tr td").nth(2).textContent()) === "Finished";
    }, "the import to show as finished");
    await shot(page, "import");

    await page.getByRole("link", { name: "Export" }).click();
    await shot(page, "export");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download following.csv" }).click()]);
    expect(download.suggestedFilename()).toBe("following_accounts.csv");
    expect(readFileSync((await download.path())!, "utf8")).toContain(`otto@${domain}`);
  }, 60_000);

  test("no page ran a script or broke the CSP", () => {
    expect(problems.join(" | ")).toBe("");
  });

  test("signing out", async () => {
    await submit(page, "Sign out");
    expect(new URL(page.url()).pathname).toBe("/");
    await page.goto(`${server.base}/settings/profile`);
    expect(new URL(page.url()).pathname).toBe("/oauth/sign_in");
  }, 60_000);
});

describe.skipIf(!available)("settings pages, dark and by keyboard", () => {
  test("dark colours, and the focus ring on a control reached with Tab", async () => {
    const { context, page, problems } = await open("dark");
    try {
      await signIn(page, NEW_PASSWORD);
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(background).toBe("rgb(23, 23, 28)");
      // Tab from the top: the skip link first, then on through the page.
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await page.keyboard.press("Tab");
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      expect(outline).toBe("solid");
      await page.screenshot({ path: join(SHOTS, "profile-dark.png"), fullPage: true });
      expect(problems.join(" | ")).toBe("");
    } finally {
      await context.close();
    }
  }, 60_000);
});
