/**
 * Where a signed-in request's time goes, in-process (issue 30, "the floor"): the server started
 * here, seeded as reads.ts seeds it, then each variant run many times, all variants alternated
 * in rounds in one process, the median round per variant printed. Nothing crosses a socket, so
 * the figures are the server's own work, steadier on a shared machine than wrk's rates.
 *
 *   bun scripts/bench/floor.ts [rounds, default 15] [--n=<requests per round, default 400>] [--only=<label part>]
 *
 * Variants: a bare Elysia route (Bun's Request/Response and Elysia's handler alone), the health
 * route through the app, instance, the signed-in status and home through the edge (the path
 * Bun.serve's fetch takes) and through app.handle, then home's and the status's stages one by
 * one (token, service, composing the JSON, the Link header, the Response and its body).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { parseScopes } from "../../src/auth/scopes.ts";
import { createEdge } from "../../src/http/edge.ts";
import { requireUser } from "../../src/http/auth.ts";
import { getMeta } from "../../src/http/request-meta.ts";
import { linkHeader } from "../../src/http/pagination.ts";
import { jsonText, renderTimeline } from "../../src/http/render.ts";
import { statusesJson, statusJson } from "../../src/presenters/status-json.ts";
import { seedReads } from "./reads-seed.ts";

const args = process.argv.slice(2);
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 15);
const n = Number(args.find((a) => a.startsWith("--n="))?.slice(4) ?? 400);
// --only=<label part>: that variant alone (to profile it: bun --cpu-prof-md scripts/bench/floor.ts --only=...).
const only = args.find((a) => a.startsWith("--only="))?.slice(7);

const dataDir = mkdtempSync(join(tmpdir(), "rookery-floor-"));
const running = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: "0", LOG_REQUESTS: "false", RATE_LIMITS: "off" }), { derivePublicUrl: true });
try {
  const { ctx, app } = running;
  const { services } = ctx;
  const base = ctx.config.publicUrl;
  const make = async (username: string) => {
    const account = await services.accounts.create({ username, email: `${username}@floor.test`, password: "floor floor floor" }, { api: false });
    const { app: client } = await services.applications.register({ name: "floor", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write follow" });
    return { id: String(account.id), token: (await services.tokens.issue(client.id, account.id, parseScopes("read write follow"))).accessToken };
  };
  const state = await seedReads(base, await make("author"), await make("reader"), 200);
  const signedIn = { authorization: `Bearer ${state.reader.token}` };
  const edge = createEdge(ctx, app, running.streaming, null);
  const fakeServer = { requestIP: () => ({ address: "127.0.0.1", family: "IPv4", port: 1 }) } as never;
  const bare = new Elysia().get("/bare", () => new Response('{"a":1}', { headers: { "content-type": "application/json; charset=utf-8" } }));

  const homeUrl = `${base}/api/v1/timelines/home?limit=20`;
  const statusUrl = `${base}/api/v1/statuses/${state.statusId}`;
  const req = (url: string, headers: Record<string, string> = {}) => new Request(url, { headers });
  // The router alone reads the token's authentication the edge keeps with the request (edge.ts).
  const readerAuth = await services.tokens.authenticate(state.reader.token);
  const authed = (url: string) => {
    const r = req(url, signedIn);
    getMeta(r).auth = readerAuth;
    return r;
  };
  const readerId = Number(state.reader.id);
  const homePage = () => services.timelines.home(readerId, { limit: 20 });
  const page = await homePage();
  const row = await services.reader.visibleRow(Number(state.statusId), readerId);

  const variants: [string, () => unknown][] = [
    ["new Request (with a token header)", () => req(homeUrl, signedIn)],
    ["bare Elysia route + body", async () => (await bare.handle(req(`${base}/bare`))).arrayBuffer()],
    ["app: health + body", async () => (await app.handle(req(`${base}/api/v1/streaming/health`))).arrayBuffer()],
    ["edge: instance + body", async () => (await edge(req(`${base}/api/v1/instance`), fakeServer))!.arrayBuffer()],
    ["edge: verify_credentials + body", async () => (await edge(req(`${base}/api/v1/accounts/verify_credentials`, signedIn), fakeServer))!.arrayBuffer()],
    ["edge: status anonymous + body", async () => (await edge(req(statusUrl), fakeServer))!.arrayBuffer()],
    ["edge: status signed in + body", async () => (await edge(req(statusUrl, signedIn), fakeServer))!.arrayBuffer()],
    ["app: status signed in + body", async () => (await app.handle(authed(statusUrl))).arrayBuffer()],
    ["edge: home + body", async () => (await edge(req(homeUrl, signedIn), fakeServer))!.arrayBuffer()],
    ["app: home + body", async () => (await app.handle(authed(homeUrl))).arrayBuffer()],
    ["  requireUser (new Request each)", () => requireUser(ctx, authed(homeUrl), "read:statuses")],
    ["  timelines.home (page, rows, visibility)", homePage],
    ["  statusesJson (20, viewer's flags)", () => statusesJson(services, ctx.urls, page.rows, readerId)],
    ["  viewerFlags (20)", () => services.reader.viewerFlags(page.rows, readerId)],
    ["  linkHeader", () => linkHeader(base, req(homeUrl), { next: page.last, prev: page.first, keep: ["limit", "local"] })],
    ["  renderTimeline + body", async () => (await renderTimeline(ctx, req(homeUrl), page, readerId, true, ["limit", "local"])).arrayBuffer()],
    ["  jsonText(home) + body", async () => jsonText(await statusesJson(services, ctx.urls, page.rows, readerId)).arrayBuffer()],
    ["  status: visibleRow", () => services.reader.visibleRow(Number(state.statusId), readerId)],
    ["  status: statusJson", () => statusJson(services, ctx.urls, row, readerId)],
    ["  status: quotes.forStatus", () => services.quotes.forStatus(row.id)],
  ];
  if (only !== undefined) variants.splice(0, variants.length, ...variants.filter(([label]) => label.includes(only)));
  const samples = new Map<string, number[]>(variants.map(([label]) => [label, []]));
  for (const [, run] of variants) for (let i = 0; i < 50; i++) await run();
  for (let r = 0; r < rounds; r++) {
    for (const [label, run] of variants) {
      const started = performance.now();
      for (let i = 0; i < n; i++) await run();
      samples.get(label)!.push(((performance.now() - started) * 1000) / n);
    }
  }
  console.log(`in-process, ${rounds} rounds of ${n}, variants alternated; µs per call: median (min)`);
  for (const [label, s] of samples) {
    s.sort((a, b) => a - b);
    console.log(`${label.padEnd(44)} ${s[Math.floor(s.length / 2)]!.toFixed(1).padStart(7)} (${s[0]!.toFixed(1)})`);
  }
} finally {
  await running.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
