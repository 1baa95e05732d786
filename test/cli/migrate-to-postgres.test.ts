import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { join } from "node:path";
import sharp from "sharp";
import { createUser, postStatus, type TestUser } from "../support/fixtures.ts";
import { eventually, startFederatedPair } from "../support/federation.ts";
import { freshPgDatabase, postgresAvailable, type PgDatabase } from "../support/postgres.ts";
import type { TestServer } from "../support/server.ts";
import { withoutNotice } from "../support/cli.ts";
import { cli } from "../support/serve-process.ts";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import sqliteJournal from "../../migrations/meta/_journal.json";
import pgJournal from "../../migrations-pg/meta/_journal.json";
import { onPostgres } from "../support/test-database.ts";

/** The newest SQLite migration and how many PostgreSQL ones this Rookery has (the copy records all of them). */
const LATEST = sqliteJournal.entries.at(-1)!.tag;
const PG_MIGRATIONS = pgJournal.entries.length;

// `rookery migrate-to-postgres`: a Rookery seeded through its API and federation (accounts,
// a status with media, follows both ways with a remote account, a favourite, notifications,
// the signing keys and Fedify's store), stopped, then copied by the real command into a real
// PostgreSQL and compared table by table, row by row, from outside the command.

const ROOT = join(import.meta.dir, "..", "..");

async function run(dataDir: string, args: string[]) {
  const proc = Bun.spawn([process.execPath, "src/main.ts", "migrate-to-postgres", ...args], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_REQUESTS: "false" },
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr: withoutNotice(stderr) };
}

/** Every table's rows in one form on both sides: int8 as decimal text, booleans, text, null; ordered by the whole row. */
type Rows = Map<string, string[]>;

async function pgColumns(sql: SQL): Promise<Map<string, { name: string; type: string }[]>> {
  const rows = await sql`SELECT table_name AS t, column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`;
  const byTable = new Map<string, { name: string; type: string }[]>();
  for (const r of rows) byTable.set(r.t, [...(byTable.get(r.t) ?? []), { name: r.name, type: r.type }]);
  return byTable;
}

function sqliteRows(path: string, columns: Map<string, { name: string; type: string }[]>): Rows {
  const db = new Database(path, { readonly: true, safeIntegers: true });
  try {
    const out: Rows = new Map();
    for (const [table, cols] of columns) {
      const rows = db.query(`SELECT ${cols.map((c) => `"${c.name}"`).join(", ")} FROM "${table}"`).values() as unknown[][];
      out.set(
        table,
        rows
          .map((r) =>
            JSON.stringify(
              r.map((v, i) => {
                if (v === null) return null;
                if (cols[i]!.type === "boolean") return v === 1n;
                return typeof v === "bigint" ? v.toString() : v;
              }),
            ),
          )
          .sort(),
      );
    }
    return out;
  } finally {
    db.close();
  }
}

async function pgRows(sql: SQL, columns: Map<string, { name: string; type: string }[]>): Promise<Rows> {
  const out: Rows = new Map();
  for (const [table, cols] of columns) {
    const rows = (await sql.unsafe(`SELECT ${cols.map((c) => `"${c.name}"`).join(", ")} FROM "${table}"`).values()) as unknown[][];
    out.set(table, rows.map((r) => JSON.stringify(r)).sort());
  }
  return out;
}

async function counts(sql: SQL, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = Number((await sql.unsafe(`SELECT count(*) AS n FROM "${t}"`))[0].n);
  return out;
}

let a: TestServer;
let b: TestServer;
let alice: TestUser;
let target: PgDatabase;
let sql: SQL;
let copied: Awaited<ReturnType<typeof run>>;
/** The stopped server's database as the operator's steps have it: backed up (rookery backup) into a data directory of its own. */
let moved: string;

// Skipped in the PostgreSQL test mode: its source is the SQLite database of a stopped server.
describe.skipIf(!postgresAvailable || onPostgres)("rookery migrate-to-postgres", () => {
  beforeAll(async () => {
    [a, b] = await startFederatedPair();
    alice = await createUser(a, "alice");
    const carol = await createUser(a, "carol", { locked: true });
    const bob = await createUser(b, "bob");

    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#3366aa" } }).png().toBuffer();
    const form = new FormData();
    form.append("file", new Blob([png], { type: "image/png" }), "square.png");
    form.append("description", "a blue square");
    const media = await alice.client.post("/api/v1/media", { multipart: form });
    expect(media.status).toBe(200);
    const status = await postStatus(alice, { status: "hello PostgreSQL", media_ids: [media.body.id], sensitive: true });
    await postStatus(alice, { status: "a second, unlisted", visibility: "unlisted", spoiler_text: "cw" });

    // A follow request to a locked account, a favourite and its notification, all local.
    expect((await alice.client.post(`/api/v1/accounts/${carol.id}/follow`)).status).toBe(200);
    expect((await carol.client.post(`/api/v1/statuses/${status.id}/favourite`)).status).toBe(200);

    // Both ways with a remote account: actors fetched, signing keys made, Follow and Accept
    // through Fedify's queue, bob's post delivered to alice's server.
    const remoteBob = (await a.federation!.resolveActor(`${b.base}/users/bob`))!;
    const remoteAlice = (await b.federation!.resolveActor(`${a.base}/users/alice`))!;
    await alice.client.post(`/api/v1/accounts/${remoteBob.id}/follow`);
    await bob.client.post(`/api/v1/accounts/${remoteAlice.id}/follow`);
    await eventually(async () => {
      const [r] = (await alice.client.get("/api/v1/accounts/relationships", { query: { "id[]": String(remoteBob.id) } })).body;
      return r.following && r.followed_by;
    }, "alice and bob follow each other");
    const fromBob = await postStatus(bob, { status: "from the other server", visibility: "public" });
    await eventually(() => a.database.port.get("SELECT 1 FROM statuses WHERE uri = ?", [fromBob.uri]), "bob's post on alice's server");
    await eventually(async () => (await alice.client.get("/api/v1/notifications")).body.length >= 2, "alice's notifications");
    target = await freshPgDatabase({ empty: true });
    sql = new SQL(target.url, { max: 1 });
  }, 60_000);

  afterAll(async () => {
    await sql?.close();
    await target?.drop();
    await b?.close();
    await a?.close();
    if (moved) rmSync(moved, { recursive: true, force: true });
  });

  test("refuses while the server has the database open, and writes nothing", async () => {
    const res = await run(a.dataDir, [target.url]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^rookery: .*rookery\.sqlite3 is open in process \d+ .*stop the server first.*nothing was written\n$/);
    expect(await sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`).toEqual([{ n: 0 }]);
  });

  test("copies every table of the stopped server into an empty database, and says so table by table", async () => {
    await a.stop();
    // The operator's steps (docs/scaling.md): stop, back up, copy. The copy is made from the
    // backup's directory: a server stopped inside this test process still holds its file open
    // (bun:sqlite closes a connection whose statements are cached only once they are collected),
    // which a stopped server's process, gone, does not.
    moved = mkdtempSync(join(tmpdir(), "rookery-moved-"));
    cli(a.dataDir, ["backup", join(moved, "rookery.sqlite3")]);
    copied = await run(moved, [target.url]);
    expect(copied.stderr).toBe("");
    expect(copied.code).toBe(0);
    const lines = copied.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^Copying 74 tables \\(\\d+ rows\\) of .*rookery\\.sqlite3, at ${LATEST}, to postgres://rookery@127\\.0\\.0\\.1:\\d+/rookery_test_`));
    // Not a terminal: a plain line per table, then the check, then the summary.
    expect(lines.filter((l) => l.startsWith("copied ")).length).toBe(74);
    expect(lines).toContain("copied accounts: 3 rows");
    expect(lines).toContain("reading every table back to compare it");
    expect(lines).toContain(`PostgreSQL migrations applied: ${pgJournal.entries.map((e) => e.tag).join(", ")}`);
    expect(lines.at(-2)).toMatch(/^All 74 tables agree \(\d+ rows, the same count and the same rows on both sides\); 48 identities continue after their largest id\.$/);
    expect(lines.at(-1)).toContain("Start the server with DATABASE_URL set to this database to serve from it");
    expect(lines.find((l) => /^\s+accounts\s/.test(l))).toMatch(/^\s+accounts\s+3\s+3\s+same$/);
    expect(lines.filter((l) => /\s(same|DIFFERS)$/.test(l)).length).toBe(74);
    // Analyzed before the server starts on it: the planner has the tables' statistics.
    const analyzed = await sql`SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL AND relname IN ('statuses', 'home_feed', 'accounts') ORDER BY relname`;
    expect(analyzed.map((r: { relname: string }) => r.relname)).toEqual(["accounts", "home_feed", "statuses"]);
  });

  test("each table holds the same rows on both sides, column by column: ids, booleans, nulls and text as they were", async () => {
    const columns = await pgColumns(sql);
    expect(columns.size).toBe(74);
    const before = sqliteRows(join(moved, "rookery.sqlite3"), columns);
    const after = await pgRows(sql, columns);
    for (const table of columns.keys()) expect([table, after.get(table)]).toEqual([table, before.get(table)]);
    // What was seeded is there, so the comparison compared something.
    const n = (t: string) => before.get(t)!.length;
    for (const t of ["accounts", "statuses", "media_attachments", "follows", "follow_requests", "favourites", "notifications", "account_keys", "fedify_kv", "users", "applications", "oauth_access_tokens", "home_feed"]) {
      expect([t, n(t) > 0]).toEqual([t, true]);
    }
    const [carol] = await sql`SELECT locked, bot, avatar_file, domain FROM accounts WHERE username = 'carol'`;
    expect(carol).toEqual({ locked: true, bot: false, avatar_file: null, domain: null });
    const [bob] = await sql`SELECT domain, uri FROM accounts WHERE username = 'bob'`;
    expect(bob.domain).toBe(new URL(b.base).host);
    const [post] = await sql`SELECT s.sensitive, s.spoiler_text, m.description FROM statuses s JOIN media_attachments m ON m.status_id = s.id WHERE s.text = 'hello PostgreSQL'`;
    expect(post).toEqual({ sensitive: true, spoiler_text: "", description: "a blue square" });
  });

  test("the database is recorded as migrated to the baseline, as drizzle's migrator records it", async () => {
    const made = await freshPgDatabase();
    const reference = new SQL(made.url, { max: 1 });
    try {
      const record = (s: SQL) => s`SELECT hash, created_at::text AS at FROM drizzle.__drizzle_migrations ORDER BY id`;
      const ours = await record(sql);
      expect(ours.length).toBe(PG_MIGRATIONS);
      expect(ours).toEqual(await record(reference));
    } finally {
      await reference.close();
      await made.drop();
    }
  });

  test("running it again on the now full database refuses, names a table, and changes nothing", async () => {
    const tables = [...(await pgColumns(sql)).keys()];
    const before = await counts(sql, tables);
    const again = await run(moved, [target.url]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toMatch(/^rookery: postgres:\/\/rookery@127\.0\.0\.1:\d+\/rookery_test_\w+ is not empty: tables account_keys, accounts, .* have rows\. The copy goes into an empty database only .*nothing was written\n$/);
    expect(await counts(sql, tables)).toEqual(before);
  });

  test("every identity continues past the largest id copied: a row inserted without an id gets a larger one", async () => {
    const identities = await sql`SELECT table_name AS t FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES' ORDER BY table_name`;
    expect(identities.length).toBe(48);
    for (const { t } of identities) {
      const [row] = await sql.unsafe(`SELECT max(id)::text AS top, (SELECT last_value::text FROM pg_sequences WHERE sequencename = $1) AS seq FROM "${t}"`, [`${t}_id_seq`]);
      if (row.top !== null) expect([t, BigInt(row.seq ?? "0") >= BigInt(row.top)]).toEqual([t, true]);
    }
    const [{ top }] = await sql`SELECT max(id)::text AS top FROM accounts`;
    const [{ id }] = await sql`INSERT INTO accounts (username, created_at) VALUES ('probe', 1) RETURNING id::text AS id`;
    expect(BigInt(id)).toBeGreaterThan(BigInt(top));
    // The Fedify queue's rows are the ones made without an id in Rookery itself.
    const [queued] = await sql`INSERT INTO fedify_messages (message, run_at, created_at) VALUES ('{}', 1, 1) RETURNING id::text AS id`;
    const [{ others }] = await sql`SELECT count(*)::int AS others FROM fedify_messages WHERE id >= ${queued.id} AND message <> '{}'`;
    expect(others).toBe(0);
  });

  test("a favourite of an account that is not there, or a database behind this Rookery's migrations, is refused with nothing written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rookery-moved-"));
    const other = await freshPgDatabase();
    const pg = new SQL(other.url, { max: 1 });
    try {
      copyFileSync(join(moved, "rookery.sqlite3"), join(dir, "rookery.sqlite3"));
      const db = new Database(join(dir, "rookery.sqlite3"));
      const { statusId } = db.query<{ statusId: number }, []>("SELECT id AS statusId FROM statuses LIMIT 1").get()!;
      // A row SQLite's foreign keys would have refused, written with them off.
      db.run("PRAGMA foreign_keys = OFF");
      db.run("INSERT INTO favourites (id, account_id, status_id, created_at) VALUES (12345, 999, ?, 1)", [statusId]);
      db.close();
      const tables = [...(await pgColumns(pg)).keys()];
      const empty = Object.fromEntries(tables.map((t) => [t, 0]));
      const orphan = await run(dir, [other.url]);
      expect(orphan.code).toBe(1);
      expect(orphan.stderr).toMatch(/^rookery: the SQLite database has rows whose references are missing \(insert or update on table "favourites" violates foreign key constraint "favourites_account_id_accounts_id_fk": Key \(account_id\)=\(999\) is not present in table "accounts"\..*\); nothing was written to PostgreSQL\n$/);
      expect(orphan.stdout).not.toContain("All 74 tables agree");
      expect(await counts(pg, tables)).toEqual(empty);
      expect(await pg`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`).toEqual([{ n: PG_MIGRATIONS }]);

      const behind = new Database(join(dir, "rookery.sqlite3"));
      behind.run("DELETE FROM favourites WHERE id = 12345");
      behind.run("DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)");
      behind.close();
      const old = await run(dir, [other.url]);
      expect([old.code, old.stdout]).toEqual([1, ""]);
      expect(old.stderr).toMatch(/^rookery: \S+rookery\.sqlite3 is behind this Rookery's schema /);
      expect(old.stderr).toEndWith(`(its newest migration is older than ${LATEST}): back it up (rookery backup <file>), run "rookery migrate", then run migrate-to-postgres again\n`);
      expect(await counts(pg, tables)).toEqual(empty);
    } finally {
      await pg.close();
      await other.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a URL that is none, or a server that does not answer, fails in one line without a stack", async () => {
    for (const [url, message] of [
      ["not a url", "rookery: the argument is not a URL: give a PostgreSQL URL, postgres://user:password@host:5432/database\n"],
      ["mysql://root@127.0.0.1/rookery", "rookery: mysql://root@127.0.0.1/rookery is not a PostgreSQL URL: it starts postgres:// (postgres://user:password@host:5432/database)\n"],
      ["postgres://someone:secret@127.0.0.1:1/rookery", "rookery: cannot connect to postgres://someone:***@127.0.0.1:1/rookery: Failed to connect (ERR_POSTGRES_CONNECTION_REFUSED)\n"],
    ]) {
      const res = await run(moved, [url!]);
      expect([url, res.code, res.stderr, res.stdout]).toEqual([url, 1, message, ""]);
    }
    const none = await run(moved, []);
    expect([none.code, none.stderr]).toEqual([1, expect.stringContaining("migrate-to-postgres takes one argument, the PostgreSQL database's URL")]);
  });
});
