import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/db/connection.ts";
import { createUser, postStatus } from "../support/fixtures.ts";
import { Client } from "../support/http.ts";
import { startTestServer } from "../support/server.ts";

/**
 * Migrations that clean what an older Rookery stored before it refused it: URLs of other schemes
 * than http(s) (0026), keys cached before their owners had to confirm them (0027). Each test
 * puts the database back to the state before its migration (the rows of that migration and of
 * every later one removed from drizzle's table: drizzle applies what is newer than the newest
 * row), as an older Rookery left it.
 */
const ROOT = join(import.meta.dir, "..", "..");
const journal = JSON.parse(readFileSync(join(ROOT, "migrations/meta/_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] };
const migration = journal.entries.find((e) => e.tag === "0026_only_http_urls_kept")!;
const keysMigration = journal.entries.find((e) => e.tag === "0027_unconfirmed_keys_forgotten")!;

test("upgrading drops non-http(s) URLs stored from other servers and keeps the others", async () => {
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
    db.run("DELETE FROM __drizzle_migrations WHERE created_at >= ?", [migration.when]);
    db.close();
  });
  // The migration is not run again by a later start.
  expect(restarted.database.sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations WHERE created_at = ?").get(migration.when)).toEqual({ n: 1 });
  try {
    const db = restarted.database.sqlite;
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

test("upgrading forgets the keys and documents Fedify cached before keys' owners had to confirm them, and nothing else", async () => {
  const server = await startTestServer();
  const dbPath = join(server.dataDir, DATABASE_FILE);
  const kept = [JSON.stringify(["_fedify", "activityIdempotence", "https://remote.example/a/1"]), JSON.stringify(["_fedify", "httpMessageSignaturesSpec", "https://remote.example"])];
  const forgotten = [JSON.stringify(["_fedify", "publicKey", "https://evil.example/keys/1"]), JSON.stringify(["_fedify", "remoteDocument", "https://evil.example/actors/eve"])];
  const restarted = await server.restart(() => {
    const db = new Database(dbPath);
    for (const key of [...kept, ...forgotten]) db.run("INSERT INTO fedify_kv (key, value) VALUES (?, '{}')", [key]);
    db.run("DELETE FROM __drizzle_migrations WHERE created_at >= ?", [keysMigration.when]);
    db.close();
  });
  try {
    const keys = restarted.database.sqlite.query<{ key: string }, []>("SELECT key FROM fedify_kv").all().map((r) => r.key);
    for (const key of kept) expect(keys).toContain(key);
    for (const key of forgotten) expect(keys).not.toContain(key);
  } finally {
    await restarted.close();
  }
});
