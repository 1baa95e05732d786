import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { statuses } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { RemovalService } from "../statuses/removal.ts";

const STATUS = rowReader(statuses);

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
    private db: DatabasePort,
    /** Not on the port yet: synchronous, its writes join this transaction (SQLite's one connection). */
    private follows: Pick<FollowService, "removeFollow">,
    private removal: Pick<RemovalService, "remove">,
  ) {}

  async remove(accountId: number): Promise<void> {
    await this.db.transaction(async () => {
      const account = await this.db.get<{ domain: string | null }>("SELECT domain FROM accounts WHERE id = ?", [accountId]);
      if (!account || account.domain === null) return;
      const rows = (await this.db.values(`SELECT ${STATUS.columns} ${STATUS.from} WHERE account_id = ?`, [accountId])).map(STATUS.map);
      for (const row of rows) {
        // A boost of its that an earlier removal took along is gone already.
        if (await this.db.get("SELECT id FROM statuses WHERE id = ?", [row.id])) await this.removal.remove(row);
      }
      const pairs = await this.db.all<{ account_id: number; target_account_id: number }>(
        "SELECT account_id, target_account_id FROM follows WHERE account_id = ? OR target_account_id = ?",
        [accountId, accountId],
      );
      for (const pair of pairs) await this.follows.removeFollow(pair.account_id, pair.target_account_id);
      await this.db.run("DELETE FROM accounts WHERE id = ?", [accountId]);
    });
  }
}
