import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";

// A set that changes nothing writes nothing: Fedify remembers which signature spec an inbox's
// server took after every delivery to it, the same value each time, and rewriting the row
// dirtied a page and made a commit of its own per delivery (a dead tuple and WAL on PostgreSQL).
const SET = `INSERT INTO fedify_kv (key, value, expires_at) VALUES (?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
  WHERE fedify_kv.value IS DISTINCT FROM excluded.value OR fedify_kv.expires_at IS DISTINCT FROM excluded.expires_at`;
// Compare-and-swap in one statement, never a read then a write: the port awaits between
// statements (another flow may write in between), and several processes may share PostgreSQL,
// which checks the condition again on the row it locks. Nothing there, or only an expired
// value, is what "expected undefined" means.
const SWAP_ABSENT = `INSERT INTO fedify_kv (key, value, expires_at) VALUES (?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
  WHERE fedify_kv.expires_at IS NOT NULL AND fedify_kv.expires_at <= ?`;
const SWAP = "UPDATE fedify_kv SET value = ?, expires_at = ? WHERE key = ? AND value = ? AND (expires_at IS NULL OR expires_at > ?)";

/**
 * Fedify's key-value store in Rookery's own database (table fedify_kv, made by migration
 * 0010), so that one database holds everything, on SQLite or PostgreSQL through the port. Keys
 * are stored as the JSON of their parts; a prefix listing matches the JSON text up to the last
 * part. Values are compared by their JSON text (every value here was written as JSON.stringify
 * made it).
 */
export class PortKvStore implements KvStore {
  /** The order SQLite lists in (bytes), whatever the PostgreSQL database's own collation. */
  private readonly byteOrder: string;

  constructor(
    private readonly db: DatabasePort,
    private readonly clock: Clock,
  ) {
    this.byteOrder = db.dialect === "postgres" ? ' COLLATE "C"' : "";
  }

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const k = JSON.stringify(key);
    const row = await this.db.get<{ value: string; expires_at: number | null }>("SELECT value, expires_at FROM fedify_kv WHERE key = ?", [k]);
    if (!row) return undefined;
    const now = this.clock.now();
    if (row.expires_at !== null && row.expires_at <= now) {
      // Only if still expired: it may have been set again since it was read.
      await this.db.run("DELETE FROM fedify_kv WHERE key = ? AND expires_at <= ?", [k, now]);
      return undefined;
    }
    return JSON.parse(row.value) as T;
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    await this.db.run(SET, [JSON.stringify(key), JSON.stringify(value), this.expiry(options)]);
  }

  async delete(key: KvKey): Promise<void> {
    await this.db.run("DELETE FROM fedify_kv WHERE key = ?", [JSON.stringify(key)]);
  }

  async cas(key: KvKey, expectedValue: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const k = JSON.stringify(key);
    const now = this.clock.now();
    const next = JSON.stringify(newValue);
    const expected = JSON.stringify(expectedValue);
    const changed =
      expected === undefined
        ? await this.db.run(SWAP_ABSENT, [k, next, this.expiry(options), now])
        : await this.db.run(SWAP, [next, this.expiry(options), k, expected, now]);
    return changed > 0;
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const now = this.clock.now();
    const rows = prefix
      ? await this.db.all<{ key: string; value: string }>(
          `SELECT key, value FROM fedify_kv WHERE (key = ? OR key LIKE ? ESCAPE '\\') AND (expires_at IS NULL OR expires_at > ?) ORDER BY key${this.byteOrder}`,
          [JSON.stringify(prefix), `${escapeLike(JSON.stringify(prefix).slice(0, -1))},%`, now],
        )
      : await this.db.all<{ key: string; value: string }>(
          `SELECT key, value FROM fedify_kv WHERE expires_at IS NULL OR expires_at > ? ORDER BY key${this.byteOrder}`,
          [now],
        );
    for (const row of rows) yield { key: JSON.parse(row.key) as KvKey, value: JSON.parse(row.value) };
  }

  /** Drops expired entries (called by the hourly maintenance), answering how many. */
  sweep(): Promise<number> {
    return this.db.run("DELETE FROM fedify_kv WHERE expires_at IS NOT NULL AND expires_at <= ?", [this.clock.now()]);
  }

  private expiry(options?: KvStoreSetOptions): number | null {
    return options?.ttl ? this.clock.now() + options.ttl.total("millisecond") : null;
  }
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
