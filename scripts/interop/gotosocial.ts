#!/usr/bin/env bun
/**
 * Interop with a real peer: Rookery (this checkout, `bun src/main.ts serve` behind a TLS proxy)
 * and GoToSocial (a binary built elsewhere, GTS_BIN) on two loopback addresses, both on port 443
 * with one test certificate, driven through each side's Mastodon client API.
 *
 *   GTS_BIN=/work/peers/gotosocial npx bun scripts/interop/gotosocial.ts
 *
 * Prints the result table (Markdown: check | Rookery → GoToSocial | GoToSocial → Rookery) on
 * stdout, progress on stderr. Exits 0 when every check passes, 1 when one fails, 2 when it
 * could not run at all. Not part of `bun test`; `.ci/run` runs it when GTS_BIN is executable.
 * docs/interop.md says how to build GoToSocial here and what the checks saw.
 *
 * Moves (checks/moves.ts) use accounts of their own: carol and dan on both sides.
 *
 * Environment: GTS_BIN (required), GTS_WEB_DIR (GoToSocial's web/ folder: templates and
 * assets; default `web/` beside the binary), INTEROP_ROOKERY_ADDR / INTEROP_GTS_ADDR (default
 * 127.0.0.41 / 127.0.0.42, port 443 on each; loopback only), INTEROP_TIMEOUT_MS (per awaited
 * condition, default 30000), INTEROP_CACHE_REMOTE_MEDIA=false runs Rookery without copying
 * remote images (on by default here, off by default in Rookery), INTEROP_KEEP=1 keeps the
 * temporary folder (logs, databases) even on success.
 */
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeCertificate, startTlsPeer, TLS_PASSWORD, type TlsPeer } from "../../test/support/federation-tls.ts";
import { blocks } from "./checks/blocks.ts";
import { deliveries } from "./checks/deliveries.ts";
import { lookupsAndFollows, unfollows } from "./checks/follows.ts";
import { boostsAndFavourites, polls } from "./checks/interactions.ts";
import { media, video } from "./checks/media.ts";
import { moves } from "./checks/moves.ts";
import { deletes, edits, posts } from "./checks/posts.ts";
import type { Session } from "./checks/session.ts";
import { defaultWebDir, GTS_PASSWORD, startGoToSocial, type GtsPeer } from "./gotosocial-peer.ts";
import { Report } from "./report.ts";
import { ApiClient } from "./support.ts";

const GTS_BIN = process.env.GTS_BIN ?? "";
const ROOKERY_ADDR = process.env.INTEROP_ROOKERY_ADDR ?? "127.0.0.41";
const GTS_ADDR = process.env.INTEROP_GTS_ADDR ?? "127.0.0.42";
const TIMEOUT = Number(process.env.INTEROP_TIMEOUT_MS ?? 30_000);
const CACHE_REMOTE_MEDIA = process.env.INTEROP_CACHE_REMOTE_MEDIA !== "false";

async function main(): Promise<number> {
  try {
    accessSync(GTS_BIN, constants.X_OK);
  } catch {
    console.error("GTS_BIN must be the path of an executable GoToSocial v0.19.2 binary (docs/interop.md says how to build one)");
    return 2;
  }
  for (const addr of [ROOKERY_ADDR, GTS_ADDR]) {
    if (!/^127\.\d+\.\d+\.\d+$/.test(addr)) {
      console.error(`${addr}: the interop servers listen on loopback addresses (127.0.0.0/8) only`);
      return 2;
    }
  }
  const webDir = process.env.GTS_WEB_DIR ?? defaultWebDir(GTS_BIN);
  const runDir = mkdtempSync(join(tmpdir(), "rookery-interop-"));
  const cert = makeCertificate([ROOKERY_ADDR, GTS_ADDR]);
  const report = new Report();
  let rookery: TlsPeer | undefined;
  let gts: GtsPeer | undefined;
  try {
    console.error(`interop: Rookery at https://${ROOKERY_ADDR}, GoToSocial at https://${GTS_ADDR}, files in ${runDir}`);
    const started = await Promise.allSettled([
      startTlsPeer(ROOKERY_ADDR, cert, { LOG_REQUESTS: "true", CACHE_REMOTE_MEDIA: String(CACHE_REMOTE_MEDIA) }, { proxyPort: 443 }),
      startGoToSocial({ bin: GTS_BIN, webDir, host: GTS_ADDR, port: 443, cert: cert.cert, key: cert.key, dir: join(runDir, "gotosocial"), users: ["bob", "carol", "dan"], timeoutMs: TIMEOUT }),
    ]);
    if (started[0].status === "fulfilled") rookery = started[0].value;
    if (started[1].status === "fulfilled") gts = started[1].value;
    const failure = started.find((r) => r.status === "rejected");
    if (failure) throw failure.reason;
    const aliceUser = await rookery!.user("alice");
    const session: Session = {
      report,
      alice: new ApiClient(rookery!.direct, aliceUser.client.token),
      bob: gts!.clients.get("bob")!,
      aliceAcct: `alice@${rookery!.domain}`,
      bobAcct: `bob@${gts!.domain}`,
      cacheRemoteMedia: CACHE_REMOTE_MEDIA,
      timeout: TIMEOUT,
      bobHere: null,
      aliceThere: null,
      alicePost: null,
      alicePostThere: null,
      bobPost: null,
      bobPostHere: null,
    };
    await lookupsAndFollows(session);
    await posts(session);
    await boostsAndFavourites(session);
    await polls(session);
    await media(session);
    await video(session);
    await edits(session);
    await deletes(session);
    await unfollows(session);
    await blocks(session);
    // Its own accounts on both sides (carol moves in, dan moves out), after the rest.
    const [carolHere, danHere] = [await rookery!.user("carol"), await rookery!.user("dan")];
    await moves(session, {
      carolThere: gts!.clients.get("carol")!,
      carolHere: new ApiClient(rookery!.direct, carolHere.client.token),
      carolPassword: GTS_PASSWORD,
      danHere: new ApiClient(rookery!.direct, danHere.client.token),
      danThere: gts!.clients.get("dan")!,
      danPassword: TLS_PASSWORD,
      rookeryDomain: rookery!.domain,
      gtsDomain: gts!.domain,
    });
    await deliveries(session, gts!.logFile);
  } catch (error) {
    console.error(`interop: could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    report.fail("set-up", error instanceof Error ? error.message : String(error));
  } finally {
    if (rookery) writeFileSync(join(runDir, "rookery.log"), rookery.log());
    await Promise.all([gts?.stop(), rookery?.stop()]);
    cert.cleanup();
  }
  console.log(report.table());
  console.log(`\ninterop with GoToSocial: ${report.passed} passed, ${report.failed} failed`);
  const failed = report.failed > 0 || report.passed === 0;
  if (failed || process.env.INTEROP_KEEP === "1") console.log(`logs and databases kept in ${runDir}`);
  else rmSync(runDir, { recursive: true, force: true });
  return failed ? 1 : 0;
}

process.exit(await main());
