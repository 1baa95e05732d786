import type { Context } from "@fedify/fedify";
import { Collection, CollectionPage, Create, type Object as ApObject } from "@fedify/fedify/vocab";
import { FetchError, type DocumentLoader } from "@fedify/vocab-runtime";
import type { OutgoingHttp } from "../net/outgoing.ts";
import type { RemoteItem, RemotePages, RemoteThreadNode } from "../services/remote/inputs.ts";
import { lookup } from "./access.ts";
import { isStatusObject, noteInput } from "./inbound/note.ts";

/**
 * Items read of one collection page at most. A page listing more (a server offering 10,000
 * replies on one page) is read this far; the services bound what they fetch of them again.
 */
const MAX_PAGE_ITEMS = 500;

/**
 * Reading threads and collections of other servers for the services (fetcher.ts): a status with
 * its `replies` and `context` collections, and collections read a page at a time. Every request
 * goes through the context's loader (signed by the instance actor, through the outgoing-HTTP
 * module). An item embedded in a page is read as it is only when Fedify trusts it (its IRI on
 * the origin of the document it came in); any other is named by its IRI, to be fetched from
 * its own server, which alone speaks for it.
 */
export function threadReader(deps: { signedContext: () => Promise<Context<void>>; outgoing: OutgoingHttp; loader: DocumentLoader }) {
  const { signedContext, outgoing, loader } = deps;
  const options = (c: Context<void>, documentLoader: DocumentLoader = c.documentLoader) => ({ documentLoader, contextLoader: c.contextLoader, suppressError: true });
  // For items embedded in a page: what is only named is not fetched here (it is fetched by its
  // IRI if the services want it).
  const embeddedOnly: DocumentLoader = async (url) => {
    throw new FetchError(url, "named, not embedded");
  };

  /** A status object (or a Create of one) as a thread node; `fetching` false: nothing is fetched for it. */
  async function nodeOf(c: Context<void>, object: unknown, fetching: boolean): Promise<RemoteThreadNode | null> {
    let status = object;
    if (status instanceof Create) status = await status.getObject(options(c, fetching ? c.documentLoader : embeddedOnly));
    if (!isStatusObject(status)) return null;
    const note = noteInput(c, status, loader);
    if (!note) return null;
    const found = status;
    const contextUri = found.contextIds[0]?.href ?? null;
    return {
      note,
      // None named: the first read finds no collection, and asks no one.
      replies: pagesOf(c, () => found.getReplies(options(c))),
      contextUri,
      context: contextUri !== null && /^https?:/.test(contextUri) ? pagesOf(c, async () => collectionAt(c, contextUri)) : null,
    };
  }

  async function collectionAt(c: Context<void>, url: string, signal?: AbortSignal): Promise<Collection | null> {
    const found = await lookup(c, outgoing, url, signal).catch(() => null);
    return found instanceof Collection ? found : null;
  }

  /**
   * A collection read page by page: its first page (or its own items when it has no pages),
   * then each `next`, until a page names none, or one already read (a loop).
   */
  function pagesOf(c: Context<void>, load: () => Promise<Collection | null>): RemotePages {
    let current: Collection | null | undefined;
    const seen = new Set<string>();
    return {
      async nextPage() {
        if (current === null) return null;
        let page: Collection | null;
        if (current === undefined) {
          const collection = await load().catch(() => null);
          page = collection && collection.firstId !== null ? await collection.getFirst(options(c)).catch(() => null) : collection;
        } else {
          page = current instanceof CollectionPage && current.nextId !== null ? await current.getNext(options(c)).catch(() => null) : null;
        }
        if (page?.id) {
          if (seen.has(page.id.href)) page = null;
          else seen.add(page.id.href);
        }
        current = page;
        if (!page) return null;
        const items = await itemsOf(c, page);
        // An empty page that names no next is no page: the collection is empty, or over.
        if (items.length === 0 && !(page instanceof CollectionPage && page.nextId !== null)) {
          current = null;
          return null;
        }
        return items;
      },
    };
  }

  /** A page's items: embedded ones Fedify trusts read as they are, the rest by IRI; boosts and other activities left out. */
  async function itemsOf(c: Context<void>, page: Collection): Promise<RemoteItem[]> {
    const ids = page.itemIds.slice(0, MAX_PAGE_ITEMS);
    // What each embedded item stands for: a status read as it is, a Create's object named by
    // its IRI (when it is not embedded with it), or nothing (a boost, another activity).
    const embedded = new Map<string, RemoteItem | null>();
    let read = 0;
    for await (const item of page.getItems(options(c, embeddedOnly))) {
      if (++read > MAX_PAGE_ITEMS) break;
      const object = item as ApObject;
      if (!object.id) continue;
      const node = await nodeOf(c, object, false);
      const named = object instanceof Create && object.objectId !== null ? object.objectId.href : null;
      embedded.set(object.id.href, node ? { uri: node.note.uri, embedded: node } : named ? { uri: named, embedded: null } : null);
    }
    return ids.flatMap((id): RemoteItem[] => {
      if (!embedded.has(id.href)) return [{ uri: id.href, embedded: null }];
      const item = embedded.get(id.href);
      return item ? [item] : [];
    });
  }

  return {
    async thread(uri: string, signal?: AbortSignal): Promise<RemoteThreadNode | null> {
      const c = await signedContext();
      const object = await lookup(c, outgoing, uri, signal);
      return nodeOf(c, object, true);
    },
    async collection(url: string, signal?: AbortSignal): Promise<RemotePages | null> {
      const c = await signedContext();
      const collection = await collectionAt(c, url, signal);
      return collection ? pagesOf(c, async () => collection) : null;
    },
  };
}

