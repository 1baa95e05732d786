import { AsyncLocalStorage } from "node:async_hooks";
import type { Federation, FederationFetchOptions } from "@fedify/fedify";
import type { DeliveredBy } from "../services/remote/relays.ts";

/**
 * Who carried an activity to the inbox: the actor whose HTTP signature the request bears.
 *
 * Fedify 2.3.6 takes an activity whose Linked Data Signature (or Object Integrity Proof)
 * verifies as its actor's without looking at the HTTP signature at all, and hands the listener
 * no request: a Create a relay forwards (the relay signs the request, the author the activity)
 * reaches the listener as if the author had sent it. Mastodon then believes it only when it
 * concerns someone here or came through a relay it subscribed to (requested_through_relay?,
 * the relay being the signer). So the request each inbox call handles is kept for the length
 * of that call, and its HTTP signature is checked (Fedify's own verification and key-owner
 * lookup, through our loaders: key-owners.ts, refused domains) only when a listener asks.
 * Without an embedded signature or proof that verifies, Fedify checks the HTTP signature
 * against the activity's actor and refuses a relay's (401): such an activity never gets here.
 */
export interface DeliveryRequests {
  /** Fedify's fetch, with the request it handles kept for the listeners it calls. */
  fetch(request: Request, options: FederationFetchOptions<void>): Promise<Response>;
  /** The signer of the request being handled, checked when asked; null outside an inbox call or unsigned. */
  deliveredBy(): DeliveredBy;
}

export function deliveryRequests(federation: Federation<void>): DeliveryRequests {
  const current = new AsyncLocalStorage<Request>();
  return {
    fetch: (request, options) => current.run(request, () => federation.fetch(request, options)),
    deliveredBy() {
      const request = current.getStore();
      let signer: ReturnType<DeliveredBy> | null = null;
      return () => {
        if (request === undefined) return Promise.resolve(null);
        signer ??= federation
          .createContext(request, undefined)
          .getSignedKeyOwner()
          .then((owner) =>
            owner?.id ? { uri: owner.id.href, inboxUrl: owner.inboxId?.href ?? null, sharedInboxUrl: owner.endpoints?.sharedInbox?.href ?? null } : null,
          )
          .catch(() => null);
        return signer;
      };
    },
  };
}
