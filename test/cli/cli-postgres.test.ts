import { SQL } from "bun";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliIn } from "../support/cli.ts";
import { freshPgDatabase, postgresAvailable, type PgDatabase } from "../support/postgres.ts";
import { startTestServer } from "../support/server.ts";
import { eventually } from "../support/wait.ts";

// The commands with DATABASE_URL=postgres:// work on the server's database there (src/cli/database.ts),
// those that build every service as those whose work is on the port alone (relays list,
// federation status). Nothing is written to SQLite in DATA_DIR; SQLite's own commands (backup)
// say so in one line.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(options: { empty?: boolean } = {}) {
  const db: PgDatabase = await freshPgDatabase(options);
  cleanups.push(() => db.drop());
  const sql = new SQL(db.url, { max: 1 });
  cleanups.push(() => sql.close());
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-pg-cli-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const run = cliIn(dataDir);
  // The test mode's setting is given by each test that needs it, never inherited.
  const cli = (args: string[], env: Record<string, string> = {}, stdin?: string) => run(args, { DATABASE_URL: db.url, ...env }, stdin);
  return { db, sql, dataDir, cli };
}

const count = async (sql: SQL, table: string): Promise<number> => (await sql.unsafe(`SELECT count(*)::int AS n FROM ${table}`))[0].n;

describe.skipIf(!postgresAvailable)("the commands on PostgreSQL", () => {
  test("accounts create and list work on DATABASE_URL's database, none of it in DATA_DIR", async () => {
    const { sql, dataDir, cli } = await setUp();
    const made = cli(["accounts", "create", "alice", "--email", "alice@example.com", "--password", "correct horse battery"]);
    expect([made.code, made.stderr]).toEqual([0, ""]);
    const id = made.stdout.trim();
    expect(id).toMatch(/^\d+$/);
    const [row] = await sql`SELECT a.id::text AS id, a.username, u.email FROM accounts a JOIN users u ON u.account_id = a.id`;
    expect(row).toEqual({ id, username: "alice", email: "alice@example.com" });
    const listed = cli(["accounts", "list"]);
    expect([listed.code, listed.stdout, listed.stderr]).toEqual([0, `${id}\talice\talice@example.com\n`, ""]);
    // The same name again is refused by the database's data, not SQLite's.
    const again = cli(["accounts", "create", "alice", "--email", "other@example.com", "--password", "correct horse battery"]);
    expect([again.code, again.stdout]).toEqual([1, ""]);
    expect(again.stderr).toContain("taken");
    expect(await count(sql, "accounts")).toBe(1);
    expect(readdirSync(dataDir).filter((f) => f.startsWith("rookery.sqlite3"))).toEqual([]);
  });

  test("a staff command changes the account in PostgreSQL", async () => {
    const { sql, cli } = await setUp();
    expect(cli(["accounts", "create", "bob", "--email", "bob@example.com", "--password", "correct horse battery"]).code).toBe(0);
    const role = cli(["accounts", "role", "bob", "moderator"]);
    expect([role.code, role.stdout, role.stderr]).toEqual([0, "bob is now moderator (was user)\n", ""]);
    const suspended = cli(["accounts", "suspend", "bob"]);
    expect([suspended.code, suspended.stderr]).toEqual([0, ""]);
    expect(suspended.stdout).toStartWith("Suspended bob");
    const [row] = await sql`SELECT u.role, a.suspended_at IS NOT NULL AS suspended FROM accounts a JOIN users u ON u.account_id = a.id WHERE a.username = 'bob'`;
    expect(row).toEqual({ role: "moderator", suspended: true });
    // An unknown account: one line, and nothing changed.
    const nobody = cli(["accounts", "role", "nobody", "admin"]);
    expect([nobody.code, nobody.stdout, nobody.stderr]).toEqual([1, "", "rookery: no local account named nobody\n"]);
    expect((await sql`SELECT role FROM users`).map((r: { role: string }) => r.role)).toEqual(["moderator"]);
  });

  test("relays list and federation status read DATABASE_URL's database through the port, as the commands that build the services do", async () => {
    const { sql, cli } = await setUp();
    const empty = cli(["relays", "list"]);
    expect([empty.code, empty.stdout, empty.stderr]).toEqual([0, "No relays.\n", ""]);
    const at = Date.parse("2026-11-01T10:00:00Z");
    await sql`INSERT INTO relays (url, kind, inbox_url, state, follow_activity_id, created_at, state_changed_at, received_count)
      VALUES ('https://relay.example/inbox', 'mastodon', 'https://relay.example/inbox', 'accepted', 'https://here.example/follow/1', ${at}, ${at}, 7)`;
    const listed = cli(["relays", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      ["Relays:", "url\tkind\tstate\tsince\tstatuses brought\tlast activity\tdeliveries", "https://relay.example/inbox\tmastodon\taccepted\t2026-11-01T10:00:00.000Z\t7\t-\tok", ""].join("\n"),
    );
    const status = cli(["federation", "status"]);
    expect([status.code, status.stderr]).toEqual([0, ""]);
    expect(status.stdout).toContain("No failing domains in the last 7 days.");
    expect(status.stdout).toContain("https://relay.example/inbox\tmastodon\taccepted");
  });

  test("every command names the database it works on (without its password) beside the data directory", async () => {
    const { db, dataDir } = await setUp();
    const withPassword = db.url.replace("rookery@", "rookery:s3cret@");
    const run = Bun.spawnSync([process.execPath, "src/main.ts", "relays", "list"], {
      cwd: join(import.meta.dir, "..", ".."),
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: withPassword, LOG_REQUESTS: "false" },
    });
    expect(run.exitCode).toBe(0);
    const stderr = run.stderr.toString();
    expect(stderr).toStartWith(`rookery: data directory ${dataDir} (from DATA_DIR), database `);
    expect(stderr).toContain("(from DATABASE_URL)");
    expect(stderr).toContain(":***@");
    expect(stderr).not.toContain("s3cret");
  });

  test("commands that build the services write DATABASE_URL's database, and make no SQLite in DATA_DIR", async () => {
    const { sql, dataDir, cli } = await setUp();
    for (const args of [["rules", "add", "Be kind"], ["accounts", "create", "carol", "--email", "c@example.com", "--password", "correct horse battery"], ["accounts", "role", "carol", "admin"]]) {
      const run = cli(args);
      expect([run.code, run.stderr]).toEqual([0, ""]);
    }
    expect(await count(sql, "instance_rules")).toBe(1);
    expect(await count(sql, "accounts WHERE username = 'carol'")).toBe(1);
    expect(await count(sql, "users WHERE role = 'admin'")).toBe(1);
    // The instance's key files and media stay in DATA_DIR (docs/scaling.md); no SQLite there.
    expect(readdirSync(dataDir).filter((name) => name.startsWith("rookery.sqlite3"))).toEqual([]);
  });

  test("a database without Rookery's schema is refused by every command but migrate, which makes it", async () => {
    const { sql, dataDir, cli } = await setUp({ empty: true });
    for (const [args, env] of [
      [["relays", "list"], {}],
      [["accounts", "list"], {}],
    ] as const) {
      const run = cli([...args], env);
      expect([run.code, run.stdout]).toEqual([1, ""]);
      expect(run.stderr).toStartWith("rookery: no Rookery database at postgres://");
      expect(run.stderr.split("\n").length).toBe(2);
    }
    expect(await count(sql, "information_schema.tables WHERE table_schema = 'public'")).toBe(0);
    const migrated = cli(["migrate"]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/^Applied [1-9]\d* migration\(s\) to postgres:\/\//);
    expect(cli(["relays", "list"]).stdout).toBe("No relays.\n");
    expect(cli(["migrate"]).stdout).toStartWith("Applied 0 migration(s)");
    expect(readdirSync(dataDir)).toEqual([]);
  });

  test("backup is SQLite's: with DATABASE_URL it says so in one line and writes no file", async () => {
    const { dataDir, cli } = await setUp();
    const file = join(dataDir, "copy.sqlite3");
    const run = cli(["backup", file]);
    expect([run.code, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toStartWith("rookery: backup copies SQLite's database in DATA_DIR; back PostgreSQL up with its own tools (pg_dump) (DATABASE_URL is PostgreSQL, postgres://");
    expect(run.stderr.split("\n").length).toBe(2);
    expect(existsSync(file)).toBe(false);
  });

  test("a domain blocked by the command line is refused at once by a server running on the same database", async () => {
    const { db, cli } = await setUp();
    const server = await startTestServer({ DATABASE_URL: db.url });
    cleanups.push(() => server.close());
    const rules = server.ctx.services.federationDomains;
    expect(rules.refuses("https://spam.example/users/x")).toBe(false);
    const run = cli(["domains", "block", "spam.example"]);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    // The command told the running processes (a NOTIFY of every cache kind): the server read the rules again.
    await eventually(() => rules.refuses("https://spam.example/users/x"), "the server to refuse the domain the command blocked");
  });
});
