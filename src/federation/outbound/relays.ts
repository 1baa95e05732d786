import type { Context } from "@fedify/fedify";
import { Follow, PUBLIC_COLLECTION, Undo, type Recipient } from "@fedify/fedify/vocab";
import type { RelayRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import type { Outbound } from "./index.ts";

/**
 * Where a relay is delivered to: its inbox. Fedify delivers only to recipients with an id; a
 * Mastodon relay's actor is not known before its Accept, and its inbox stands in for it.
 */
export const relayRecipient = (relay: RelayRow): Recipient => ({
  id: new URL(relay.actorUri ?? relay.inboxUrl),
  inboxId: new URL(relay.inboxUrl),
  endpoints: null,
});

/**
 * The instance actor's Follow of a relay, as Mastodon's Relay#enable! sends it to a Mastodon
 * relay (its object the Public collection) and Pleroma follows a LitePub relay (its object the
 * relay's actor); an unsubscription is Undo of that Follow (Relay#disable!). Both are signed
 * by the instance actor and go through the delivery queue (retries, restarts).
 */
export function relaySubscriptions(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { context: ctx, instanceIdentifier, sender } = out;
  const followOf = (c: Context<void>, relay: RelayRow) =>
    new Follow({
      id: new URL(relay.followActivityId),
      actor: c.getActorUri(instanceIdentifier),
      object: relay.kind === "litepub" && relay.actorUri ? new URL(relay.actorUri) : PUBLIC_COLLECTION,
    });

  events.afterCommit("relay.subscribed", (e) => {
    const c = ctx();
    const follow = followOf(c, e.relay);
    sender.send("Follow of a relay", () => c.sendActivity({ identifier: instanceIdentifier }, relayRecipient(e.relay), follow, { orderingKey: `relay:${e.relay.url}` }));
  });

  events.afterCommit("relay.unsubscribed", (e) => {
    const c = ctx();
    const follow = followOf(c, e.relay);
    const undo = new Undo({ id: new URL(`${e.relay.followActivityId}/undo`), actor: follow.actorId, object: follow });
    sender.send("Undo of a relay's Follow", () => c.sendActivity({ identifier: instanceIdentifier }, relayRecipient(e.relay), undo, { orderingKey: `relay:${e.relay.url}` }));
  });
}
