import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { statuses, type StatusRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import type { RenderCache } from "./render-cache.ts";

const STATUS = rowReader(statuses);

/**
 * Deletes statuses with everything that hangs on them. Boosts of a deleted status go with
 * it; counters (statuses, replies, boosts) are set right; media stay, unattached, so a
 * delete-and-redraft can reuse them. Each removed status is announced with the home feeds
 * that held it, so streams can tell exactly those readers; counters and notifications
 * follow the announcement (src/services/consequences.ts).
 */
export class RemovalService {
  private readonly sql = {
    boosts: `SELECT ${STATUS.columns} ${STATUS.from} WHERE reblog_of_id = ?`,
    homeRecipients: "SELECT account_id FROM home_feed WHERE status_id = ?",
    listIds: "SELECT list_id FROM list_feed WHERE status_id = ?",
    remove: "DELETE FROM statuses WHERE id = ?",
  };

  constructor(
    private db: DatabasePort,
    private events: EventBus,
    private cache: RenderCache,
    /** Detaches a status's media before it goes (they start their grace period). */
    private media: { detachFrom(statusId: number): Promise<void> },
    /** Takes a quoting status's quote away before it goes (QuoteService.removing), so that what it counted is counted back. */
    private quotes: { removing(statusId: number): Promise<void> },
  ) {}

  async remove(row: StatusRow): Promise<void> {
    const removed: { row: StatusRow; homeRecipients: number[]; listIds: number[] }[] = [];
    await this.db.transaction(async () => {
      const boosts = row.reblogOfId === null ? (await this.db.values(this.sql.boosts, [row.id])).map(STATUS.map) : [];
      for (const target of [...boosts, row]) {
        const recipients = (await this.db.values(this.sql.homeRecipients, [target.id])).map((r) => r[0] as number);
        const listIds = (await this.db.values(this.sql.listIds, [target.id])).map((r) => r[0] as number);
        // Mentions, tags, favourites, bookmarks, pins, feed entries, notifications and the
        // poll go by foreign key; media are detached (ON DELETE SET NULL).
        await this.media.detachFrom(target.id);
        await this.quotes.removing(target.id);
        await this.db.run(this.sql.remove, [target.id]);
        removed.push({ row: target, homeRecipients: recipients, listIds });
      }
      // Counters and notifications follow each deletion, as listeners of the event.
      for (const { row: gone, homeRecipients, listIds } of removed) await this.events.emit({ type: "status.deleted", status: gone, homeRecipients, listIds });
    });
    for (const { row: gone } of removed) this.cache.invalidateStatus(gone.id);
  }
}
