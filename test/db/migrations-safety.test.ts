import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/db/connection.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer } from "../support/server.ts";
import { onPostgres } from "../support/test-database.ts";

/**
 * Migrations that clean what an older Rookery stored before it refused it: URLs of other schemes
 * than http(s) (0026), keys cached before their owners had to confirm them (0027). Each test
 * writes the rows an older Rookery could have left, runs the migration's SQL on them, and
 * reads what a server started on the database shows.
 */
const ROOT = join(import.meta.dir, "..", "..");
const journal = JSON.parse(readFileSync(join(ROOT, "migrations/meta/_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] };
const migration = journal.entries.find((e) => e.tag === "0026_only_http_urls_kept")!;
const keysMigration = journal.entries.find((e) => e.tag === "0027_unconfirmed_keys_forgotten")!;

/**
 * Runs a migration's SQL on a database, as drizzle does (statement by statement): the rows
 * an older Rookery left are written first, then the migration that upgrading runs on them.
 * (Removing its row from drizzle's table would make drizzle run every later migration again,
 * and a later CREATE TABLE cannot run twice.)
 */
function runMigration(db: Database, tag: string) {
  const sql = readFileSync(join(ROOT, "migrations", `${tag}.sql`), "utf8");
  for (const statement of sql.split("--> statement-breakpoint")) if (statement.trim() !== "") db.run(statement);
}

// Skipped in the PostgreSQL test mode: SQLite's own migrations, which clean what older Rookery releases stored (a PostgreSQL database starts at the baseline).
test.skipIf(onPostgres)("upgrading drops non-http(s) URLs stored from other servers and keeps the others", async () => {
  const server = await startTestServer();
  const alice = await createUser(server, "alice");
  const bad = await postStatus(alice, { status: "stored with a hostile url" });
  const good = await postStatus(alice, { status: "stored with a good url" });
  const dbPath = join(server.dataDir, DATABASE_FILE);
  const restarted = await server.restart(() => {
    const db = new Database(dbPath);
    const emojis = (url: string) => JSON.stringify([
      { shortcode: "ok", url: "https://remote.example/ok.png", static_url: "https://remote.example/ok.png", visible_in_picker: true },
      { shortcode: "bad", url, static_url: "https://remote.example/bad.png", visible_in_picker: true },
    ]);
    db.run("UPDATE statuses SET url = 'javascript:alert(1)', emojis = ? WHERE id = ?", [emojis("javascript:alert(2)"), bad.id]);
    db.run("UPDATE statuses SET url = 'HTTPS://remote.example/@x/1' WHERE id = ?", [good.id]);
    db.run(
      "INSERT INTO accounts (username, domain, uri, url, avatar_remote_url, header_remote_url, emojis, created_at) VALUES ('eve', 'remote.example', 'https://remote.example/users/eve', 'data:text/html,hi', 'javascript:1', 'https://remote.example/h.png', ?, 0)",
      [emojis("ftp://remote.example/x.png")],
    );
    runMigration(db, migration.tag);
    db.close();
  });
  // Recorded once, as drizzle applied it: a later start does not run it again.
  expect(restarted.database.sqlite!.query("SELECT count(*) AS n FROM __drizzle_migrations WHERE created_at = ?").get(migration.when)).toEqual({ n: 1 });
  try {
    const db = restarted.database.sqlite!;
    expect(db.query("SELECT url, json_extract(emojis, '$[#-1].shortcode') AS last, json_array_length(emojis) AS n FROM statuses WHERE id = ?").get(Number(bad.id))).toEqual({ url: null, last: "ok", n: 1 });
    expect(db.query("SELECT url FROM statuses WHERE id = ?").get(Number(good.id))).toEqual({ url: "HTTPS://remote.example/@x/1" });
    expect(db.query("SELECT url, avatar_remote_url AS avatar, header_remote_url AS header, json_array_length(emojis) AS n FROM accounts WHERE username = 'eve'").get()).toEqual({
      url: null,
      avatar: null,
      header: "https://remote.example/h.png",
      n: 1,
    });
    // What the API shows of the status has no link but its own.
    const shown = (await new Client(restarted.base, alice.token).get(`/api/v1/statuses/${bad.id}`)).body;
    expect(JSON.stringify(shown)).not.toContain("javascript:");
  } finally {
    await restarted.close();
  }
});

// Skipped in the PostgreSQL test mode: SQLite's own migrations, which clean what older Rookery releases stored (a PostgreSQL database starts at the baseline).
test.skipIf(onPostgres)("upgrading forgets the keys and documents Fedify cached before keys' owners had to confirm them, and nothing else", async () => {
  const server = await startTestServer();
  const dbPath = join(server.dataDir, DATABASE_FILE);
  const kept = [JSON.stringify(["_fedify", "activityIdempotence", "https://remote.example/a/1"]), JSON.stringify(["_fedify", "httpMessageSignaturesSpec", "https://remote.example"])];
  const forgotten = [JSON.stringify(["_fedify", "publicKey", "https://evil.example/keys/1"]), JSON.stringify(["_fedify", "remoteDocument", "https://evil.example/actors/eve"])];
  const restarted = await server.restart(() => {
    const db = new Database(dbPath);
    for (const key of [...kept, ...forgotten]) db.run("INSERT INTO fedify_kv (key, value) VALUES (?, '{}')", [key]);
    runMigration(db, keysMigration.tag);
    db.close();
  });
  try {
    const keys = restarted.database.sqlite!.query<{ key: string }, []>("SELECT key FROM fedify_kv").all().map((r) => r.key);
    for (const key of kept) expect(keys).toContain(key);
    for (const key of forgotten) expect(keys).not.toContain(key);
  } finally {
    await restarted.close();
  }
});
