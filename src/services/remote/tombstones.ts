import type { Statement } from "bun:sqlite";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";

/**
 * The IRIs of remote statuses their authors deleted (Mastodon's Tombstone, the tombstones
 * table): a status so named is never stored again. An author's Create signed with a Linked
 * Data signature is believed whoever delivers it, so without these a relay delivering late,
 * or anyone who kept a copy, would bring a deleted post back; and a Delete that arrives before
 * its Create (relays do not keep order) keeps the post out too.
 */
export class Tombstones {
  private q: {
    has: Statement<{ one: number }, [string]>;
    add: Statement<unknown, [string, number, number]>;
  };

  constructor(
    db: Db,
    private clock: Clock,
  ) {
    const sqlite = db.$client;
    this.q = {
      has: sqlite.query("SELECT 1 AS one FROM tombstones WHERE uri = ?"),
      add: sqlite.query("INSERT INTO tombstones (uri, account_id, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (uri) DO NOTHING"),
    };
  }

  has(uri: string): boolean {
    return this.q.has.get(uri) !== null;
  }

  /** `accountId` deleted `uri`, an object of its own server (the caller has checked). */
  add(uri: string, accountId: number): void {
    this.q.add.run(uri, accountId, this.clock.now());
  }
}
