import { SQL } from "bun";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../support/http.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { freshPgDatabase, postgresAvailable, type PgDatabase } from "../support/postgres.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// DATABASE_URL wired into the server (issue 31): it serves from PostgreSQL, its rows there and
// nothing in SQLite.

const ROOT = join(import.meta.dir, "..", "..");
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function database(): Promise<PgDatabase> {
  const db = await freshPgDatabase();
  cleanups.push(() => db.drop());
  return db;
}

async function tablesOf(url: string): Promise<number> {
  const sql = new SQL(url, { max: 1 });
  try {
    const [row] = await sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`;
    return row.n;
  } finally {
    await sql.close();
  }
}

describe.skipIf(!postgresAvailable)("DATABASE_URL=postgres://", () => {
  test("a DATABASE_URL that is not PostgreSQL's is refused by name, without repeating it", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "rookery-pg-bad-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    for (const url of ["mysql://user:secret@host/db", "postgres://user:secret@host", "not a url"]) {
      const run = Bun.spawnSync([process.execPath, "src/main.ts", "serve"], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, PORT: "0", DATABASE_URL: url } });
      expect(run.exitCode).toBe(1);
      const err = run.stderr.toString();
      expect(err).toBe("rookery: DATABASE_URL must be a PostgreSQL URL, postgres://user:password@host:5432/database (unset: SQLite in DATA_DIR)\n");
      expect(err).not.toContain("secret");
    }
    expect(readdirSync(dataDir)).toEqual([]);
  });

  test("it starts on an empty database, migrated, with no SQLite file, and an app registered through the API is a row of PostgreSQL", async () => {
    const db = await freshPgDatabase({ empty: true });
    cleanups.push(() => db.drop());
    const server = await startTestServer({ DATABASE_URL: db.url, RATE_LIMITS: "on" });
    cleanups.push(() => server.close());
    expect(server.database.postgres?.url).toBe(db.url);
    expect(server.database.migrationsApplied).toBeGreaterThan(0);
    expect(await tablesOf(db.url)).toBeGreaterThan(70);
    // Nothing of the instance in SQLite: no SQLite is opened.
    expect(readdirSync(server.dataDir)).not.toContain("rookery.sqlite3");

    const app = await new Client(server.base).post("/api/v1/apps", { json: { client_name: "On PostgreSQL", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
    expect(app.status).toBe(200);
    const sql = new SQL(db.url, { max: 1 });
    cleanups.push(() => sql.close());
    const [row] = await sql`SELECT id::text AS id, name FROM applications WHERE client_id = ${app.body.client_id}`;
    expect(row).toEqual({ id: app.body.id, name: "On PostgreSQL" });
    // Counted in PostgreSQL, where every process counts: the app's request was the address's first.
    expect(app.headers.get("x-ratelimit-remaining")).toBe("299");
    const counters = await sql`SELECT bucket, count::int AS count FROM rate_limit_counters ORDER BY bucket`;
    expect(counters.map((c: { bucket: string; count: number }) => [c.bucket, c.count])).toContainEqual(["ip access", 1]);

    // Started again on the same database: nothing to migrate, the app still there.
    const again = await server.restart();
    cleanups.push(() => again.close());
    expect(again.database.migrationsApplied).toBe(0);
    expect((await new Client(again.base).get("/api/v1/apps/verify_credentials", { token: null })).status).toBe(401);
  });

  test("rookery serve logs its database without the password, and stops cleanly", async () => {
    const db = await database();
    const dataDir = mkdtempSync(join(tmpdir(), "rookery-pg-serve-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // The throwaway cluster trusts every connection: the password is only there to be hidden.
    const url = db.url.replace("postgres://rookery@", "postgres://rookery:SECRET-PASSWORD@");
    const server = await startServeProcess([process.execPath, "src/main.ts", "serve"], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_REQUESTS: "false", DATABASE_URL: url } as Record<string, string>,
    });
    cleanups.push(() => void server.proc.kill("SIGKILL"));
    expect((await fetch(`${server.listen}/api/v1/instance`)).status).toBe(200);
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    await server.ended;
    const out = server.output();
    expect(out).toContain(`database=${db.url.replace("postgres://rookery@", "postgres://rookery:***@")}`);
    expect(out).toMatch(/migrations_applied=0\b/);
    expect(out).toContain("msg=stopped");
    expect(out).not.toContain("SECRET");
    expect(readdirSync(dataDir)).not.toContain("rookery.sqlite3");
  });

  test("an account signs up, posts a status and reads it back through the API, the rows in PostgreSQL", async () => {
    const db = await freshPgDatabase({ empty: true });
    cleanups.push(() => db.drop());
    const server: TestServer = await startTestServer({ DATABASE_URL: db.url, REGISTRATIONS: "open" });
    cleanups.push(() => server.close());
    const http = new Client(server.base);
    const app = await http.post("/api/v1/apps", { json: { client_name: "pg", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
    const appToken = await http.post("/oauth/token", { json: { grant_type: "client_credentials", client_id: app.body.client_id, client_secret: app.body.client_secret, scope: "read write" } });
    expect(appToken.status).toBe(200);
    const signUp = await http.post("/api/v1/accounts", {
      token: appToken.body.access_token,
      json: { username: "pgalice", email: "pgalice@example.test", password: "correct horse battery staple", agreement: true, locale: "en" },
    });
    expect(signUp.status).toBe(200);
    const alice = http.withToken(signUp.body.access_token);
    const posted = await alice.post("/api/v1/statuses", { json: { status: "Hello from PostgreSQL" } });
    expect(posted.status).toBe(200);
    const read = await http.get(`/api/v1/statuses/${posted.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.content).toBe("<p>Hello from PostgreSQL</p>");
    expect(read.body.account.username).toBe("pgalice");

    const sql = new SQL(db.url, { max: 1 });
    cleanups.push(() => sql.close());
    const [account] = await sql`SELECT id::text AS id FROM accounts WHERE username = 'pgalice'`;
    expect(account).toBeDefined();
    const [status] = await sql`SELECT id::text AS id, text, account_id::text AS account_id FROM statuses`;
    expect(status).toEqual({ id: posted.body.id, text: "Hello from PostgreSQL", account_id: account.id });
  });
});
