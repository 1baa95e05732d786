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
 * Outgoing activities are prepared (keys loaded, objects rendered) off the write that caused
 * them and then queued by Fedify; a failure is logged, never thrown at the write.
 */
export class Sender {
  /** Sends being prepared until their deliveries are queued: what idle() awaits. */
  private preparing = new Set<Promise<void>>();

  readonly send = (what: string, work: () => Promise<void>) => {
    const p = work().catch((e) => log("warn", `federation: sending ${what} failed`, { error: String(e).split("\n")[0] }));
    this.preparing.add(p);
    void p.finally(() => this.preparing.delete(p));
  };

  /** Resolves once every send set in motion so far has put its deliveries in the queue. */
  async idle() {
    while (this.preparing.size > 0) await Promise.all([...this.preparing]);
  }
}
