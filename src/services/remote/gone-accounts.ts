import { eq, or } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { accounts, follows, statuses } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { RemovalService } from "../statuses/removal.ts";

/**
 * A remote account that deleted itself (Delete of its actor), removed here as Mastodon's
 * DeleteAccountService removes a remote one: its statuses leave every timeline and stream,
 * its follows both ways end (counters kept right), and the account goes with everything that
 * still names it (favourites, notifications, mentions: the schema's cascades). One
 * transaction: what is told to the outside after it (follow.removed) finds the account gone
 * and sends nothing to a server that has forgotten it.
 */
export class GoneAccounts {
  constructor(
    private db: Db,
    private follows: FollowService,
    private removal: RemovalService,
  ) {}

  remove(accountId: number): void {
    this.db.transaction((tx) => {
      const account = tx.select({ domain: accounts.domain }).from(accounts).where(eq(accounts.id, accountId)).get();
      if (!account || account.domain === null) return;
      for (const row of tx.select().from(statuses).where(eq(statuses.accountId, accountId)).all()) {
        // A boost of its that an earlier removal took along is gone already.
        if (tx.select({ id: statuses.id }).from(statuses).where(eq(statuses.id, row.id)).get()) this.removal.remove(row);
      }
      const pairs = tx
        .select({ accountId: follows.accountId, targetId: follows.targetAccountId })
        .from(follows)
        .where(or(eq(follows.accountId, accountId), eq(follows.targetAccountId, accountId)))
        .all();
      for (const pair of pairs) this.follows.removeFollow(pair.accountId, pair.targetId);
      tx.delete(accounts).where(eq(accounts.id, accountId)).run();
    });
  }
}
