/**
 * The public pages in a real browser (Debian's Chromium through playwright-core): a profile and
 * a status page open, read as the reader's colour scheme asks, break no CSP rule and run no
 * script; screenshots (light and dark) are kept in test-artifacts/. Without /usr/bin/chromium
 * the test skips and says why; `.ci/run` installs Chromium first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import type { Browser } from "playwright-core";
import { ARTIFACTS, CHROMIUM, chromiumAvailable, launchChromium } from "../support/chromium.ts";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const available = chromiumAvailable;
if (!available) console.log(`page screenshots skipped: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);

let server: TestServer;
let browser: Browser;
let ivy: TestUser;
let statusUrl: string;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startTestServer();
  ivy = await createUser(server, "ivy");
  await ivy.client.patch("/api/v1/accounts/update_credentials", { json: { display_name: "Ivy <b>Green</b>", note: "Gardener. Writes about moss.", fields_attributes: { "0": { name: "Site", value: "https://ivy.example" } } } });
  const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: "#4a7a3a" } }).png().toBuffer();
  const form = new FormData();
  form.append("file", new Blob([png], { type: "image/png" }), "moss.png");
  form.append("description", "A green field of moss");
  const media = (await ivy.client.post("/api/v1/media", { multipart: form })).body;
  const root = await postStatus(ivy, { status: "Moss grows slowly, but it grows.", visibility: "public", media_ids: [media.id] });
  await postStatus(ivy, { status: "Behind a warning", visibility: "public", spoiler_text: "spoilers", in_reply_to_id: root.id });
  statusUrl = root.url;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe.skipIf(!available)("public pages in Chromium", () => {
  for (const scheme of ["light", "dark"] as const) {
    test(`profile and status pages, ${scheme}`, async () => {
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 420, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(String(e)));
      try {
        for (const [name, url] of [["profile", `${server.base}/@ivy`], ["status", statusUrl]] as const) {
          const response = await page.goto(url);
          expect([name, response?.status()]).toEqual([name, 200]);
          // The stylesheet applied, in the reader's scheme.
          const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
          expect([name, background]).toEqual([name, scheme === "dark" ? "rgb(23, 23, 28)" : "rgb(255, 255, 255)"]);
          await page.screenshot({ path: join(ARTIFACTS, `page-${name}-${scheme}.png`), fullPage: true });
        }
        // The display name's markup is text; the image has its alt text; the warning is closed.
        await page.goto(`${server.base}/@ivy`);
        expect(await page.textContent("h1")).toBe("Ivy <b>Green</b>");
        await page.goto(statusUrl);
        expect(await page.getAttribute(".media img", "alt")).toBe("A green field of moss");
        expect(await page.locator("details.cw").getAttribute("open")).toBeNull();
        expect(problems.join(" | ")).toBe("");
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
