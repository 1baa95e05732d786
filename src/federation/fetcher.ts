import type { Context } from "@fedify/fedify";
import { isActor } from "@fedify/fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab-runtime";
import type { OutgoingHttp } from "../net/outgoing.ts";
import type { RemoteFetcher } from "../services/remote/fetcher.ts";
import { lookup } from "./access.ts";
import { actorInput } from "./inbound/actor.ts";
import { isStatusObject, noteInput } from "./inbound/note.ts";

/**
 * The services' RemoteFetcher: lookups (a URL, or `acct:` through WebFinger) signed by the
 * instance actor, through the outgoing-HTTP module, read into plain inputs. Fedify drops a
 * document whose id is on another origin than the URL it was fetched from.
 */
export function remoteFetcher(deps: {
  /** A context whose loader signs as the instance actor. */
  signedContext: () => Promise<Context<void>>;
  outgoing: OutgoingHttp;
  /** Reads what an actor document only links to (signed, as every fetch). */
  loader: DocumentLoader;
  /** Drops a URL's document from the cache of fetched documents (for a fresh fetch). */
  forget: (url: string) => Promise<void>;
}): RemoteFetcher {
  const { signedContext, outgoing, loader } = deps;
  return {
    async actor(identifier, signal, options) {
      const c = await signedContext();
      if (options?.fresh && /^https?:/i.test(identifier)) await deps.forget(identifier);
      let object = await lookup(c, outgoing, identifier, signal);
      // A handle leads to its IRI through WebFinger (never cached); the document there is asked again.
      if (options?.fresh && object?.id && !/^https?:/i.test(identifier)) {
        await deps.forget(object.id.href);
        object = await lookup(c, outgoing, object.id.href, signal);
      }
      return object && isActor(object) ? actorInput(object, loader) : null;
    },
    async object(url, signal) {
      const c = await signedContext();
      const object = await lookup(c, outgoing, url, signal);
      if (object && isActor(object)) {
        const actor = actorInput(object, loader);
        return actor && { actor };
      }
      if (!isStatusObject(object)) return null;
      const note = noteInput(c, object, loader);
      return note && { note };
    },
    // Through Fedify's loader (signed): its refusal of private addresses holds for this too.
    async gone(uri) {
      try {
        await loader(uri);
        return false;
      } catch (e) {
        const status = (e as { response?: Response }).response?.status;
        return status === 404 || status === 410;
      }
    },
  };
}
