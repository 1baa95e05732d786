import { eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
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

  constructor(
    private port: DatabasePort,
    private clock: Clock,
  ) {
    const t = port.tables.tombstones;
    this.hasQuery = port.orm.select({ uri: t.uri }).from(t).where(eq(t.uri, sql.placeholder("uri"))).limit(1).prepare();
  }

  async has(uri: string): Promise<boolean> {
    return ((await this.hasQuery.execute({ uri })) as unknown[]).length > 0;
  }

  /** `accountId` deleted `uri`, an object of its own server (the caller has checked). */
  async add(uri: string, accountId: number): Promise<void> {
    await this.port.run("INSERT INTO tombstones (uri, account_id, created_at) VALUES (?, ?, ?) ON CONFLICT (uri) DO NOTHING", [uri, accountId, this.clock.now()]);
  }
}
