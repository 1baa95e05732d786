/**
 * The admin pages in a real browser (Debian's Chromium through playwright-core): an admin signs
 * in and does each action a person would, by label and button, with no script on any page:
 * accounts, reports, domain rules, relays, a custom emoji uploaded from a file, rules, an
 * announcement, the description, then reads federation health and the audit log; a moderator
 * is shown the 403 page outside the reports. Screenshots of each page, light and dark, are kept
 * in test-artifacts/admin/. Without /usr/bin/chromium the test skips and says why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ARTIFACTS, CHROMIUM, chromiumAvailable, launchChromium } from "../support/chromium.ts";
import { createUser, PASSWORD, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { auditLines, createStaff, pendingUser, remoteAccount } from "../support/staff.ts";

const available = chromiumAvailable;
if (!available) console.log(`admin pages test skipped: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);

const SHOTS = join(ARTIFACTS, "admin");

let server: TestServer;
let browser: Browser;
let troll: TestUser;
let vic: TestUser;
let reportId: string;
let rudeStatus: string;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  server = await startTestServer();
  await createStaff(server, "adam", "admin");
  await createStaff(server, "mona", "moderator");
  const alice = await createUser(server, "alice");
  troll = await createUser(server, "troll");
  vic = await createUser(server, "vic");
  await pendingUser(server, "penny", "I knit, and would like to post about it");
  await remoteAccount(server, "spammer", "spam.example");
  rudeStatus = (await postStatus(troll, { status: "a rude remark" })).id;
  reportId = (await alice.client.post("/api/v1/reports", { json: { account_id: troll.id, status_ids: [rudeStatus], comment: "rude to everyone" } })).body.id;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function open(scheme: "light" | "dark" = "light") {
  const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  return { context, page, problems };
}

async function signIn(page: Page, username: string, to: string) {
  await page.goto(`${server.base}${to}`);
  await page.getByLabel("Username or e-mail address").fill(username);
  await page.getByLabel("Password").fill(PASSWORD);
  await Promise.all([page.waitForURL(`${server.base}${to}`), page.getByRole("button", { name: "Sign in" }).click()]);
}

async function submit(page: Page, button: string) {
  await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: button, exact: true }).first().click()]);
}

const notice = (page: Page) => page.locator("#flash").textContent();
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const nav = (page: Page, name: string) => Promise.all([page.waitForEvent("load"), page.locator("nav.area").getByRole("link", { name, exact: true }).click()]);

describe.skipIf(!available)("admin pages in Chromium", () => {
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    ({ context, page, problems } = await open());
    await signIn(page, "adam", "/admin/accounts");
  }, 60_000);
  afterAll(() => context?.close());

  test("accounts: a sign-up approved; an account limited, suspended and let back; a password reset; a role given", async () => {
    await page.getByLabel("Moderation").selectOption("pending");
    await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Filter" }).click()]);
    await shot(page, "accounts-pending");
    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: "@penny" }).click()]);
    await shot(page, "account-pending");
    await submit(page, "Approve");
    expect(await notice(page)).toBe("@penny is approved: it can sign in now.");

    // Not the reported account: an action on it would resolve its report.
    await page.goto(`${server.base}/admin/accounts/${vic.account.id}`);
    await submit(page, "Limit");
    expect(await notice(page)).toBe("@vic is limited.");
    await submit(page, "Suspend");
    expect(await notice(page)).toBe("@vic is suspended.");
    await shot(page, "account-suspended");
    await submit(page, "Undo suspension");
    expect(await notice(page)).toBe("@vic is no longer suspended.");
    await submit(page, "Undo limit");
    expect(await notice(page)).toBe("@vic is no longer limited.");
  }, 60_000);

  test("a password reset and a role, on another account", async () => {
    const alice = (await server.database.port.get<{ id: number }>("SELECT id FROM accounts WHERE username = 'alice' AND domain IS NULL"))!;
    await page.goto(`${server.base}/admin/accounts/${alice.id}`);
    await submit(page, "Reset password");
    expect(await notice(page)).toMatch(/^@alice's new password is \S+ \(shown this once\); every sign-in of it has ended\.$/);
    await page.getByLabel("Role").selectOption("moderator");
    await submit(page, "Change role");
    expect(await notice(page)).toBe("@alice is now moderator.");
    await shot(page, "account");
  }, 60_000);

  test("a remote account limited", async () => {
    await nav(page, "Accounts");
    await page.getByLabel("Location").selectOption("remote");
    await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Filter" }).click()]);
    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: "@spammer@spam.example" }).click()]);
    await submit(page, "Limit");
    expect(await notice(page)).toBe("@spammer@spam.example is limited.");
  }, 60_000);

  test("a report: its status deleted, then resolved", async () => {
    await nav(page, "Reports");
    await shot(page, "reports");
    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: `#${reportId}` }).click()]);
    await shot(page, "report");
    await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: /^Delete the status of/ }).click()]);
    expect(await notice(page)).toBe("The status is deleted.");
    expect((await troll.client.get(`/api/v1/statuses/${rudeStatus}`)).status).toBe(404);
    await submit(page, "Resolve with no action");
    expect(await notice(page)).toBe(`Report #${reportId} is resolved.`);
  }, 60_000);

  test("domain blocks and allows", async () => {
    await nav(page, "Domain blocks");
    await page.getByLabel("Domain").fill("spam.example");
    await submit(page, "Block domain");
    expect(await notice(page)).toBe("spam.example is blocked.");
    await shot(page, "domain-blocks");
    await nav(page, "Domain allows");
    await page.getByLabel("Domain").fill("friends.example");
    await submit(page, "Allow domain");
    expect(await notice(page)).toBe("friends.example is allowed.");
  }, 60_000);

  test("a relay added and removed", async () => {
    await nav(page, "Relays");
    await page.getByLabel("Relay URL").fill("https://relay.example/inbox");
    await page.getByLabel("Kind").selectOption("mastodon");
    await submit(page, "Add relay");
    expect(await notice(page)).toBe("https://relay.example/inbox is added; it is pending until the relay accepts.");
    await shot(page, "relays");
    await submit(page, "Remove https://relay.example/inbox");
    expect(await notice(page)).toBe("https://relay.example/inbox is removed.");
  }, 60_000);

  test("a custom emoji uploaded from a file, shown, and removed", async () => {
    await nav(page, "Custom emojis");
    const png = await sharp({ create: { width: 64, height: 64, channels: 4, background: "#e0a000" } }).png().toBuffer();
    await page.getByLabel("Shortcode").fill("sun");
    await page.getByLabel("Image").setInputFiles({ name: "sun.png", mimeType: "image/png", buffer: png });
    await page.getByLabel("Category").fill("Weather");
    await submit(page, "Upload");
    expect(await notice(page)).toBe(":sun: is added.");
    expect(await page.getByRole("img", { name: ":sun:" }).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    await shot(page, "custom-emojis");
    await submit(page, "Remove :sun:");
    expect(await notice(page)).toBe(":sun: is removed.");
  }, 60_000);

  test("a rule, an announcement and the description", async () => {
    await nav(page, "Rules");
    await page.getByLabel("Rule", { exact: true }).fill("Be kind to each other");
    await submit(page, "Add rule");
    expect(await notice(page)).toBe("The rule is added.");
    await shot(page, "rules");
    await nav(page, "Announcements");
    await page.getByLabel("Announcement").fill("The server moves to a new machine on Sunday.");
    await submit(page, "Publish");
    expect(await notice(page)).toBe("The announcement is published.");
    await shot(page, "announcements");
    await nav(page, "Server settings");
    await page.getByLabel("Extended description").fill("A small server for knitters.");
    await submit(page, "Save changes");
    expect(await notice(page)).toBe("Changes successfully saved!");
    await page.getByLabel("Who can sign up").selectOption("approval");
    await submit(page, "Save the mode");
    expect(await notice(page)).toBe("Changes successfully saved!");
    expect(await server.ctx.services.registrations.mode()).toBe("approval");
    await shot(page, "settings");
    await nav(page, "Invites");
    await shot(page, "invites");
  }, 60_000);

  test("federation health and the audit log", async () => {
    await nav(page, "Federation health");
    expect(await page.getByRole("img", { name: /Deliveries and received activities/ }).count()).toBe(1);
    await page.locator("details.numbers summary").click();
    await shot(page, "federation");
    await nav(page, "Audit log");
    const rows = await page.locator("tbody tr").count();
    expect(rows).toBe(Math.min(50, (await auditLines(server)).length));
    await shot(page, "audit-log");
  }, 60_000);

  test("no page ran a script or broke the CSP", () => {
    expect(problems.join(" | ")).toBe("");
  });
});

describe.skipIf(!available)("admin pages, dark, and for a moderator", () => {
  test("dark colours on the health page", async () => {
    const { context, page, problems } = await open("dark");
    try {
      await signIn(page, "adam", "/admin/federation");
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(23, 23, 28)");
      await shot(page, "federation-dark");
      await page.goto(`${server.base}/admin/accounts`);
      await shot(page, "accounts-dark");
      expect(problems.join(" | ")).toBe("");
    } finally {
      await context.close();
    }
  }, 60_000);

  test("a moderator reads the reports and is refused the accounts", async () => {
    const { context, page } = await open();
    try {
      await signIn(page, "mona", "/admin/reports");
      expect(await page.locator("nav.area").getByRole("link", { name: "Accounts" }).count()).toBe(0);
      const refused = await page.goto(`${server.base}/admin/accounts`);
      expect(refused?.status()).toBe(403);
      expect(await page.locator("h1").textContent()).toBe("Forbidden");
      await shot(page, "moderator-refused");
    } finally {
      await context.close();
    }
  }, 60_000);
});
