import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseScopes } from "../../src/auth/scopes.ts";
import { loadConfig } from "../../src/config.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { Client } from "../support/http.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";
import { SseClient } from "../support/streams.ts";

/**
 * Two Rookery servers linked through PostgreSQL (src/cross-process.ts): a client streaming from
 * one sees what is posted through the other. The server does not run on PostgreSQL yet, so the
 * two share one SQLite file (ID_WORKER keeps their ids apart) and PostgreSQL carries only the
 * events and the cache invalidations, which is the part under test.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function twoServers() {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-linked-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = async (worker: string): Promise<RunningServer> => {
    const config = loadConfig({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", PUBLIC_URL: "https://rookery.test", LOG_REQUESTS: "false", RATE_LIMITS: "off", FEDERATION: "off", ID_WORKER: worker });
    const server = await startServer(config, { linkProcesses: db.url });
    cleanups.push(() => server.stop());
    return server;
  };
  const a = await start("0/2");
  const b = await start("1/2");
  return { a, b };
}

describe.skipIf(!postgresAvailable)("servers linked through PostgreSQL", () => {
  test("a client streaming from one server sees a status posted through the other within a second, once; and its deletion", async () => {
    const { a, b } = await twoServers();
    const { services } = a.ctx;
    const account = await services.accounts.create({ username: "sam", email: "sam@example.test", password: "correct horse battery staple" }, { api: false });
    const { app } = await services.applications.register({ name: "Test client", redirectUris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" });
    const { accessToken } = await services.tokens.issue(app.id, account.id, parseScopes("read write"));
    const onB = await SseClient.open(`${b.url}/api/v1/streaming/user`, { token: accessToken });
    const onA = await SseClient.open(`${a.url}/api/v1/streaming/user`, { token: accessToken });
    cleanups.push(() => (onA.close(), onB.close()));

    const posted = Date.now();
    const res = await new Client(a.url, accessToken).post("/api/v1/statuses", { json: { status: "through a" } });
    expect(res.status).toBe(200);
    const update = await onB.waitFor((e) => e.event === "update");
    const took = Date.now() - posted;
    expect(JSON.parse(update.data!)).toMatchObject({ id: res.body.id, content: "<p>through a</p>" });
    expect(took).toBeLessThan(1000);

    // Posted through b: each stream has it once, b's from its own bus, a's from the relay.
    const second = await new Client(b.url, accessToken).post("/api/v1/statuses", { json: { status: "through b" } });
    expect(second.status).toBe(200);
    await onA.waitFor((e) => e.event === "update" && JSON.parse(e.data!).id === second.body.id);
    await onB.waitFor((e) => e.event === "update" && JSON.parse(e.data!).id === second.body.id);

    const gone = await new Client(a.url, accessToken).delete(`/api/v1/statuses/${res.body.id}`);
    expect(gone.status).toBe(200);
    await onB.waitFor((e) => e.event === "delete" && e.data === res.body.id);
    await onA.waitFor((e) => e.event === "delete" && e.data === res.body.id);
    const updates = (c: SseClient) => c.events.filter((e) => e.event === "update").map((e) => JSON.parse(e.data!).id);
    expect(updates(onA)).toEqual([res.body.id, second.body.id]);
    expect(updates(onB)).toEqual([res.body.id, second.body.id]);
    expect(onB.events.filter((e) => e.event === "delete").length).toBe(1);
  });

  test("a server whose PostgreSQL cannot be reached does not start, and leaves its data directory free for the next", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "rookery-linked-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = loadConfig({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", PUBLIC_URL: "https://rookery.test", LOG_REQUESTS: "false", FEDERATION: "off" });
    // Port 1 on loopback: refused at once.
    await expect(startServer(config, { linkProcesses: "postgres://rookery@127.0.0.1:1/rookery" })).rejects.toThrow();
    const server = await startServer(config);
    cleanups.push(() => server.stop());
    expect((await fetch(`${server.url}/api/v1/instance`)).status).toBe(200);
  });
});
