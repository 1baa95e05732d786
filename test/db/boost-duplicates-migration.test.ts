import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isUniqueViolation } from "../../src/db/errors.ts";
import type { DatabasePort } from "../../src/db/port.ts";
import { closePortArms, freshPostgresPort, freshSqlitePort } from "../support/port-arms.ts";
import { postgresAvailable } from "../support/postgres.ts";

/**
 * The migration that makes boosts one per account and status (SQLite 0045, PostgreSQL 0004).
 * Before it, two boosts at once could both be stored on PostgreSQL (and a database copied from
 * one holds them). Each test takes a migrated database, takes the index away, writes what such
 * a database held, and runs the migration's SQL on it, statement by statement as drizzle does.
 */

afterEach(closePortArms);

const ROOT = join(import.meta.dir, "..", "..");
const arms = [
  { name: "SQLite", skip: false, open: freshSqlitePort, file: "migrations/0045_one_boost_per_account.sql" },
  { name: "PostgreSQL", skip: !postgresAvailable, open: freshPostgresPort, file: "migrations-pg/0004_one_boost_per_account.sql" },
];

async function runMigration(port: DatabasePort, file: string) {
  const text = readFileSync(join(ROOT, file), "utf8");
  for (const statement of text.split("--> statement-breakpoint")) if (statement.trim() !== "") await port.run(statement);
}

for (const arm of arms) {
  describe.skipIf(arm.skip)(`boosts stored twice, upgraded on ${arm.name}`, () => {
    test("the later boosts of an account go, the first kept: the original's boosts and the booster's statuses counted back, their feed entries gone; a second boost refused from then on", async () => {
      const port = await arm.open();
      await port.run("DROP INDEX statuses_account_reblog_of");
      const account = async (id: number, username: string, statusesCount: number) =>
        port.run("INSERT INTO accounts (id, username, domain, statuses_count, created_at) VALUES (?, ?, NULL, ?, 0)", [id, username, statusesCount]);
      // alice wrote two statuses; bob boosted the first three times (two of them by a race), carol once; the second was boosted by bob once.
      await account(1, "alice", 2);
      await account(2, "bob", 4);
      await account(3, "carol", 1);
      const status = async (id: number, accountId: number, reblogOf: number | null, reblogs = 0) =>
        port.run("INSERT INTO statuses (id, account_id, reblog_of_id, visibility, conversation_id, reblogs_count, created_at) VALUES (?, ?, ?, 'public', ?, ?, ?)", [id, accountId, reblogOf, reblogOf ?? id, reblogs, id]);
      await status(10, 1, null, 4);
      await status(11, 1, null, 1);
      await status(20, 2, 10);
      await status(21, 3, 10);
      await status(22, 2, 10);
      await status(23, 2, 10);
      await status(24, 2, 11);
      for (const id of [20, 22, 23, 24]) await port.run("INSERT INTO home_feed (account_id, status_id, author_id, origin_author_id) VALUES (3, ?, 2, 1)", [id]);

      await runMigration(port, arm.file);

      expect(await port.all("SELECT id, account_id FROM statuses WHERE reblog_of_id = 10 ORDER BY id")).toEqual([
        { id: 20, account_id: 2 },
        { id: 21, account_id: 3 },
      ]);
      expect(await port.all("SELECT id, reblogs_count FROM statuses WHERE reblog_of_id IS NULL ORDER BY id")).toEqual([
        { id: 10, reblogs_count: 2 },
        { id: 11, reblogs_count: 1 },
      ]);
      expect(await port.all("SELECT id, statuses_count FROM accounts ORDER BY id")).toEqual([
        { id: 1, statuses_count: 2 },
        { id: 2, statuses_count: 2 },
        { id: 3, statuses_count: 1 },
      ]);
      expect(await port.all("SELECT status_id FROM home_feed ORDER BY status_id")).toEqual([{ status_id: 20 }, { status_id: 24 }]);

      const again = await status(25, 2, 10).then(() => null, (e: unknown) => e);
      expect(isUniqueViolation(again)).toBe(true);
      // Statuses that boost nothing are not in it.
      await status(26, 2, null);
      await status(27, 2, null);
      expect((await port.all<{ id: number }>("SELECT id FROM statuses ORDER BY id")).map((r) => r.id)).toEqual([10, 11, 20, 21, 24, 26, 27]);
    });
  });
}
