import type { Database, Statement } from "bun:sqlite";
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";
import type { Clock } from "../clock.ts";

/**
 * Fedify's key-value store in Rookery's own database (table fedify_kv, made by migration
 * 0010), so that one file holds everything. Keys are stored as the JSON of their parts;
 * a prefix listing matches the JSON text up to the last part.
 */
export class SqliteKvStore implements KvStore {
  private readonly getStmt: Statement<{ value: string; expires_at: number | null }, [string]>;
  private readonly setStmt: Statement<unknown, [string, string, number | null]>;
  private readonly deleteStmt: Statement<unknown, [string]>;
  private readonly casStmt: Statement<unknown, [string, string, number | null]>;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
  ) {
    this.getStmt = sqlite.query("SELECT value, expires_at FROM fedify_kv WHERE key = ?");
    // A set that changes nothing writes nothing: Fedify remembers which signature spec an
    // inbox's server took after every delivery to it, the same value each time, and rewriting
    // the row dirtied a page and made a commit of its own per delivery.
    this.setStmt = sqlite.query(
      `INSERT INTO fedify_kv (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
       WHERE value IS NOT excluded.value OR expires_at IS NOT excluded.expires_at`,
    );
    this.deleteStmt = sqlite.query("DELETE FROM fedify_kv WHERE key = ?");
    this.casStmt = this.setStmt;
  }

  private live(key: KvKey): { value: string } | null {
    const row = this.getStmt.get(JSON.stringify(key));
    if (!row) return null;
    if (row.expires_at !== null && row.expires_at <= this.clock.now()) {
      this.deleteStmt.run(JSON.stringify(key));
      return null;
    }
    return row;
  }

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const row = this.live(key);
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    const ttl = options?.ttl ? options.ttl.total("millisecond") : null;
    this.setStmt.run(JSON.stringify(key), JSON.stringify(value), ttl === null ? null : this.clock.now() + ttl);
  }

  async delete(key: KvKey): Promise<void> {
    this.deleteStmt.run(JSON.stringify(key));
  }

  /** Compare-and-swap; atomic because bun:sqlite runs it synchronously on the one thread. */
  async cas(key: KvKey, expectedValue: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const row = this.live(key);
    const current = row ? JSON.parse(row.value) : undefined;
    if (JSON.stringify(current) !== JSON.stringify(expectedValue)) return false;
    const ttl = options?.ttl ? options.ttl.total("millisecond") : null;
    this.casStmt.run(JSON.stringify(key), JSON.stringify(newValue), ttl === null ? null : this.clock.now() + ttl);
    return true;
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const now = this.clock.now();
    const rows = prefix
      ? this.sqlite
          .query<{ key: string; value: string }, [string, string, number]>(
            "SELECT key, value FROM fedify_kv WHERE (key = ? OR key LIKE ? ESCAPE '\\') AND (expires_at IS NULL OR expires_at > ?) ORDER BY key",
          )
          .all(JSON.stringify(prefix), `${escapeLike(JSON.stringify(prefix).slice(0, -1))},%`, now)
      : this.sqlite
          .query<{ key: string; value: string }, [number]>("SELECT key, value FROM fedify_kv WHERE expires_at IS NULL OR expires_at > ? ORDER BY key")
          .all(now);
    for (const row of rows) yield { key: JSON.parse(row.key) as KvKey, value: JSON.parse(row.value) };
  }

  /** Drops expired entries (called by the hourly maintenance). */
  sweep(): number {
    return this.sqlite.query("DELETE FROM fedify_kv WHERE expires_at IS NOT NULL AND expires_at <= ?").run(this.clock.now()).changes;
  }
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
