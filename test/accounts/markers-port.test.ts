import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { MarkerService } from "../../src/services/accounts/markers.ts";
import { postgresAvailable } from "../support/postgres.ts";
import { closePortArms, freshPostgresPort, freshSqlitePort } from "../support/port-arms.ts";

/**
 * The markers, the first family on the database port (issue 31): the same service runs on
 * SQLite and on PostgreSQL. The API's behaviour is tested over HTTP in accounts.test.ts; this
 * holds the rules on both databases.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await closePortArms();
});



for (const [name, open, skip] of [
  ["SQLite", freshSqlitePort, false],
  ["PostgreSQL", freshPostgresPort, !postgresAvailable],
] as const) {
  describe.skipIf(skip)(`markers on ${name}`, () => {
    test("saved positions are read back; the version moves only when the position does; unknown timelines are ignored", async () => {
      const port = await open();
      const clock = new ManualClock(1_764_000_000_000);
      let now = clock.now();
      await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, ?, ?)", [2 ** 45, "alice", now]);
      const markers = new MarkerService(port, clock);
      const alice = 2 ** 45;

      expect(await markers.get(alice, ["home", "notifications", "other"])).toEqual([]);
      expect(await markers.set(alice, { home: "100", notifications: "7" })).toEqual([
        { accountId: alice, timeline: "home", lastReadId: "100", version: 1, updatedAt: now },
        { accountId: alice, timeline: "notifications", lastReadId: "7", version: 1, updatedAt: now },
      ] as never);
      clock.set((now += 1000));
      const [home] = await markers.set(alice, { home: "100" });
      expect(home).toMatchObject({ lastReadId: "100", version: 1, updatedAt: now - 1000 });
      const [moved] = await markers.set(alice, { home: "120" });
      expect(moved).toMatchObject({ lastReadId: "120", version: 2, updatedAt: now });
      const read = await markers.get(alice, ["home", "elsewhere"]);
      expect(read).toEqual([{ accountId: alice, timeline: "home", lastReadId: "120", version: 2, updatedAt: now }] as never);
      expect(await markers.get(alice, [])).toEqual([]);
    });

    test("two clients' first saves at once: one row per timeline, each save answered, the version moved by those that moved the position", async () => {
      const port = await open();
      const clock = new ManualClock(1_764_000_000_000);
      const alice = 2 ** 45;
      await port.run("INSERT INTO accounts (id, username, created_at) VALUES (?, ?, ?)", [alice, "alice", clock.now()]);
      const markers = new MarkerService(port, clock);
      const positions = ["100", "100", "120", "100"];
      const results = await Promise.allSettled(positions.map((home) => markers.set(alice, { home, notifications: "7" })));
      expect(results.map((r) => r.status)).toEqual(Array(4).fill("fulfilled"));
      const [stored] = await markers.get(alice, ["home"]);
      // However they ran, each answered the row as its save left it, and the last answer is what is stored.
      const answers = results.map((r) => (r as PromiseFulfilledResult<{ timeline: string; lastReadId: string; version: number }[]>).value);
      expect(answers.map((saved) => saved.map((m) => m.timeline))).toEqual(Array(4).fill(["home", "notifications"]));
      expect(answers.some((saved) => saved[0]!.lastReadId === stored!.lastReadId && saved[0]!.version === stored!.version)).toBe(true);
      // The position moved at most three times (100 -> 120 -> 100), at least once (to 120), from version 1.
      expect(stored!.version).toBeGreaterThanOrEqual(2);
      expect(stored!.version).toBeLessThanOrEqual(3);
      expect(await port.all("SELECT timeline, last_read_id, version FROM markers WHERE timeline = 'notifications'")).toEqual([{ timeline: "notifications", last_read_id: "7", version: 1 }]);
      expect(Number((await port.get<{ n: number }>("SELECT count(*) AS n FROM markers"))!.n)).toBe(2);
    });

    test("a save the database refuses keeps nothing", async () => {
      const port = await open();
      const markers = new MarkerService(port, new ManualClock(5));
      // No such account: the positions' inserts break the foreign key.
      const refused = await markers.set(404, { home: "1", notifications: "2" }).catch((e: Error) => e);
      // drizzle wraps the driver's error (its `cause`).
      expect(String((refused as Error).cause)).toMatch(/foreign key/i);
      expect(await port.all("SELECT * FROM markers")).toEqual([]);
    });
  });
}
