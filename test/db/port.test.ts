import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { openDatabase } from "../../src/db/connection.ts";
import { afterCommitOf } from "../../src/infra/after-commit.ts";
import { isPostgresUrl, type DatabasePort } from "../../src/db/port.ts";
import { PostgresPort } from "../../src/db/postgres-port.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";

/**
 * The database port (src/db/port.ts) on both adapters, by the same tests: statements and
 * builders, and the transaction rules every service relies on (commit, rollback after awaits,
 * savepoints, two transactions at once, after-commit hooks). Rows go in `instance_settings`
 * (key, value), a table with no foreign keys.
 */

interface Opened {
  port: DatabasePort;
  /** What another connection sees: only committed rows. */
  committed(): Promise<string[]>;
  close(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const dir = mkdtempSync(join(tmpdir(), "rookery-port-"));
  const handle = openDatabase(dir);
  const other = openDatabase(dir, { readonly: true });
  return {
    port: handle.port,
    committed: async () => other.sqlite.query<{ key: string }, []>("SELECT key FROM instance_settings ORDER BY key").all().map((r) => r.key),
    close: async () => {
      other.close();
      handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Opened> {
  const database = await freshPgDatabase();
  const port = new PostgresPort(database.url, { max: 4 });
  const other = new PostgresPort(database.url, { max: 1 });
  return {
    port,
    committed: async () => (await other.all<{ key: string }>("SELECT key FROM instance_settings ORDER BY key")).map((r) => r.key),
    close: async () => {
      await port.close();
      await other.close();
      await database.drop();
    },
  };
}

const adapters = [
  { name: "SQLite", open: openSqlite, skip: false },
  { name: "PostgreSQL", open: openPostgres, skip: !postgresAvailable },
];

const opened: Opened[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

const put = (port: DatabasePort, key: string) => port.run("INSERT INTO instance_settings (key, value) VALUES (?, ?)", [key, `value of ${key}`]);
const keys = async (port: DatabasePort) => (await port.all<{ key: string }>("SELECT key FROM instance_settings ORDER BY key")).map((r) => r.key);

for (const adapter of adapters) {
  describe.skipIf(adapter.skip)(`the database port on ${adapter.name}`, () => {
    const open = async () => {
      const o = await adapter.open();
      opened.push(o);
      return o;
    };

    test("raw statements take positional parameters; counts and ids are numbers; run answers the rows changed", async () => {
      const { port } = await open();
      expect(await put(port, "a")).toBe(1);
      expect(await put(port, "b?")).toBe(1);
      // A `?` inside quotes is text, not a parameter.
      expect(await port.get("SELECT count(*) AS n, max(key) AS top FROM instance_settings WHERE key <> '?' AND value LIKE ?", ["value%"])).toEqual({ n: 2, top: "b?" });
      expect(await port.values("SELECT key, length(value) FROM instance_settings ORDER BY key")).toEqual([
        ["a", 10],
        ["b?", 11],
      ]);
      expect(await port.get("SELECT key FROM instance_settings WHERE key = ?", ["none"])).toBeUndefined();
      expect(await port.run("UPDATE instance_settings SET value = ? WHERE key LIKE ?", ["x", "%"])).toBe(2);
      // An id past 2^31, as src/ids.ts makes them, in a bigint column.
      const id = 2 ** 52 + 7;
      await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, ?, ?)", [id, "alice", 1_764_000_000_000]);
      expect(await port.get("SELECT id, created_at FROM accounts")).toEqual({ id, created_at: 1_764_000_000_000 });
    });

    test("builders are awaited, over the dialect's tables", async () => {
      const { port } = await open();
      const { instanceSettings, accounts } = port.tables;
      await port.orm.insert(instanceSettings).values([
        { key: "a", value: "1" },
        { key: "b", value: "2" },
      ]);
      expect(port.changes(await port.orm.update(instanceSettings).set({ value: "3" }).where(eq(instanceSettings.key, "b")))).toBe(1);
      expect(await port.orm.select().from(instanceSettings).orderBy(instanceSettings.key)).toEqual([
        { key: "a", value: "1" },
        { key: "b", value: "3" },
      ]);
      await port.orm.insert(accounts).values({ id: 2 ** 40, username: "bob", createdAt: 5, locked: true });
      const [row] = await port.orm.select({ id: accounts.id, locked: accounts.locked, bot: accounts.bot }).from(accounts).limit(1);
      expect(row).toEqual({ id: 2 ** 40, locked: true, bot: false });
    });

    test("a builder prepared once runs in the transaction that executes it", async () => {
      const { port, committed } = await open();
      const { instanceSettings } = port.tables;
      const byKey = port.orm.select({ value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.key, sql.placeholder("key"))).prepare();
      const failing = port.transaction(async () => {
        await put(port, "a");
        // Inside the transaction, the prepared query sees its uncommitted row.
        expect(await byKey.execute({ key: "a" })).toEqual([{ value: "value of a" }]);
        throw new Error("undo");
      });
      await expect(failing).rejects.toThrow("undo");
      expect(await byKey.execute({ key: "a" })).toEqual([]);
      expect(await committed()).toEqual([]);
    });

    test("a transaction commits what its work wrote, and nothing is visible elsewhere before", async () => {
      const { port, committed } = await open();
      let seenElsewhere: string[] | null = null;
      let inside = false;
      const answer = await port.transaction(async () => {
        await put(port, "a");
        await port.orm.insert(port.tables.instanceSettings).values({ key: "b", value: "2" });
        seenElsewhere = await committed();
        inside = port.inTransaction;
        return "done";
      });
      expect(answer).toBe("done");
      expect(inside).toBe(true);
      expect(port.inTransaction).toBe(false);
      expect(seenElsewhere!).toEqual([]);
      expect(await committed()).toEqual(["a", "b"]);
    });

    test("a throw after awaits rolls the whole transaction back (drizzle's own async transaction on bun:sqlite does not)", async () => {
      const { port, committed } = await open();
      const failing = port.transaction(async () => {
        await put(port, "a");
        await keys(port);
        await port.orm.insert(port.tables.instanceSettings).values({ key: "b", value: "2" });
        throw new Error("validation failed");
      });
      await expect(failing).rejects.toThrow("validation failed");
      await failing.catch(() => {});
      expect(await committed()).toEqual([]);
      expect(await keys(port)).toEqual([]);
      // A constraint error from the database itself rolls back as well.
      await put(port, "taken");
      await expect(
        port.transaction(async () => {
          await put(port, "c");
          await put(port, "taken");
        }),
      ).rejects.toThrow();
      expect(await keys(port)).toEqual(["taken"]);
    });

    test("a nested transaction is a savepoint: its rollback undoes only its own writes; the outer one's rollback undoes both", async () => {
      const { port, committed } = await open();
      await port.transaction(async () => {
        await put(port, "outer");
        const inner = port.transaction(async () => {
          await put(port, "inner");
          throw new Error("inner failed");
        });
        await expect(inner).rejects.toThrow("inner failed");
        await inner.catch(() => {});
        expect(await keys(port)).toEqual(["outer"]);
        await port.transaction(async () => put(port, "kept"));
      });
      expect(await committed()).toEqual(["kept", "outer"]);

      const outer = port.transaction(async () => {
        await port.transaction(async () => put(port, "inner-committed"));
        throw new Error("outer failed");
      });
      await expect(outer).rejects.toThrow("outer failed");
      await outer.catch(() => {});
      expect(await committed()).toEqual(["kept", "outer"]);
    });

    test("two nested transactions of one transaction may not run side by side", async () => {
      const { port, committed } = await open();
      const outer = port.transaction(async () => {
        await Promise.all([port.transaction(async () => put(port, "x")), port.transaction(async () => put(port, "y"))]);
      });
      await expect(outer).rejects.toThrow("two nested transactions of one transaction ran at the same time");
      await outer.catch(() => {});
      expect(await committed()).toEqual([]);
    });

    test("two transactions at once neither see nor join each other's writes; a statement outside them sees only what was committed", async () => {
      const { port, committed } = await open();
      const seen: Record<string, string[]> = {};
      const first = port.transaction(async () => {
        await put(port, "first");
        // Give the other flows every chance to run in between.
        for (let i = 0; i < 5; i++) await keys(port);
        seen.first = await keys(port);
        throw new Error("first rolls back");
      });
      const second = port.transaction(async () => {
        await put(port, "second");
        for (let i = 0; i < 5; i++) await keys(port);
        seen.second = await keys(port);
      });
      const outside = (async () => {
        await Promise.resolve();
        seen.outside = await keys(port);
      })();
      const settled = await Promise.allSettled([first, second, outside]);
      expect(settled.map((s) => s.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
      // Each sees its own write; "second" may be seen by the others only once it committed
      // (PostgreSQL reads committed rows), and "first", never committed, by no one else.
      expect(seen.first).toContain("first");
      expect(seen.second).toEqual(["second"]);
      expect(seen.outside).not.toContain("first");
      // The rollback of one took nothing of the other's, and the commit of one kept nothing of the other's.
      expect(await committed()).toEqual(["second"]);
    });

    test("after-commit hooks run once after the commit, never after a rollback (of the transaction or of the savepoint that queued them)", async () => {
      const { port, committed } = await open();
      const ran: string[] = [];
      const views: Promise<string[]>[] = [];
      const hook = (task: string) =>
        port.afterCommit(() => {
          ran.push(task);
          views.push(committed());
        });
      let ranInside = -1;
      await port.transaction(async () => {
        await put(port, "a");
        hook("committed");
        const inner = port.transaction(async () => {
          hook("savepoint rolled back");
          throw new Error("no");
        });
        await inner.catch(() => {});
        await port.transaction(async () => hook("savepoint kept"));
        ranInside = ran.length;
      });
      expect(ranInside).toBe(0);
      expect(ran).toEqual(["committed", "savepoint kept"]);
      const failed = port.transaction(async () => {
        await put(port, "b");
        hook("rolled back");
        throw new Error("no");
      });
      await failed.catch(() => {});
      // Outside a transaction a hook runs at once.
      hook("outside");
      expect(ran).toEqual(["committed", "savepoint kept", "outside"]);
      // Each saw the commit from another connection.
      for (const visible of await Promise.all(views)) expect(visible).toEqual(["a"]);
    });
  });
}

test("DATABASE_URL selects PostgreSQL only with a postgres:// or postgresql:// URL; anything else is the embedded SQLite", () => {
  expect(isPostgresUrl("postgres://rookery@127.0.0.1:5432/rookery")).toBe(true);
  expect(isPostgresUrl("postgresql://db.example/rookery")).toBe(true);
  expect(isPostgresUrl("POSTGRES://db/rookery")).toBe(true);
  expect(isPostgresUrl(undefined)).toBe(false);
  expect(isPostgresUrl("")).toBe(false);
  expect(isPostgresUrl("sqlite:///var/lib/rookery")).toBe(false);
  expect(isPostgresUrl("mysql://db/rookery")).toBe(false);
  expect(isPostgresUrl(" postgres://db")).toBe(false);
});

describe("the port on SQLite: one connection", () => {
  const handles = new Map<DatabasePort, { dir: string; handle: ReturnType<typeof openDatabase> }>();
  const dirOf = (port: DatabasePort) => handles.get(port)!.dir;
  const handleOf = (port: DatabasePort) => handles.get(port)!.handle;
  const open = async () => {
    const dir = mkdtempSync(join(tmpdir(), "rookery-port-"));
    const handle = openDatabase(dir);
    handles.set(handle.port, { dir, handle });
    opened.push({ port: handle.port, committed: async () => [], close: async () => (handle.close(), rmSync(dir, { recursive: true, force: true })) });
    return handle;
  };

  test("drizzle's own async transaction commits at the first await (the trap the port avoids)", async () => {
    const { sqlite, port } = await open();
    // drizzle's synchronous bun:sqlite driver, which Rookery keeps for its migrator alone.
    const db = drizzle({ client: sqlite });
    const trap = db.transaction(async (tx) => {
      tx.insert(port.tables.instanceSettings).values({ key: "written", value: "1" }).run();
      await Promise.resolve();
      throw new Error("too late");
    });
    await Promise.resolve(trap).catch(() => {});
    expect(await keys(port)).toEqual(["written"]);
  });

  test("a transaction that awaits something other than the database is rolled back when the event loop turns", async () => {
    const { port, sqlite } = await open();
    const held = port.transaction(async () => {
      await put(port, "held");
      await new Promise((resolve) => setImmediate(resolve));
      await put(port, "after the turn");
    });
    await expect(held).rejects.toThrow("a transaction stayed open across a turn of the event loop");
    await held.catch(() => {});
    expect(await keys(port)).toEqual([]);
    // Nothing is left open once the loop turns (the read just made shares a read transaction until then).
    await nextTurn();
    expect(sqlite.inTransaction).toBe(false);
  });

  test("work that returns without a promise commits before transaction() returns", async () => {
    const { port, sqlite } = await open();
    const done = port.transaction(() => {
      sqlite.run("INSERT INTO instance_settings (key, value) VALUES ('sync', '1')");
      return 1;
    });
    expect(sqlite.inTransaction).toBe(false);
    expect(sqlite.query("SELECT key FROM instance_settings").all()).toEqual([{ key: "sync" }]);
    expect(await done).toBe(1);
  });

  test("reads outside a transaction share one read transaction until the loop turns: another connection's commit shows after it", async () => {
    const { port, sqlite } = await open();
    const writer = openDatabase(dirOf(port));
    try {
      expect(await keys(port)).toEqual([]);
      expect(sqlite.inTransaction).toBe(true);
      expect(port.inTransaction).toBe(false);
      writer.sqlite.run("INSERT INTO instance_settings (key, value) VALUES ('elsewhere', '1')");
      // Other flows' reads of this turn see the same state, as one read would.
      expect(await Promise.all([keys(port), keys(port)])).toEqual([[], []]);
      await nextTurn();
      expect(sqlite.inTransaction).toBe(false);
      expect(await keys(port)).toEqual(["elsewhere"]);
    } finally {
      writer.close();
    }
  });

  test("a write never waits for the shared reads: it ends them and commits at once (port statements, transactions), and reads after it see it", async () => {
    const { port, sqlite } = await open();
    const other = openDatabase(dirOf(port), { readonly: true });
    const seen = () => other.sqlite.query<{ key: string }, []>("SELECT key FROM instance_settings ORDER BY key").all().map((r) => r.key);
    try {
      await keys(port);
      await port.run("INSERT INTO instance_settings (key, value) VALUES (?, '1')", ["run"]);
      expect(seen()).toEqual(["run"]);
      await keys(port);
      await put(port, "transaction");
      expect(seen()).toEqual(["run", "transaction"]);
      expect(await keys(port)).toEqual(["run", "transaction"]);
      // A write through a builder, and a raw write that answers rows (RETURNING), end them too.
      await keys(port);
      await port.orm.insert(port.tables.instanceSettings).values({ key: "builder", value: "1" });
      expect(seen()).toContain("builder");
      await keys(port);
      expect(await port.all("INSERT INTO instance_settings (key, value) VALUES ('returning', '1') RETURNING key")).toEqual([{ key: "returning" }]);
      expect(seen()).toContain("returning");
      expect(sqlite.inTransaction).toBe(false);
    } finally {
      other.close();
    }
  });

  test("after-commit work asked for during the shared reads runs at once: there is no write to wait for", async () => {
    const { port } = await open();
    await keys(port);
    const ran: string[] = [];
    port.afterCommit(() => ran.push("port"));
    afterCommitOf(handleOf(port).sqlite).defer(() => ran.push("connection"));
    expect(ran).toEqual(["port", "connection"]);
  });
});

/** Resolves once the event loop has turned (what ends the port's shared reads). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
