import type { Statement } from "bun:sqlite";
import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import type { DatabasePort } from "../../db/port.ts";

/**
 * The IRIs of remote statuses their authors deleted (Mastodon's Tombstone, the tombstones
 * table): a status so named is never stored again. An author's Create signed with a Linked
 * Data signature is believed whoever delivers it, so without these a relay delivering late,
 * or anyone who kept a copy, would bring a deleted post back; and a Delete that arrives before
 * its Create (relays do not keep order) keeps the post out too.
 */
export class Tombstones {
  /** Asked for every remote post stored: prepared once. */
  private hasQuery;
  /** `add` stays synchronous: RemoteNotes.deleted (not yet converted) runs it for the inbox's Delete. */
  private addQuery: Statement<unknown, [string, number, number]>;

  constructor(
    port: DatabasePort,
    db: Db,
    private clock: Clock,
  ) {
    const t = port.tables.tombstones;
    this.hasQuery = port.orm.select({ uri: t.uri }).from(t).where(eq(t.uri, sql.placeholder("uri"))).limit(1).prepare();
    this.addQuery = db.$client.query("INSERT INTO tombstones (uri, account_id, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (uri) DO NOTHING");
  }

  async has(uri: string): Promise<boolean> {
    return ((await this.hasQuery.execute({ uri })) as unknown[]).length > 0;
  }

  /** `accountId` deleted `uri`, an object of its own server (the caller has checked). */
  add(uri: string, accountId: number): void {
    this.addQuery.run(uri, accountId, this.clock.now());
  }
}
