import { log } from "../log.ts";
import type { OutgoingHttp } from "../net/outgoing.ts";

/**
 * What both queues (queue.ts on SQLite, pg-queue.ts on PostgreSQL) drop rather than handle, in
 * the one place every delivery and every queued incoming activity passes just before it is
 * handled:
 * - a delivery to a domain this server does not federate with (blocked, or off the allow
 *   list), and an incoming activity whose actor is on one (queued before the block was made);
 * - a delivery to an inbox at a loopback, private or link-local address (or a name that
 *   resolves to one), refused against SSRF. Fedify checks the addresses it fetches documents
 *   from, not the inbox URLs it posts to, and those come from remote actor documents.
 */
export class QueueGate {
  constructor(
    private readonly outgoing: OutgoingHttp,
    /** Domains this server does not federate with (FederationDomains.refuses). */
    private readonly refusesDomain: (url: string) => boolean,
    /**
     * Told of a delivery refused for its inbox's address, which Fedify never sees fail: it is
     * recorded as a failure of that host, so `federation status`, the relays list and the
     * health page show it rather than "ok".
     */
    private readonly onAddressRefused: (inbox: string, reason: string) => void,
  ) {}

  async refused(message: { type?: unknown; inbox?: unknown; activity?: unknown }): Promise<boolean> {
    if (message?.type === "inbox") {
      const actor = actorOf(message.activity);
      if (actor === null || !this.refusesDomain(actor)) return false;
      log("info", "federation: an activity from a refused domain dropped", { actor });
      return true;
    }
    if (message?.type !== "outbox" || typeof message.inbox !== "string") return false;
    if (this.refusesDomain(message.inbox)) {
      log("info", "federation: delivery to a refused domain dropped", { inbox: message.inbox });
      return true;
    }
    const refusal = await this.outgoing.refusal(message.inbox);
    if (refusal === null) return false;
    log("warn", "federation: delivery to a non-public inbox refused", { inbox: message.inbox, error: refusal });
    this.onAddressRefused(message.inbox, refusal);
    return true;
  }
}

/** The actor IRI of an activity as JSON (a string, an object with an id, or the first of a list). */
function actorOf(activity: unknown): string | null {
  if (typeof activity !== "object" || activity === null) return null;
  let actor = (activity as { actor?: unknown }).actor;
  if (Array.isArray(actor)) actor = actor[0];
  if (typeof actor === "string") return actor;
  if (typeof actor === "object" && actor !== null) {
    const id = (actor as { id?: unknown; "@id"?: unknown }).id ?? (actor as { "@id"?: unknown })["@id"];
    return typeof id === "string" ? id : null;
  }
  return null;
}

/**
 * A worker's idle wait, shared by both queues: it ends after `ms`, on `signal`'s abort, or when
 * `wake` (handed to `onWake` for an enqueue to call; null again once the wait ends) is called.
 */
export async function idleWait(ms: number, signal: AbortSignal | undefined, onWake: (wake: (() => void) | null) => void): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    const abort = () => done();
    signal?.addEventListener("abort", abort, { once: true });
    onWake(done);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
      resolve();
    }
  });
  onWake(null);
}
