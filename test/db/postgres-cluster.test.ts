import { expect, test } from "bun:test";
import { SQL } from "bun";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import * as pg from "../../src/db/schema-pg/index.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";
import pgJournal from "../../migrations-pg/meta/_journal.json";

/**
 * The throwaway PostgreSQL of the tests (test/support/postgres.ts), and what the driver gives
 * back: each test's database is its own, and drizzle over Bun.SQL reads the generated schema's
 * ids and times as numbers, where a raw query gets int8 as a string.
 */

test.skipIf(!postgresAvailable)("each database is a fresh copy of the migrated template: what one test writes no other sees, and a dropped one is gone", async () => {
  const first = await freshPgDatabase();
  const second = await freshPgDatabase();
  const a = new SQL(first.url, { max: 1 });
  const b = new SQL(second.url, { max: 1 });
  try {
    await a`INSERT INTO instance_settings (key, value) VALUES ('description', 'first')`;
    expect(await a`SELECT value FROM instance_settings`).toEqual([{ value: "first" }]);
    expect(await b`SELECT value FROM instance_settings`).toEqual([]);
    // The template's migrations are recorded in each copy, so a migrator finds nothing to do.
    const [{ n }] = await b`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
    expect(n).toBe(pgJournal.entries.length);
    await a.close();
    await first.drop();
    expect(await b`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${first.name}`).toEqual([{ n: 0 }]);
  } finally {
    await a.close();
    await b.close();
    await first.drop();
    await second.drop();
  }
});

test.skipIf(!postgresAvailable)("drizzle over Bun.SQL reads ids and times as numbers and booleans as booleans; a raw query gets int8 as a string", async () => {
  const database = await freshPgDatabase();
  const client = new SQL(database.url, { max: 1 });
  try {
    const db = drizzle({ client, schema: pg });
    // An id past 2^31 and a time in milliseconds, as src/ids.ts and the clock make them.
    const id = 2 ** 52 + 7;
    await db.insert(pg.accounts).values({ id, username: "alice", createdAt: 1_764_000_000_000, locked: true });
    const [row] = await db.select({ id: pg.accounts.id, createdAt: pg.accounts.createdAt, locked: pg.accounts.locked, bot: pg.accounts.bot }).from(pg.accounts).where(eq(pg.accounts.id, id));
    expect(row).toEqual({ id, createdAt: 1_764_000_000_000, locked: true, bot: false });
    expect(await client`SELECT id FROM accounts`).toEqual([{ id: String(id) }]);
  } finally {
    await client.close();
    await database.drop();
  }
});
