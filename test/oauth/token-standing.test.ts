import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/db/connection.ts";
import { createUser, type TestUser } from "../support/fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { createStaff, pendingUser } from "../support/staff.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * A token is kept with its user's standing (suspended, waiting for approval, deleted) so that a
 * signed-in read costs no statement for it: every change of that standing shows on the very
 * next request the token makes, whoever made the change (staff here, or another process).
 */
let server: TestServer;
let admin: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  admin = await createStaff(server, "adam", "admin");
});
afterAll(() => server?.close());

const INVALID = { error: "The access token is invalid" };
const DISABLED = { error: "Your login is currently disabled" };
const PENDING = { error: "Your login is currently pending approval" };

/** The user's token read twice, so that it is kept before the change. */
async function inUse(user: TestUser, expected = 200) {
  for (let i = 0; i < 2; i++) expect((await user.client.get("/api/v1/timelines/home")).status).toBe(expected);
}

describe("a kept token follows its user's standing at once", () => {
  test("staff suspend the account: its token is refused on the next request, reads and writes alike", async () => {
    const sam = await createUser(server, "sam");
    await inUse(sam);
    expect((await admin.client.post(`/api/v1/admin/accounts/${sam.id}/action`, { json: { type: "suspend" } })).status).toBe(200);
    const home = await sam.client.get("/api/v1/timelines/home");
    expect([home.status, home.body]).toEqual([401, INVALID]);
    const post = await sam.client.post("/api/v1/statuses", { json: { status: "still here?" } });
    expect([post.status, post.body]).toEqual([401, INVALID]);
    expect(await server.database.port.get("SELECT count(*) AS n FROM statuses WHERE account_id = ?", [sam.account.id])).toEqual({ n: 0 });
  });

  // Skipped in the PostgreSQL test mode: another process's writes are seen through SQLite's data_version; on PostgreSQL through the cache generations (test/server/pg-caches.test.ts).
  test.skipIf(onPostgres)("another process suspends the account (its own connection): the token in use is refused at once, 403 disabled", async () => {
    const tess = await createUser(server, "tess");
    await inUse(tess);
    const other = new Database(join(server.dataDir, DATABASE_FILE));
    try {
      other.run("UPDATE accounts SET suspended_at = 1 WHERE id = ?", [tess.account.id]);
    } finally {
      other.close();
    }
    const res = await tess.client.get("/api/v1/accounts/verify_credentials");
    expect([res.status, res.body]).toEqual([403, DISABLED]);
    const home = await tess.client.get("/api/v1/timelines/home");
    expect([home.status, home.body]).toEqual([403, DISABLED]);
  });

  test("staff approve a sign-up: its token, refused while it waited, is accepted on the next request", async () => {
    const una = await pendingUser(server, "una");
    await inUse(una, 403);
    expect((await una.client.get("/api/v1/timelines/home")).body).toEqual(PENDING);
    expect((await admin.client.post(`/api/v1/admin/accounts/${una.id}/approve`)).status).toBe(200);
    const home = await una.client.get("/api/v1/timelines/home");
    expect([home.status, home.body]).toEqual([200, []]);
  });

  test("staff reject a sign-up: its token, refused while it waited, is invalid on the next request", async () => {
    const vic = await pendingUser(server, "vic");
    await inUse(vic, 403);
    expect((await admin.client.post(`/api/v1/admin/accounts/${vic.id}/reject`)).status).toBe(200);
    const res = await vic.client.get("/api/v1/timelines/home");
    expect([res.status, res.body]).toEqual([401, INVALID]);
  });

  test("the app revokes the token: refused on the next request", async () => {
    const wes = await createUser(server, "wes");
    await inUse(wes);
    const revoked = await wes.client.post("/oauth/revoke", { token: null, form: { token: wes.token, client_id: wes.app.clientId, client_secret: wes.clientSecret } });
    expect(revoked.status).toBe(200);
    const res = await wes.client.get("/api/v1/timelines/home");
    expect([res.status, res.body]).toEqual([401, INVALID]);
  });

  // Skipped in the PostgreSQL test mode: another process's writes are seen through SQLite's data_version; on PostgreSQL through the cache generations (test/server/pg-caches.test.ts).
  test.skipIf(onPostgres)("staff unsuspend an account suspended by another process: the token it kept is accepted again at once", async () => {
    const xan = await createUser(server, "xan");
    await inUse(xan);
    const other = new Database(join(server.dataDir, DATABASE_FILE));
    try {
      other.run("UPDATE accounts SET suspended_at = 1 WHERE id = ?", [xan.account.id]);
    } finally {
      other.close();
    }
    expect((await xan.client.get("/api/v1/timelines/home")).body).toEqual(DISABLED);
    expect((await admin.client.post(`/api/v1/admin/accounts/${xan.id}/unsuspend`)).status).toBe(200);
    const home = await xan.client.get("/api/v1/timelines/home");
    expect([home.status, home.body]).toEqual([200, []]);
  });
});
