import type { SQL } from "bun";
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";
import type { Clock } from "../clock.ts";

/**
 * Fedify's key-value store in PostgreSQL, over the table fedify_kv that SQLite has (kv.ts): keys
 * are the JSON of their parts, values JSON text, expiry epoch ms of the server's clock (the
 * same clock the SQLite store uses, so `rookery migrate-to-postgres` copies rows as they are).
 * Several processes share it: compare-and-swap is one statement, never a read then a write.
 */
export class PgKvStore implements KvStore {
  constructor(
    private readonly sql: SQL,
    private readonly clock: Clock,
  ) {}

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const k = JSON.stringify(key);
    const [row] = await this.sql<{ value: string; expires_at: string | null }[]>`SELECT value, expires_at FROM fedify_kv WHERE key = ${k}`;
    if (!row) return undefined;
    const now = this.clock.now();
    if (row.expires_at !== null && Number(row.expires_at) <= now) {
      // Only if still expired: another process may have set it again since it was read.
      await this.sql`DELETE FROM fedify_kv WHERE key = ${k} AND expires_at <= ${now}`;
      return undefined;
    }
    return JSON.parse(row.value) as T;
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    const expiresAt = this.expiry(options);
    // A set that changes nothing writes nothing (as in kv.ts): Fedify sets the same signature
    // spec after every delivery to an inbox, and a rewritten row is a dead tuple and WAL apiece.
    await this.sql`
      INSERT INTO fedify_kv (key, value, expires_at) VALUES (${JSON.stringify(key)}, ${JSON.stringify(value)}, ${expiresAt})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
      WHERE fedify_kv.value IS DISTINCT FROM excluded.value OR fedify_kv.expires_at IS DISTINCT FROM excluded.expires_at`;
  }

  async delete(key: KvKey): Promise<void> {
    await this.sql`DELETE FROM fedify_kv WHERE key = ${JSON.stringify(key)}`;
  }

  /**
   * Compare-and-swap, atomic across processes: one statement whose condition PostgreSQL checks
   * again on the row it locks, so of two racing swaps from the same value one wins. Values are
   * compared as kv.ts compares them, by their JSON text (every value here was written as
   * JSON.stringify made it).
   */
  async cas(key: KvKey, expectedValue: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const k = JSON.stringify(key);
    const now = this.clock.now();
    const expiresAt = this.expiry(options);
    const next = JSON.stringify(newValue);
    const expected = JSON.stringify(expectedValue);
    // Nothing there (or only an expired value) is what "expected undefined" means.
    const rows =
      expected === undefined
        ? await this.sql`
            INSERT INTO fedify_kv (key, value, expires_at) VALUES (${k}, ${next}, ${expiresAt})
            ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
            WHERE fedify_kv.expires_at IS NOT NULL AND fedify_kv.expires_at <= ${now}
            RETURNING 1 AS swapped`
        : await this.sql`
            UPDATE fedify_kv SET value = ${next}, expires_at = ${expiresAt}
            WHERE key = ${k} AND value = ${expected} AND (expires_at IS NULL OR expires_at > ${now})
            RETURNING 1 AS swapped`;
    return rows.length > 0;
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const now = this.clock.now();
    // COLLATE "C": the byte order SQLite lists in, whatever the database's own collation.
    const rows: { key: string; value: string }[] = prefix
      ? await this.sql`
          SELECT key, value FROM fedify_kv
          WHERE (key = ${JSON.stringify(prefix)} OR key LIKE ${`${escapeLike(JSON.stringify(prefix).slice(0, -1))},%`} ESCAPE '\\')
            AND (expires_at IS NULL OR expires_at > ${now})
          ORDER BY key COLLATE "C"`
      : await this.sql`SELECT key, value FROM fedify_kv WHERE expires_at IS NULL OR expires_at > ${now} ORDER BY key COLLATE "C"`;
    for (const row of rows) yield { key: JSON.parse(row.key) as KvKey, value: JSON.parse(row.value) };
  }

  /** Drops expired entries (for the hourly maintenance), answering how many. */
  async sweep(): Promise<number> {
    const rows = await this.sql`DELETE FROM fedify_kv WHERE expires_at IS NOT NULL AND expires_at <= ${this.clock.now()} RETURNING 1`;
    return rows.length;
  }

  private expiry(options?: KvStoreSetOptions): number | null {
    return options?.ttl ? this.clock.now() + options.ttl.total("millisecond") : null;
  }
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
