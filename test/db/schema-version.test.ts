import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DATABASE_FILE, SchemaTooNewError } from "../../src/db/connection.ts";
import { createUser } from "../support/fixtures.ts";
import { freePort } from "../support/serve-process.ts";
import { startTestServer } from "../support/server.ts";
import { withoutNotice } from "../support/cli.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * A database a newer Rookery has migrated (an older executable started after an upgrade):
 * the server and every command that would use it refuse, naming the database's newest
 * migration and the executable's, and saying how to go back. Nothing in it changes.
 */
const ROOT = join(import.meta.dir, "..", "..");
const journal = JSON.parse(readFileSync(join(ROOT, "migrations/meta/_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] };
const known = journal.entries[journal.entries.length - 1]!;
// As drizzle records a migration: the SHA-256 of its SQL and the time it was generated.
const newer = { hash: createHash("sha256").update("ALTER TABLE accounts ADD COLUMN from_the_future text;").digest("hex"), createdAt: known.when + 86_400_000 };

let dataDir: string;
let dbPath: string;

function snapshot(): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    const schema = db.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
    const migrations = db.query("SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at").all();
    const accounts = db.query("SELECT id, username FROM accounts ORDER BY id").all();
    return JSON.stringify({ schema, migrations, accounts });
  } finally {
    db.close();
  }
}

function cli(args: string[]) {
  const made = Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false" } });
  return { code: made.exitCode, stdout: made.stdout.toString(), stderr: withoutNotice(made.stderr.toString()) };
}

function expectRefusal(message: string) {
  expect(message).toContain(`${dbPath} was migrated by a newer Rookery than this one`);
  expect(message).toContain(`The database's newest migration: ${newer.hash.slice(0, 12)}, made ${new Date(newer.createdAt).toISOString()} (${journal.entries.length + 1} applied)`);
  expect(message).toContain(`This executable's newest migration: ${known.tag}, made ${new Date(known.when).toISOString()} (${journal.entries.length} known)`);
  expect(message).toContain("go back to this one with the backup taken before the upgrade");
  expect(message).toContain("copy the backup to DATA_DIR/rookery.sqlite3");
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "rookery-schema-"));
  // Every test below skips in the PostgreSQL test mode (SQLite's file is what they are about).
  if (onPostgres) return;
  dbPath = join(dataDir, DATABASE_FILE);
  const server = await startTestServer({}, { dataDir });
  await createUser(server, "alice");
  await server.stop();
  const db = new Database(dbPath);
  db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)", [newer.hash, newer.createdAt]);
  db.close();
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Skipped in the PostgreSQL test mode: a SQLite database newer than the executable (PostgreSQL's is refused by test/server/postgres-serve.test.ts's migration check).
test.skipIf(onPostgres)("the server refuses to start on it, naming both migrations and the way back, and changes nothing", async () => {
  const before = snapshot();
  let refused: unknown = null;
  try {
    const server = await startTestServer({}, { dataDir });
    await server.stop();
  } catch (e) {
    refused = e;
  }
  expect(refused).toBeInstanceOf(SchemaTooNewError);
  expectRefusal((refused as Error).message);
  expect(snapshot()).toBe(before);
});

// Skipped in the PostgreSQL test mode: a SQLite database newer than the executable (PostgreSQL's is refused by test/server/postgres-serve.test.ts's migration check).
test.skipIf(onPostgres)("rookery serve exits non-zero with the message, without listening", async () => {
  const before = snapshot();
  const port = freePort();
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: String(port), LOG_REQUESTS: "false" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const code = await proc.exited;
  const stderr = await new Response(proc.stderr).text();
  expect(code).toBe(1);
  expect(stderr.startsWith("rookery: ")).toBe(true);
  expectRefusal(stderr);
  expect(stderr).not.toContain("    at "); // a message, not a stack trace
  expect(await new Response(proc.stdout).text()).not.toContain("Rookery is listening");
  expect(await fetch(`http://127.0.0.1:${port}/api/v1/streaming/health`).then(() => "up", () => "down")).toBe("down");
  expect(snapshot()).toBe(before);
});

// Skipped in the PostgreSQL test mode: a SQLite database newer than the executable (PostgreSQL's is refused by test/server/postgres-serve.test.ts's migration check).
test.skipIf(onPostgres)("commands that use the database refuse the same way; backup copies it as it is", () => {
  const before = snapshot();
  for (const args of [["migrate"], ["accounts", "list"], ["rules", "list"]]) {
    const res = cli(args);
    expect([args.join(" "), res.code]).toEqual([args.join(" "), 1]);
    expectRefusal(res.stderr);
  }
  expect(snapshot()).toBe(before);
  const target = join(dataDir, "copy.sqlite3");
  const backup = cli(["backup", target]);
  expect([backup.code, backup.stderr]).toEqual([0, ""]);
  expect(existsSync(target)).toBe(true);
  const copy = new Database(target, { readonly: true });
  expect(copy.query("SELECT hash FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1").get()).toEqual({ hash: newer.hash });
  copy.close();
  expect(snapshot()).toBe(before);
});

// Skipped in the PostgreSQL test mode: a SQLite database newer than the executable (PostgreSQL's is refused by test/server/postgres-serve.test.ts's migration check).
test.skipIf(onPostgres)("the database this executable knows (the newer migration gone, as after restoring the backup) starts again", async () => {
  const db = new Database(dbPath);
  db.run("DELETE FROM __drizzle_migrations WHERE hash = ?", [newer.hash]);
  db.close();
  const server = await startTestServer({}, { dataDir });
  try {
    const alice = await fetch(`${server.base}/api/v1/accounts/lookup?acct=alice`);
    expect(alice.status).toBe(200);
    expect(await alice.json()).toMatchObject({ username: "alice" });
  } finally {
    await server.stop();
  }
  expect(cli(["migrate"]).stdout).toContain("Applied 0 migration(s)");
});
