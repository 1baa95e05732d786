import type { Context } from "@fedify/fedify";
import { isActor } from "@fedify/fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab-runtime";
import { OutgoingRefused, OutgoingTooLarge, type OutgoingHttp } from "../net/outgoing.ts";
import { FetchFailed, temporaryStatus, type RemoteFetcher } from "../services/remote/fetcher.ts";
import { lookup } from "./access.ts";
import { actorInput } from "./inbound/actor.ts";
import { isStatusObject, noteInput } from "./inbound/note.ts";
import { hasType, idOf } from "./inbound/quote-fields.ts";
import { threadReader } from "./thread-reader.ts";

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
}): RemoteFetcher {
  const { signedContext, outgoing, loader } = deps;
  const threads = threadReader(deps);
  return {
    thread: threads.thread,
    collection: threads.collection,
    // The signed loader keeps no cache: every lookup asks the actor's server.
    async actor(identifier, signal) {
      const c = await signedContext();
      // The documents as they came, for what Fedify's parser may not see in them (aliases.ts).
      const documents = new Map<string, unknown>();
      const load = c.documentLoader;
      const keeping: DocumentLoader = async (url, options) => {
        const remote = await load(url, options);
        documents.set(remote.documentUrl, remote.document);
        return remote;
      };
      const object = await lookup(Object.assign(c, { documentLoader: keeping }), outgoing, identifier, signal);
      if (!object || !isActor(object)) return null;
      return actorInput(object, loader, object.id ? documents.get(object.id.href) : undefined);
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
    // Read as Mastodon reads a stamp (VerifyQuoteService), from the JSON as served: Mastodon's
    // @context gives interactingObject and interactionTarget no "@type": "@id", so under
    // JSON-LD they are strings Fedify's QuoteAuthorization does not take for IRIs.
    async stamp(uri, signal) {
      let remote;
      try {
        remote = await loader(uri, { signal });
      } catch (e) {
        const status = (e as { response?: Response }).response?.status;
        if (status === 404 || status === 410) return null;
        // A host or address the outgoing module refuses, or a body too large, would be so again.
        const refused = [e, (e as { cause?: unknown }).cause].some((x) => x instanceof OutgoingRefused || x instanceof OutgoingTooLarge);
        throw new FetchFailed(String(e), !refused && temporaryStatus(status));
      }
      const doc = remote.document as Record<string, unknown> | null;
      if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return null;
      // What the quoted author's server serves at that very IRI, not a document elsewhere
      // (a redirect to another origin) or one that names another id.
      if (idOf(doc) !== uri || new URL(remote.documentUrl).origin !== new URL(uri).origin) return null;
      return {
        id: uri,
        isStamp: hasType(doc, "QuoteAuthorization"),
        attributedTo: idOf(doc.attributedTo),
        interactingObject: idOf(doc.interactingObject),
        interactionTarget: idOf(doc.interactionTarget),
      };
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
