import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Temporal } from "@js-temporal/polyfill";
import { ManualClock } from "../../src/clock.ts";
import { openDatabase } from "../../src/db/connection.ts";
import { PostgresPort } from "../../src/db/postgres-port.ts";
import { PortKvStore } from "../../src/federation/kv.ts";
import { freshPgDatabase, postgresAvailable, type PgDatabase } from "../support/postgres.ts";

/**
 * Fedify's key-value store (src/federation/kv.ts) through the database port: the same
 * behaviour on SQLite and PostgreSQL (both run the first tests), then what PostgreSQL has to
 * show: writes skipped, and compare-and-swap between two processes' connections.
 */

const opened: { db: PgDatabase; clients: PostgresPort[] }[] = [];
async function database() {
  const db = await freshPgDatabase();
  const entry = { db, clients: [] as PostgresPort[] };
  opened.push(entry);
  return {
    url: db.url,
    client: () => {
      const port = new PostgresPort(db.url, { max: 2 });
      entry.clients.push(port);
      return port;
    },
  };
}
afterEach(async () => {
  for (const { db, clients } of opened.splice(0)) {
    for (const c of clients) await c.close();
    await db.drop();
  }
});

const ttl = (seconds: number) => ({ ttl: Temporal.Duration.from({ seconds }) });

const sqliteDirs: (() => void)[] = [];
afterEach(() => {
  for (const close of sqliteDirs.splice(0)) close();
});

const kinds = [
  {
    name: "PortKvStore on SQLite",
    skip: false,
    make: async (clock: ManualClock) => {
      const dir = mkdtempSync(join(tmpdir(), "rookery-kv-"));
      const db = openDatabase(dir);
      sqliteDirs.push(() => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return new PortKvStore(db.port, clock);
    },
  },
  { name: "PortKvStore on PostgreSQL", skip: !postgresAvailable, make: async (clock: ManualClock) => new PortKvStore((await database()).client(), clock) },
];

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`${kind.name}, as both stores behave`, () => {
    test("get, set, delete, prefix listing, expiry and compare-and-swap", async () => {
      const clock = new ManualClock(1_000_000);
      const kv = await kind.make(clock);
      await kv.set(["a", "b"], { x: 1 });
      await kv.set(["a", "c"], 2, ttl(10));
      await kv.set(["ab"], 3);
      expect(await kv.get(["a", "b"])).toEqual({ x: 1 });
      expect(await kv.get(["missing"])).toBeUndefined();
      const listed = [];
      for await (const entry of kv.list(["a"])) listed.push(entry);
      expect(listed).toEqual([
        { key: ["a", "b"], value: { x: 1 } },
        { key: ["a", "c"], value: 2 },
      ]);
      clock.advance(10_000);
      expect(await kv.get(["a", "c"])).toBeUndefined();
      expect(await kv.cas(["a", "b"], { x: 2 }, "no")).toBe(false);
      expect(await kv.get(["a", "b"])).toEqual({ x: 1 });
      expect(await kv.cas(["a", "b"], { x: 1 }, "yes")).toBe(true);
      expect(await kv.get(["a", "b"])).toBe("yes");
      expect(await kv.cas(["new"], undefined, 1)).toBe(true);
      expect(await kv.cas(["new"], undefined, 2)).toBe(false);
      expect(await kv.get(["new"])).toBe(1);
      await kv.delete(["a", "b"]);
      expect(await kv.get(["a", "b"])).toBeUndefined();
    });

    test("a listing matches the prefix's parts whole, LIKE's wildcards in a key are plain characters, and expired entries are left out", async () => {
      const clock = new ManualClock(1_000_000);
      const kv = await kind.make(clock);
      await kv.set(["50%", "x"], 1);
      await kv.set(["50_", "y"], 2);
      await kv.set(["500", "z"], 3);
      await kv.set(["a\\b", "w"], 4);
      await kv.set(["50%"], 5);
      await kv.set(["50%", "gone"], 6, ttl(1));
      clock.advance(1000);
      const list = async (prefix?: [string]) => {
        const out = [];
        for await (const entry of kv.list(prefix)) out.push(entry);
        return out;
      };
      // In the JSON text's byte order, as SQLite lists: `["50%",` sorts before `["50%"]`.
      expect(await list(["50%"])).toEqual([
        { key: ["50%", "x"], value: 1 },
        { key: ["50%"], value: 5 },
      ]);
      expect(await list(["a\\b"])).toEqual([{ key: ["a\\b", "w"], value: 4 }]);
      expect((await list()).map((e) => e.value)).toEqual([1, 5, 3, 2, 4]);
      expect(await kv.sweep()).toBe(1);
    });
  });
}

describe.skipIf(!postgresAvailable)("PortKvStore on PostgreSQL", () => {
  test("a set of the value already there writes nothing; a new value or a new expiry is written; an expired value is swapped as absent", async () => {
    const clock = new ManualClock(1_000_000);
    const port = (await database()).client();
    const kv = new PortKvStore(port, clock);
    // The row's xmin names the transaction that last wrote it.
    const version = async () => (await port.get<{ v: string }>("SELECT xmin::text AS v FROM fedify_kv"))!.v;
    await kv.set(["spec", "https://remote.example"], "rfc9421");
    const first = await version();
    await kv.set(["spec", "https://remote.example"], "rfc9421");
    expect(await version()).toBe(first);
    await kv.set(["spec", "https://remote.example"], "draft-cavage-http-signatures-12");
    const second = await version();
    expect(second).not.toBe(first);
    await kv.set(["spec", "https://remote.example"], "draft-cavage-http-signatures-12", ttl(10));
    expect(await version()).not.toBe(second);
    expect(await port.all("SELECT expires_at FROM fedify_kv")).toEqual([{ expires_at: 1_010_000 }]);
    clock.advance(10_000);
    expect(await kv.cas(["spec", "https://remote.example"], "draft-cavage-http-signatures-12", "x")).toBe(false);
    expect(await kv.cas(["spec", "https://remote.example"], undefined, "rfc9421")).toBe(true);
    expect(await kv.get(["spec", "https://remote.example"])).toBe("rfc9421");
    expect(await port.all("SELECT expires_at FROM fedify_kv")).toEqual([{ expires_at: null }]);
  });

  test("of many swaps from one value raced by two processes' connections, exactly one wins each round", async () => {
    const clock = new ManualClock(1_000_000);
    const db = await database();
    const a = new PortKvStore(db.client(), clock);
    const b = new PortKvStore(db.client(), clock);
    await a.set(["counter"], 0);
    for (let round = 0; round < 20; round++) {
      const tries = [a, b, a, b].map((kv, i) => kv.cas(["counter"], round, round + 1).then((won) => (won ? i : -1)));
      const winners = (await Promise.all(tries)).filter((i) => i >= 0);
      expect(winners.length).toBe(1);
    }
    expect(await b.get(["counter"])).toBe(20);
    // Two racing first writes of a key: one wins.
    const firsts = await Promise.all([a.cas(["fresh"], undefined, "a"), b.cas(["fresh"], undefined, "b")]);
    expect(firsts.filter(Boolean).length).toBe(1);
    expect(await a.get(["fresh"])).toBe(firsts[0] ? "a" : "b");
  });
});
