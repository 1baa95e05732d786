import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { CACHES_CHANNEL, PgCacheGenerations } from "../../src/infra/pg-generations.ts";
import { relayedBus } from "../../src/infra/pg-events.ts";
import { PgListener } from "../../src/infra/pg-listener.ts";
import type { StatusParts } from "../../src/models/views.ts";
import { forgetKind } from "../../src/services/consequences.ts";
import { applyRenderKeys, RenderCache, renderKey } from "../../src/services/statuses/render-cache.ts";
import { createUser } from "../support/fixtures.ts";
import { pgDatabaseWithClient, postgresAvailable } from "../support/postgres.ts";
import { startTestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

/**
 * Caches across processes on one PostgreSQL (src/infra/pg-generations.ts): what one process
 * makes stale is forgotten by the others (named entries, or whole), never bounced back, and
 * everything is forgotten when a listen connection comes back (what it missed is unknown).
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const database = () => pgDatabaseWithClient(cleanups, 1);

/** One process's generations, on its own pool and listen connection. */
async function generations(url: string, origin: string) {
  const sql = new SQL(url, { max: 1 });
  const listener = new PgListener(url);
  const gens = new PgCacheGenerations(sql, listener, origin);
  await gens.start();
  cleanups.push(async () => {
    await gens.published();
    await listener.close();
    await sql.close();
  });
  return gens;
}

const parts = (id: number) => ({ id }) as unknown as StatusParts;

describe.skipIf(!postgresAvailable)("caches across processes", () => {
  test("a render cache change in one process is forgotten in the other, entry by entry, and not bounced back", async () => {
    const { url } = await database();
    const a = await generations(url, "a");
    const b = await generations(url, "b");
    const cacheA = new RenderCache((change) => a.bump("render", renderKey(change)));
    const cacheB = new RenderCache((change) => b.bump("render", renderKey(change)));
    a.on("render", (keys) => applyRenderKeys(cacheA, keys));
    b.on("render", (keys) => applyRenderKeys(cacheB, keys));
    cacheB.set(1, 10, parts(1));
    cacheB.set(2, 10, parts(2));
    cacheB.set(3, 20, parts(3));
    cacheA.invalidateStatus(1);
    await eventually(() => cacheB.get(1) === undefined, "status 1 forgotten at b");
    expect(cacheB.get(2)).toEqual(parts(2));
    expect(b.generation("render")).toBe(1);
    // An account's change makes its statuses stale; another account's stay.
    cacheA.touchAccount(10);
    await eventually(() => cacheB.get(2) === undefined, "account 10's statuses forgotten at b");
    expect(cacheB.get(3)).toEqual(parts(3));
    // b applied them through its cache, which tells of its invalidations: nothing went back to a.
    b.bump("filters");
    await eventually(() => a.generation("filters") === 1, "b's marker at a");
    expect(a.generation("render")).toBe(0);
    // Everything at once: one clear.
    cacheA.clear();
    await eventually(() => cacheB.get(3) === undefined, "everything forgotten at b");
    expect(b.generation("render")).toBe(3);
    expect(b.generation("database")).toBe(3);
  });

  test("a listen connection that comes back forgets every kind whole", async () => {
    const { url, sql } = await database();
    const b = await generations(url, "b");
    const cache = new RenderCache();
    b.on("render", (keys) => applyRenderKeys(cache, keys));
    cache.set(1, 10, parts(1));
    const [{ n }] = await sql`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
    expect(Number(n)).toBe(1);
    await eventually(() => cache.get(1) === undefined, "the cache forgotten on reconnection");
    expect(b.generation("tokens")).toBe(1);
    expect(b.generation("filters")).toBe(1);
  });

  test("many keys at once past the notification's size become everything", async () => {
    const { url, sql } = await database();
    const a = await generations(url, "a");
    const b = await generations(url, "b");
    const heard: string[] = [];
    const listen = await sql.listen(CACHES_CHANNEL, (p) => heard.push(p));
    cleanups.push(() => listen.unlisten());
    const seen: string[][] = [];
    b.on("render", (keys) => seen.push(keys));
    for (let id = 1_000_000_000_000; id < 1_000_000_000_000 + 1000; id++) a.bump("render", `s${id}`);
    a.bump("render", "s7");
    await a.published();
    await eventually(() => seen.length === 1, "one notification");
    expect(seen[0]).toEqual(["*"]);
    await eventually(() => heard.length === 1, "the notification on the test's own connection");
    expect(heard).toEqual(["a render *"]);
  });

  test("a token revoked by another process is refused here at once, though this process kept it", async () => {
    const { url } = await database();
    const server = await startTestServer();
    cleanups.push(() => server.stop());
    const here = await generations(url, "here");
    here.on("tokens", (keys) => forgetKind(server.ctx.services, "tokens", keys));
    const other = await generations(url, "other");
    const bus = relayedBus();
    other.subscribe(bus);
    const sam = await createUser(server, "sam");
    expect((await sam.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    // The other process revokes it in the shared database: this process's connection did not write it, nor was it told.
    const port = server.database.port;
    await port.run("UPDATE oauth_access_tokens SET revoked_at = 1 WHERE account_id = ?", [sam.account.id]);
    const kept = await sam.client.get("/api/v1/accounts/verify_credentials");
    expect(kept.status).toBe(200);
    const token = (await port.get<{ id: number }>("SELECT id FROM oauth_access_tokens WHERE account_id = ?", [sam.account.id]))!;
    bus.emit({ type: "token.revoked", tokenId: token.id, accountId: sam.account.id });
    await eventually(() => here.generation("tokens") === 1, "the bump here");
    const refused = await sam.client.get("/api/v1/accounts/verify_credentials");
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: "The access token is invalid" });
  });

  test("a domain blocked by another process is refused here once told: the rules kept in memory are read again", async () => {
    const { url } = await database();
    const server = await startTestServer();
    cleanups.push(() => server.stop());
    const here = await generations(url, "here");
    here.on("federation-domains", (keys) => forgetKind(server.ctx.services, "federation-domains", keys));
    const other = await generations(url, "other");
    const bus = relayedBus();
    other.subscribe(bus);
    const domains = server.ctx.services.federationDomains;
    // The other process's write, in the shared database: this process keeps its copy until told.
    await server.database.port.run("INSERT INTO domain_blocks (id, domain, created_at) VALUES (?, ?, ?)", [server.ctx.ids.next(), "spam.example", 1]);
    expect(domains.refuses("https://sub.spam.example/inbox")).toBe(false);
    bus.emit({ type: "federation.rules_changed" });
    await eventually(() => domains.refuses("https://sub.spam.example/inbox"), "the block read again here");
    expect(here.generation("federation-domains")).toBe(1);
    expect(domains.refuses("https://notspam.example/inbox")).toBe(false);
  });
});
