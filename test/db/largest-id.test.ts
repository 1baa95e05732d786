import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/connection.ts";
import { keyedTablesOf, largestId } from "../../src/db/largest-id.ts";
import { postgresAvailable } from "../support/postgres.ts";
import { closePortArms, freshPostgresPort, freshSqlitePort } from "../support/port-arms.ts";

/**
 * The largest id every process seeds its id generator with at start-up (the server, the CLI),
 * read through the database port on either database, over the tables the schema keys by a
 * generated id.
 */

afterEach(closePortArms);

test("the keyed tables are those SQLite itself keys by an INTEGER PRIMARY KEY named id", () => {
  const handle = openDatabase(mkdtempSync(join(tmpdir(), "rookery-largest-id-")));
  try {
    const own = handle.sqlite
      .query<{ name: string }, []>("SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'id' AND pk = 1 AND type = 'INTEGER')")
      .all()
      .map((t) => t.name)
      .sort();
    expect(own.length).toBeGreaterThan(20);
    expect(keyedTablesOf(handle.port).sort()).toEqual(own);
  } finally {
    handle.close();
  }
});

for (const [name, open, skip] of [
  ["SQLite", freshSqlitePort, false],
  ["PostgreSQL", freshPostgresPort, !postgresAvailable],
] as const) {
  describe.skipIf(skip)(`largestId on ${name}`, () => {
    test("0 on an empty database; then the largest id of any keyed table, wherever it is", async () => {
      const port = await open();
      expect(await largestId(port)).toBe(0);
      await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, ?, ?)", [2 ** 50, "alice", 1]);
      expect(await largestId(port)).toBe(2 ** 50);
      // A larger one in another table (beyond 2^53 would not be a safe id: generated ids stay below).
      await port.run("INSERT INTO announcements (id, text, all_day, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [2 ** 52 + 7, "hello", false, 1, 1, 1]);
      expect(await largestId(port)).toBe(2 ** 52 + 7);
    });
  });
}
