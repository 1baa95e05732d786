import { Database } from "bun:sqlite";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type DbHandle } from "../../src/db/connection.ts";
import { GroupCommit } from "../../src/infra/group-commit.ts";
import { EventBus } from "../../src/infra/events.ts";

/**
 * When listeners of the one event bus run relative to the transactions of the write that
 * emitted: `within` inside them, `afterCommit` only once committed and never for a rollback.
 * Each write below inserts a row into `probe` and emits `filters.changed` with the row's id.
 */
describe("EventBus and transactions", () => {
  let dir: string;
  let handle: DbHandle;
  let other: Database;
  let bus: EventBus;
  let writes: GroupCommit;
  let within: number[];
  let after: { id: number; visibleElsewhere: boolean }[];

  const committedIds = () => other.query<{ id: number }, []>("SELECT id FROM probe ORDER BY id").all().map((r) => r.id);
  const write = (id: number): void => {
    handle.sqlite.run("INSERT INTO probe (id) VALUES (?)", [id]);
    // These writes are synchronous statements on the connection, inside the port's transactions:
    // their one `within` listener is too, so it has run when emit returns; inside a transaction
    // the transports are queued at once.
    void bus.emit({ type: "filters.changed", accountId: id });
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "rookery-events-"));
    handle = openDatabase(dir);
    handle.sqlite.run("CREATE TABLE probe (id INTEGER PRIMARY KEY)");
    // A second connection sees only what is committed.
    other = new Database(handle.path, { readonly: true });
    bus = new EventBus(handle.port);
    writes = new GroupCommit(handle.port);
    bus.within("filters.changed", (e) => void within.push(e.accountId));
    bus.afterCommit("filters.changed", (e) => after.push({ id: e.accountId, visibleElsewhere: committedIds().includes(e.accountId) }));
  });
  afterAll(() => {
    other.close();
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    within = [];
    after = [];
  });

  test("group commit: transports hear the committed items after COMMIT, never the one rolled back", async () => {
    const seenDuringBatch: number[] = [];
    const results = Promise.allSettled([
      writes.run(() => write(1)),
      writes.run(() => {
        write(2);
        throw new Error("refused");
      }),
      writes.run(() => {
        write(3);
        seenDuringBatch.push(after.length, committedIds().length);
      }),
    ]);
    const [one, two, three] = await results;
    expect([one.status, two.status, three.status]).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // Inside the batch nothing was committed and no transport had heard anything.
    expect(seenDuringBatch).toEqual([0, 0]);
    expect(within).toEqual([1, 2, 3]);
    expect(after).toEqual([
      { id: 1, visibleElsewhere: true },
      { id: 3, visibleElsewhere: true },
    ]);
    expect(committedIds()).toEqual([1, 3]);
  });

  test("a port transaction: transports hear after the outermost commit; a savepoint rolled back takes its events along", async () => {
    let heardInside = -1;
    await handle.port.transaction(async () => {
      write(10);
      const inner = handle.port.transaction(async () => {
        write(11);
        throw new Error("inner refused");
      });
      // The savepoint rolled back; the outer transaction goes on.
      await expect(inner).rejects.toThrow("inner refused");
      await handle.port.transaction(async () => write(12));
      heardInside = after.length;
    });
    expect(heardInside).toBe(0);
    expect(within).toEqual([10, 11, 12]);
    expect(after).toEqual([
      { id: 10, visibleElsewhere: true },
      { id: 12, visibleElsewhere: true },
    ]);
    expect(committedIds()).toContain(12);
    expect(committedIds()).not.toContain(11);
  });

  test("a transaction rolled back is never announced; outside any transaction an event is announced once its consequences ran", async () => {
    const refused = handle.port.transaction(async () => {
      write(20);
      throw new Error("refused");
    });
    await expect(refused).rejects.toThrow("refused");
    expect(within).toEqual([20]);
    expect(after).toEqual([]);
    // Autocommit: the row is durable when the event is emitted.
    handle.sqlite.run("INSERT INTO probe (id) VALUES (21)");
    await bus.emit({ type: "filters.changed", accountId: 21 });
    expect(after).toEqual([{ id: 21, visibleElsewhere: true }]);
    expect(committedIds()).not.toContain(20);
  });

  test("group commit inside a caller's transaction: announced when that transaction commits", async () => {
    const pending = writes.run(() => write(30));
    let heardInside = -1;
    // Synchronous work: the batch is flushed as a savepoint of the caller's transaction.
    await handle.port.transaction(() => {
      writes.flush();
      heardInside = after.length;
    });
    await pending;
    expect(heardInside).toBe(0);
    expect(after).toEqual([{ id: 30, visibleElsewhere: true }]);
  });

  test("a batch whose COMMIT fails: no item of it is announced", async () => {
    // A deferred foreign key is checked at COMMIT, after every item's savepoint was released.
    handle.sqlite.run("CREATE TABLE IF NOT EXISTS probe_child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES probe(id) DEFERRABLE INITIALLY DEFERRED)");
    const batch = Promise.allSettled([
      writes.run(() => write(50)),
      writes.run(() => {
        handle.sqlite.run("INSERT INTO probe_child (id, parent) VALUES (1, 999999)");
        write(51);
      }),
    ]);
    const outcomes = (await batch).map((r) => r.status);
    expect(outcomes).toEqual(["rejected", "rejected"]);
    expect(within).toEqual([50, 51]);
    expect(after).toEqual([]);
    expect(committedIds()).not.toContain(50);
    // The queue is clean: the next write is announced alone.
    await writes.run(() => write(52));
    expect(after).toEqual([{ id: 52, visibleElsewhere: true }]);
  });

  test("a failing transport does not keep the next from hearing; a failing `within` listener fails the write", async () => {
    const local = new EventBus(handle.port);
    const heard: number[] = [];
    local.afterCommit("filters.changed", () => {
      throw new Error("broken stream");
    });
    local.afterCommit("filters.changed", (e) => heard.push(e.accountId));
    await writes.run(async () => {
      await handle.port.run("INSERT INTO probe (id) VALUES (40)");
      await local.emit({ type: "filters.changed", accountId: 40 });
    });
    expect(heard).toEqual([40]);

    local.within("filters.changed", (e) => {
      if (e.accountId === 41) throw new Error("notification refused");
    });
    const failed = writes.run(async () => {
      await handle.port.run("INSERT INTO probe (id) VALUES (41)");
      await local.emit({ type: "filters.changed", accountId: 41 });
    });
    await expect(failed).rejects.toThrow("notification refused");
    expect(heard).toEqual([40]);
    expect(committedIds()).not.toContain(41);
  });

  test("an async `within` listener is awaited in the port transaction: its rejection rolls the write back and tells no transport", async () => {
    const local = new EventBus(handle.port);
    const heard: number[] = [];
    const order: string[] = [];
    local.afterCommit("filters.changed", (e) => heard.push(e.accountId));
    local.within("filters.changed", async (e) => {
      // Written through the port after an await: still the emitter's transaction.
      await handle.port.run("INSERT INTO probe (id) VALUES (?)", [e.accountId + 1000]);
      order.push("first");
      if (e.accountId === 61) throw new Error("listener refused");
    });
    local.within("filters.changed", () => void order.push("second"));
    await handle.port.transaction(async () => {
      await handle.port.run("INSERT INTO probe (id) VALUES (60)");
      await local.emit({ type: "filters.changed", accountId: 60 });
      // Every listener ran, in turn, before emit resolved.
      expect(order).toEqual(["first", "second"]);
    });
    expect(heard).toEqual([60]);
    expect(committedIds()).toEqual(expect.arrayContaining([60, 1060]));

    const failed = handle.port.transaction(async () => {
      await handle.port.run("INSERT INTO probe (id) VALUES (61)");
      await local.emit({ type: "filters.changed", accountId: 61 });
    });
    await expect(failed).rejects.toThrow("listener refused");
    // Nothing of the write, nor of the listener's own, stayed; the second listener never ran.
    expect(committedIds()).not.toContain(61);
    expect(committedIds()).not.toContain(1061);
    expect(order).toEqual(["first", "second", "first"]);
    // Let any after-commit task run: none was queued for the rolled-back write.
    await Promise.resolve();
    expect(heard).toEqual([60]);
  });
});
