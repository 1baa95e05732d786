import { afterEach, describe, expect, test } from "bun:test";
import { PostgresPort } from "../../src/db/postgres-port.ts";
import type { StatusRow } from "../../src/db/schema.ts";
import type { StatusParts } from "../../src/models/views.ts";
import { RenderCache } from "../../src/services/statuses/render-cache.ts";
import { freshPgDatabase, postgresAvailable } from "../support/postgres.ts";

/**
 * The render cache on PostgreSQL, where reads do not wait for another request's transaction
 * (READ COMMITTED): a rendering filled from a row read before that transaction's COMMIT must
 * not outlive it. Seen as a favourite from another server never counted on the status's page
 * (test/federation/interactions.test.ts, in the PostgreSQL test mode).
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cacheOnPort() {
  const db = await freshPgDatabase();
  const port = new PostgresPort(db.url);
  cleanups.push(async () => {
    await port.close();
    await db.drop();
  });
  return { port, cache: new RenderCache(undefined, port) };
}

const parts = (favourites: number) => ({ favourites }) as unknown as StatusParts;
const row = (favourites: number) => ({ id: 1, accountId: 10, repliesCount: 0, reblogsCount: 0, favouritesCount: favourites, quotesCount: 0, editedAt: null }) as unknown as StatusRow;

describe.skipIf(!postgresAvailable)("the render cache on PostgreSQL", () => {
  test("an invalidation inside a transaction is made again at its commit: a rendering kept in between goes", async () => {
    const { port, cache } = await cacheOnPort();
    cache.set(1, 10, parts(0), row(0));
    await port.transaction(async () => {
      cache.invalidateStatus(1);
      expect(cache.get(1)).toBeUndefined();
      // Another request read the row before the COMMIT and keeps what it rendered.
      cache.set(1, 10, parts(0), row(0));
      expect(cache.get(1)).toEqual(parts(0));
    });
    expect(cache.get(1)).toBeUndefined();
  });

  test("a rendering of an older row than the one a request read is not used, and goes", async () => {
    const { cache } = await cacheOnPort();
    cache.set(1, 10, parts(0), row(0));
    expect(cache.get(1, row(0))).toEqual(parts(0));
    expect(cache.get(1, row(1))).toBeUndefined();
    // Dropped: even a request with the old row renders again.
    expect(cache.get(1, row(0))).toBeUndefined();
  });

  test("a rolled-back transaction's invalidation is not made again: what was kept meanwhile stays", async () => {
    const { port, cache } = await cacheOnPort();
    await expect(
      port.transaction(async () => {
        cache.invalidateStatus(1);
        cache.set(1, 10, parts(2), row(2));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(cache.get(1, row(2))).toEqual(parts(2));
  });
});
