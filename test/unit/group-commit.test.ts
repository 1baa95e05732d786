import { afterEach, describe, expect, test } from "bun:test";
import { onPostgres } from "../support/test-database.ts";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqlitePort } from "../../src/db/sqlite-port.ts";
import { GroupCommit } from "../../src/infra/group-commit.ts";
import { startTestServer } from "../support/server.ts";
import { closePortArms, freshPostgresPort } from "../support/port-arms.ts";
import { postgresAvailable } from "../support/postgres.ts";

const dirs: string[] = [];
const open: Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A WAL database on disk (as the server's), a second connection to watch what is committed, and a group commit. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), "rookery-group-"));
  dirs.push(dir);
  const file = join(dir, "db.sqlite3");
  const db = new Database(file);
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA foreign_keys = ON");
  db.run("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)");
  db.run("CREATE TABLE parents (id INTEGER PRIMARY KEY)");
  db.run("CREATE TABLE children (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED)");
  const observer = new Database(file, { readonly: true });
  open.push(observer, db);
  const committed = () => (observer.query("SELECT label FROM items ORDER BY id").all() as { label: string }[]).map((r) => r.label);
  const port = new SqlitePort(db);
  return { db, port, writes: new GroupCommit(port), committed };
}

/** Each promise's outcome, once all have settled. */
const outcomes = (promises: Promise<unknown>[]) =>
  Promise.allSettled(promises).then((all) => all.map((r) => (r.status === "fulfilled" ? { value: r.value } : { error: String(r.reason) })));

describe("GroupCommit", () => {
  test("writes of one turn share one transaction: none is visible to another connection before the commit", async () => {
    const { db, writes, committed } = setup();
    const seenInside: string[][] = [];
    const results = [
      writes.run(() => {
        db.run("INSERT INTO items (label) VALUES ('a')");
        return "A";
      }),
      writes.run(() => {
        // The first write is done but not committed: another connection does not see it yet.
        seenInside.push(committed());
        expect(db.inTransaction).toBe(true);
        db.run("INSERT INTO items (label) VALUES ('b')");
        return "B";
      }),
    ];
    expect(await outcomes(results)).toEqual([{ value: "A" }, { value: "B" }]);
    expect(seenInside).toEqual([[]]);
    expect(committed()).toEqual(["a", "b"]);
    expect(db.inTransaction).toBe(false);
  });

  test("a write that throws is rolled back alone (its savepoint); the others commit, and only its caller gets the error", async () => {
    const { db, writes, committed } = setup();
    const results = [
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('first')").changes),
      writes.run(() => {
        db.run("INSERT INTO items (label) VALUES ('half-done')");
        throw new Error("validation failed");
      }),
      // A constraint error from SQLite itself, after the first write took the label.
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('first')").changes),
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('last')").changes),
    ];
    const settled = await outcomes(results);
    expect(settled[0]).toEqual({ value: 1 });
    expect(settled[1]).toEqual({ error: "Error: validation failed" });
    expect(settled[2]!.error).toContain("UNIQUE constraint failed: items.label");
    expect(settled[3]).toEqual({ value: 1 });
    expect(committed()).toEqual(["first", "last"]);
  });

  test("a commit that fails rejects every write of the batch, and none of them is kept", async () => {
    const { db, writes, committed } = setup();
    const results = [
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('innocent')").changes),
      // A deferred foreign key: the statement passes, the COMMIT fails.
      writes.run(() => db.run("INSERT INTO children (parent_id) VALUES (999)").changes),
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('bystander')").changes),
    ];
    const settled = await outcomes(results);
    for (const s of settled) expect(s.error).toContain("FOREIGN KEY constraint failed");
    expect(committed()).toEqual([]);
    expect(db.inTransaction).toBe(false);
    // The next batch starts clean.
    expect(await writes.run(() => db.run("INSERT INTO items (label) VALUES ('after')").changes)).toBe(1);
    expect(committed()).toEqual(["after"]);
  });

  test("inside an outer transaction the batch runs in place and shares the outer transaction's fate", async () => {
    const { db, port, writes, committed } = setup();
    // The outer transaction commits: so do the writes flushed inside it.
    await port.transaction(() => {
      void writes.run(() => db.run("INSERT INTO items (label) VALUES ('kept')"));
      const failing = writes.run(() => {
        db.run("INSERT INTO items (label) VALUES ('undone')");
        throw new Error("no");
      });
      failing.catch(() => {});
      writes.flush();
      // Still inside the outer transaction: nothing committed yet.
      expect(committed()).toEqual([]);
    });
    expect(committed()).toEqual(["kept"]);
    // The outer transaction rolls back: the writes flushed inside it go with it.
    const inner = writes.run(() => db.run("INSERT INTO items (label) VALUES ('rolled back')").changes);
    await expect(
      port.transaction(() => {
        writes.flush();
        throw new Error("outer failed");
      }),
    ).rejects.toThrow("outer failed");
    // The write ran (its caller hears so); its effect went with the outer transaction.
    expect(await inner).toBe(1);
    expect(committed()).toEqual(["kept"]);
  });

  test("writes run and settle in the order they were queued, also across batches", async () => {
    const { db, writes, committed } = setup();
    const ran: string[] = [];
    const settled: string[] = [];
    const queue = (label: string) =>
      writes
        .run(() => {
          ran.push(label);
          db.run("INSERT INTO items (label) VALUES (?)", [label]);
        })
        .then(() => void settled.push(label));
    const firstTurn = ["1", "2", "3"].map(queue);
    // A write queued while the first batch runs goes in the next batch.
    const nested = writes.run(() => void writes.run(() => db.run("INSERT INTO items (label) VALUES ('from-inside')")));
    await Promise.all([...firstTurn, nested]);
    const secondTurn = ["4", "5"].map(queue);
    await Promise.all(secondTurn);
    expect(ran).toEqual(["1", "2", "3", "4", "5"]);
    expect(settled).toEqual(["1", "2", "3", "4", "5"]);
    await writes.run(() => undefined);
    expect(committed()).toEqual(["1", "2", "3", "from-inside", "4", "5"]);
  });

  test("work that returns a promise (a service on the port) is awaited in its savepoint; a throw after its awaits undoes it alone; another flow waits for the commit", async () => {
    const { db, port, writes, committed } = setup();
    const insert = (label: string) => port.run("INSERT INTO items (label) VALUES (?)", [label]);
    // A flow that began before the batch and resumes while it is open: it is not part of it.
    let resume!: () => void;
    const outside = new Promise<void>((resolve) => (resume = resolve)).then(() => port.all<{ label: string }>("SELECT label FROM items ORDER BY id"));
    const results = [
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('sync')").changes),
      writes.run(async () => {
        await insert("async");
        resume();
        await port.all("SELECT 1");
        return "A";
      }),
      writes.run(async () => {
        await insert("undone");
        await port.all("SELECT 1");
        throw new Error("late failure");
      }),
      writes.run(() => db.run("INSERT INTO items (label) VALUES ('after')").changes),
    ];
    expect(await outcomes(results)).toEqual([{ value: 1 }, { value: "A" }, { error: "Error: late failure" }, { value: 1 }]);
    expect(committed()).toEqual(["sync", "async", "after"]);
    expect((await outside).map((r) => r.label)).toEqual(["sync", "async", "after"]);
    // The read just made shares a read transaction until the loop turns (SqlitePort's readFrom); then nothing is open.
    await new Promise((resolve) => setImmediate(resolve));
    expect(db.inTransaction).toBe(false);
  });

  test("flush() commits what is queued at once (shutdown), and the scheduled flush then finds nothing", async () => {
    const { db, writes, committed } = setup();
    const pending = writes.run(() => db.run("INSERT INTO items (label) VALUES ('queued')").changes);
    expect(committed()).toEqual([]);
    writes.flush();
    expect(committed()).toEqual(["queued"]);
    expect(await pending).toBe(1);
    // The turn's own flush comes and goes without running it twice.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(committed()).toEqual(["queued"]);
  });

  // GroupCommit batches SQLite's synchronous writes (on PostgreSQL a batch is a transaction of the port).
  test.skipIf(onPostgres)("a server that stops commits the writes still queued", async () => {
    const server = await startTestServer();
    const sqlite = server.database.sqlite!;
    sqlite.run("CREATE TABLE scratch (label TEXT)");
    const queued = server.ctx.services.writes.run(() => sqlite.run("INSERT INTO scratch VALUES ('at shutdown')").changes);
    const restarted = await server.restart();
    try {
      expect(await queued).toBe(1);
      expect(restarted.database.sqlite!.query("SELECT label FROM scratch").all()).toEqual([{ label: "at shutdown" }]);
    } finally {
      await restarted.close();
    }
  });
});

describe.skipIf(!postgresAvailable)("on PostgreSQL", () => {
  afterEach(closePortArms);

  test("each write is its own transaction, at once: one that waits holds up no other, and a failure takes only its own", async () => {
    const port = await freshPostgresPort();
    const writes = new GroupCommit(port);
    await port.run("CREATE TABLE items (id bigint PRIMARY KEY)");
    const insert = (id: number) => port.run("INSERT INTO items (id) VALUES (?)", [id]);
    const committed = async () => (await port.all<{ id: string }>("SELECT id FROM items ORDER BY id")).map((r) => Number(r.id));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting = writes.run(async () => {
      await insert(1);
      await gate;
    });
    await writes.run(() => insert(2));
    // Committed while the first is still open: read from outside both.
    expect(await committed()).toEqual([2]);
    await expect(writes.run(async () => {
      await insert(3);
      throw new Error("refused");
    })).rejects.toThrow("refused");
    release();
    await waiting;
    expect(await committed()).toEqual([1, 2]);
  });
});
