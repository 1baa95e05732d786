import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium, driven by playwright-core (no browser download); `npm test` installs it (scripts/test-services.sh). */
export const CHROMIUM = "/usr/bin/chromium";
/**
 * Browser tests skip where there is no Chromium (a developer's machine), but not under
 * `.ci/run`, which sets ROOKERY_REQUIRE_CHROMIUM: there a missing browser
 * fails the browser tests instead of hiding them.
 */
export const chromiumAvailable = existsSync(CHROMIUM) || process.env.ROOKERY_REQUIRE_CHROMIUM === "1";
/** Where browser tests keep their screenshots (ignored by git). */
export const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts");

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // What this machine needs: no sandbox as root, and no background calls to a closed network.
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
