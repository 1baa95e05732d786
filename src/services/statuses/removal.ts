import { eq } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { homeFeed, listFeed, statuses, type StatusRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import type { RenderCache } from "./render-cache.ts";

/**
 * Deletes statuses with everything that hangs on them. Boosts of a deleted status go with
 * it; counters (statuses, replies, boosts) are set right; media stay, unattached, so a
 * delete-and-redraft can reuse them. Each removed status is announced with the home feeds
 * that held it, so streams can tell exactly those readers; counters and notifications
 * follow the announcement (src/services/consequences.ts).
 */
export class RemovalService {
  constructor(
    private db: Db,
    private events: EventBus,
    private cache: RenderCache,
    /** Detaches a status's media before it goes (they start their grace period). */
    private media: { detachFrom(statusId: number): void },
    /** Takes a quoting status's quote away before it goes (QuoteService.removing), so that what it counted is counted back. */
    private quotes: { removing(statusId: number): void },
  ) {}

  remove(row: StatusRow) {
    const removed: { row: StatusRow; homeRecipients: number[]; listIds: number[] }[] = [];
    this.db.transaction((tx) => {
      const boosts = row.reblogOfId === null ? tx.select().from(statuses).where(eq(statuses.reblogOfId, row.id)).all() : [];
      for (const target of [...boosts, row]) {
        const recipients = tx
          .select({ id: homeFeed.accountId })
          .from(homeFeed)
          .where(eq(homeFeed.statusId, target.id))
          .all()
          .map((r) => r.id);
        const listIds = tx
          .select({ id: listFeed.listId })
          .from(listFeed)
          .where(eq(listFeed.statusId, target.id))
          .all()
          .map((r) => r.id);
        // Mentions, tags, favourites, bookmarks, pins, feed entries, notifications and the
        // poll go by foreign key; media are detached (ON DELETE SET NULL).
        this.media.detachFrom(target.id);
        this.quotes.removing(target.id);
        tx.delete(statuses).where(eq(statuses.id, target.id)).run();
        removed.push({ row: target, homeRecipients: recipients, listIds });
      }
      // Counters and notifications follow each deletion, as listeners of the event.
      for (const { row: gone, homeRecipients, listIds } of removed) this.events.emit({ type: "status.deleted", status: gone, homeRecipients, listIds });
    });
    for (const { row: gone } of removed) this.cache.invalidateStatus(gone.id);
  }
}
