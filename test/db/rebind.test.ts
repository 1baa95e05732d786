import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { openDatabase } from "../../src/db/connection.ts";
import { unaryPlusParameters, withoutReprepareOnBind } from "../../src/db/rebind.ts";

/**
 * Compared parameters are written `= +?` so that SQLite 3.54 does not re-prepare a statement on
 * every bind (src/db/rebind.ts). The rewrite must touch only those parameters, and change no
 * answer: the same rows for every kind of value, affinity and collation.
 */
describe("compared parameters, written as expressions", () => {
  test("= and IS, LIMIT and OFFSET before a parameter of any form are rewritten; other comparisons, values and string literals are not", () => {
    expect(unaryPlusParameters(`select 1 from "a" where ("a"."id" = ? and "a"."x" IS ?) limit ?`)).toBe(`select 1 from "a" where ("a"."id" = +? and "a"."x" IS +?) limit +?`);
    expect(unaryPlusParameters("SELECT id FROM t ORDER BY id DESC LIMIT $limit OFFSET ?3")).toBe("SELECT id FROM t ORDER BY id DESC LIMIT +$limit OFFSET +?3");
    expect(unaryPlusParameters("WHERE a = ?1 AND b==$name AND c = :p AND d = @q AND e is ?2")).toBe("WHERE a = +?1 AND b==+$name AND c = +:p AND d = +@q AND e is +?2");
    expect(unaryPlusParameters("WHERE c >= ? AND d <= ?2 AND e != ? AND f IS NOT ? AND g IN (?, ?) AND h > $x")).toBe("WHERE c >= ? AND d <= ?2 AND e != ? AND f IS NOT ? AND g IN (?, ?) AND h > $x");
    expect(unaryPlusParameters("SELECT '=' || ?, 'it''s = ?' FROM t WHERE k = ?")).toBe("SELECT '=' || ?, 'it''s = ?' FROM t WHERE k = +?");
    expect(unaryPlusParameters("INSERT INTO t (a, b) VALUES (?, ?)")).toBe("INSERT INTO t (a, b) VALUES (?, ?)");
    expect(unaryPlusParameters("UPDATE t SET x = ? WHERE id = ?")).toBe("UPDATE t SET x = +? WHERE id = +?");
  });

  test("the same rows as without the rewrite: integer, text, real, blob and null values; column affinity and NOCASE collation; joins", () => {
    const plain = new Database(":memory:");
    const rewritten = new Database(":memory:");
    withoutReprepareOnBind(rewritten);
    for (const db of [plain, rewritten]) {
      db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT, c TEXT COLLATE NOCASE, r REAL, b BLOB)");
      db.run("CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER)");
      db.run("INSERT INTO t VALUES (1, 10, '10', 'Alice', 1.5, x'0102'), (2, 20, 'x', 'bob', 2.0, NULL), (3, NULL, NULL, NULL, NULL, NULL)");
      db.run("INSERT INTO u VALUES (1, 1), (2, 2), (3, 3)");
    }
    const cases: [string, unknown[]][] = [
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.n = ? ORDER BY t.id", [10]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.n = ? ORDER BY t.id", ["10"]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.s = ? ORDER BY t.id", [10]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.c = ? ORDER BY t.id", ["ALICE"]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.r = ? ORDER BY t.id", [2]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.b = ? ORDER BY t.id", [new Uint8Array([1, 2])]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id WHERE t.n IS ? ORDER BY t.id", [null]],
      ["SELECT t.id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id AND u.id = ?) ORDER BY t.id", [2]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id ORDER BY t.id DESC LIMIT ? OFFSET ?", [2, 1]],
      ["SELECT t.id FROM t JOIN u ON u.t_id = t.id ORDER BY t.id DESC LIMIT ?", ["2"]],
    ];
    for (const [sql, args] of cases) {
      const want = plain.query(sql).all(...(args as []));
      expect(want.length).toBeGreaterThan(0);
      expect(rewritten.query(sql).all(...(args as []))).toEqual(want);
      expect(rewritten.prepare(sql).all(...(args as []))).toEqual(want);
    }
    plain.close();
    rewritten.close();
  });

  const dir = mkdtempSync(join(tmpdir(), "rookery-rebind-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  test("the server's connections, writing and reading, prepare every statement so (through drizzle too)", () => {
    const writer = openDatabase(dir);
    const reader = openDatabase(dir, { readonly: true });
    try {
      for (const sqlite of [writer.sqlite, reader.sqlite]) {
        const viaQuery = sqlite.query("SELECT id FROM accounts WHERE id = ?");
        viaQuery.all(7);
        expect(String(viaQuery)).toBe("SELECT id FROM accounts WHERE id = +7");
        const viaPrepare = sqlite.prepare("SELECT id FROM accounts WHERE id = ?");
        viaPrepare.all(8);
        expect(String(viaPrepare)).toBe("SELECT id FROM accounts WHERE id = +8");
      }
    } finally {
      reader.close();
      writer.close();
    }
  });
});
