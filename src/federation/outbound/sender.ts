import type { Recipient } from "@fedify/fedify/vocab";
import type { AccountRow } from "../../db/schema.ts";
import { log } from "../../log.ts";

/** Where a remote account is delivered to: its inbox, and its server's shared inbox if it has one. */
export const recipientOf = (account: AccountRow): Recipient => ({
  id: new URL(account.uri!),
  inboxId: new URL(account.inboxUrl!),
  endpoints: account.sharedInboxUrl ? { sharedInbox: new URL(account.sharedInboxUrl) } : null,
});

/**
 * Outgoing activities are prepared (recipients read, keys loaded, objects rendered) off the
 * write that caused them and then queued by Fedify; a failure is logged, never thrown at the
 * write. Sends given the same `orderingKey` are prepared one after another, in the order they
 * were set in motion: Fedify keeps the order of what it queued under one key, and a status's
 * Delete prepared faster than its Create (their recipients are read through the port, on
 * PostgreSQL over any connection of the pool) must not be queued first.
 */
export class Sender {
  /** Sends being prepared until their deliveries are queued: what idle() awaits. */
  private preparing = new Set<Promise<void>>();
  /** The last send set in motion under each ordering key, while it is being prepared. */
  private lastOf = new Map<string, Promise<void>>();

  readonly send = (what: string, work: () => Promise<void>, orderingKey?: string) => {
    const before = orderingKey === undefined ? undefined : this.lastOf.get(orderingKey);
    // `before` never rejects (its failure was logged); with nothing before, the work starts at once, as it did.
    const p = (before ? before.then(work) : work()).catch((e) => log("warn", `federation: sending ${what} failed`, { error: String(e).split("\n")[0] }));
    this.preparing.add(p);
    if (orderingKey !== undefined) this.lastOf.set(orderingKey, p);
    void p.finally(() => {
      this.preparing.delete(p);
      if (orderingKey !== undefined && this.lastOf.get(orderingKey) === p) this.lastOf.delete(orderingKey);
    });
  };

  /** Resolves once every send set in motion so far has put its deliveries in the queue. */
  async idle() {
    while (this.preparing.size > 0) await Promise.all([...this.preparing]);
  }
}
