import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { ReadSnapshot } from "../../src/db/read-snapshot.ts";
import { afterCommitOf } from "../../src/infra/after-commit.ts";

/**
 * ReadSnapshot runs a read's statements in one transaction. It is meant for reads, but what a
 * write inside it does must be what the same write does outside: committed when the read ends,
 * thrown or not, with what it queued for after its commit run then.
 */
let dir: string;
let sqlite: Database;
let other: Database;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rookery-snapshot-"));
  sqlite = new Database(join(dir, "db.sqlite3"), { create: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  sqlite.run("INSERT INTO t VALUES (1, 'one')");
  other = new Database(join(dir, "db.sqlite3"));
});
afterEach(() => {
  other.close();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = (db: Database) => (db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n;

describe("ReadSnapshot", () => {
  test("the statements see one state: another connection's commit in between shows after the read, not within it", () => {
    const snapshot = new ReadSnapshot(sqlite, afterCommitOf(sqlite));
    const seen = snapshot.read(() => {
      const before = count(sqlite);
      other.run("INSERT INTO t VALUES (2, 'two')");
      return [before, count(sqlite)];
    });
    expect(seen).toEqual([1, 1]);
    expect(sqlite.inTransaction).toBe(false);
    expect(count(sqlite)).toBe(2);
  });

  test("a write inside commits when the read ends, and its after-commit work runs then", () => {
    const queue = afterCommitOf(sqlite);
    const snapshot = new ReadSnapshot(sqlite, queue);
    const ran: string[] = [];
    snapshot.read(() => {
      sqlite.run("INSERT INTO t VALUES (2, 'two')");
      queue.defer(() => ran.push("after the write"));
      expect(ran).toEqual([]);
      expect(count(other)).toBe(1);
    });
    expect(ran).toEqual(["after the write"]);
    expect(sqlite.inTransaction).toBe(false);
    expect(count(other)).toBe(2);
  });

  test("a read that throws still ends its transaction: a write made before the throw is kept, as outside", () => {
    const queue = afterCommitOf(sqlite);
    const snapshot = new ReadSnapshot(sqlite, queue);
    const ran: string[] = [];
    expect(() =>
      snapshot.read(() => {
        sqlite.run("INSERT INTO t VALUES (2, 'two')");
        queue.defer(() => ran.push("after the write"));
        throw new Error("not found");
      }),
    ).toThrow("not found");
    expect(sqlite.inTransaction).toBe(false);
    expect(count(other)).toBe(2);
    expect(ran).toEqual(["after the write"]);
  });

  test("inside a transaction already, it runs in it and leaves the commit to its owner", () => {
    const snapshot = new ReadSnapshot(sqlite, afterCommitOf(sqlite));
    sqlite.run("BEGIN");
    sqlite.run("INSERT INTO t VALUES (2, 'two')");
    expect(snapshot.read(() => count(sqlite))).toBe(2);
    expect(sqlite.inTransaction).toBe(true);
    expect(count(other)).toBe(1);
    sqlite.run("ROLLBACK");
    expect(count(sqlite)).toBe(1);
  });
});
