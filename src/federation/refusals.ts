import type { InboxListenerSetters, KvKey, KvStore } from "@fedify/fedify";

/**
 * A domain this server does not federate with (blocked, or off the allow list under
 * WHITELIST_MODE) is not heard, whatever it signs and however it dresses the request. The
 * edge refuses a request naming its keys early (src/http/federation-gate.ts); what is taken
 * is decided here, on what Fedify verified.
 */

/** Fedify's entries for a key or a document it fetched: the URL is the entry's last part. */
const CACHES = [
  ["_fedify", "publicKey"],
  ["_fedify", "remoteDocument"],
];

function cachedUrl(key: KvKey): string | null {
  if (!CACHES.some(([a, b]) => key[0] === a && key[1] === b)) return null;
  const url = key[key.length - 1];
  return typeof url === "string" ? url : null;
}

/**
 * Fedify's store as signature checks read it: a key (or document) of a refused domain is not
 * there. Fedify keeps the keys it fetched without end and verifies with them without asking
 * again; they are dropped when a rule is made (FederationDomains), and this covers the rest (a
 * key cached by a fetch under way as the rule was made, keys kept from before WHITELIST_MODE
 * was turned on): the key is asked for again, through the loaders, which refuse it. Nothing a
 * refused domain signs, in its headers or inside the activity (Linked Data Signatures, Object
 * Integrity Proofs), verifies.
 */
export function withoutRefusedKeys(kv: KvStore, refuses: (url: string) => boolean): KvStore {
  return {
    get: <T>(key: KvKey) => {
      const url = cachedUrl(key);
      return url !== null && refuses(url) ? Promise.resolve(undefined) : kv.get<T>(key);
    },
    set: (key, value, options) => kv.set(key, value, options),
    delete: (key) => kv.delete(key),
    cas: kv.cas ? (key, expected, value, options) => kv.cas!(key, expected, value, options) : undefined,
    list: (prefix) => kv.list(prefix),
  };
}

/**
 * The inbox listeners, each behind one check: an activity whose actor is on a refused domain
 * is dropped (202, nothing stored), as Mastodon drops what a suspended account sends. Fedify has
 * verified that the key which signed it (or its Linked Data Signature, or its proof) is the
 * actor's, and the actor confirmed the key (key-owners.ts), so this is the verified signer's
 * domain: its keys being refused (above), this is a second line, for an activity verified by
 * a key cached as a rule was being made.
 */
export function refusingActors(inbox: InboxListenerSetters<void>, refuses: (url: URL) => boolean, received: () => void = () => {}): InboxListenerSetters<void> {
  const setters: InboxListenerSetters<void> = {
    on: (type, listener) => {
      inbox.on(type, async (ctx, activity) => {
        if (activity.actorIds.some(refuses)) return;
        // Counted here, where every taken activity passes once (the health page's inbox rate).
        received();
        await listener(ctx, activity);
      });
      return setters;
    },
    onError: (handler) => (inbox.onError(handler), setters),
    onUnverifiedActivity: (handler) => (inbox.onUnverifiedActivity(handler), setters),
    setSharedKeyDispatcher: (dispatcher) => (inbox.setSharedKeyDispatcher(dispatcher), setters),
    withIdempotency: (strategy) => (inbox.withIdempotency(strategy), setters),
  };
  return setters;
}
