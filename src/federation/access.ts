import {
  getAuthenticatedDocumentLoader,
  kvCache,
  type Context,
  type HttpMessageSignaturesSpec,
  type HttpMessageSignaturesSpecDeterminer,
  type KvStore,
  type RequestContext,
} from "@fedify/fedify";
import { Endpoints, lookupObject, Person, Service, type Actor, type Object as ApObject } from "@fedify/fedify/vocab";
import { FetchError, getDocumentLoader, preloadedContexts, type AuthenticatedDocumentLoaderFactory, type DocumentLoader, type DocumentLoaderFactory } from "@fedify/vocab-runtime";
import type { Config } from "../config.ts";
import type { AccountRow } from "../db/schema.ts";
import type { OutgoingHttp } from "../net/outgoing.ts";
import { confirmingKeyOwners } from "./key-owners.ts";

/**
 * Who may fetch what from here, and how this server fetches from others: the instance actor,
 * Mastodon's secure mode (AUTHORIZED_FETCH) and the domains it does not federate with.
 */

/**
 * An account's actor as an unsigned fetch sees it in secure mode: "barebones technical
 * information" (Mastodon's restrict_fields_to: id, type, preferredUsername, inbox, endpoints
 * and the keys), enough to check the account's signatures, nothing of its profile.
 */
export async function bareActorOf(ctx: Context<void>, account: AccountRow): Promise<Person | Service> {
  const name = account.username;
  const keys = await ctx.getActorKeyPairs(name);
  const values = {
    id: ctx.getActorUri(name),
    preferredUsername: name,
    inbox: ctx.getInboxUri(name),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    publicKey: keys[0]?.cryptographicKey ?? null,
    assertionMethods: keys.map((k) => k.multikey),
  };
  return account.bot ? new Service(values) : new Person(values);
}

/** The actor whose key signed this GET, verified; null for an unsigned or badly signed one. */
export async function signerOf(ctx: RequestContext<void>): Promise<Actor | null> {
  return ctx.getSignedKeyOwner().catch(() => null);
}

export interface Loaders {
  documentLoaderFactory: DocumentLoaderFactory;
  contextLoaderFactory: DocumentLoaderFactory;
  /** Fetches signed by a given actor (Fedify checks a personal inbox's signatures with the recipient's). */
  authenticatedDocumentLoaderFactory: AuthenticatedDocumentLoaderFactory;
}

/**
 * The loaders behind every fetch Fedify makes for us (actors, keys while checking a
 * signature, objects named by activities, lookups). Each runs Fedify's own loader inside the
 * outgoing-HTTP module's scope, so that its requests are checked, pinned, capped and
 * deadlined there; Fedify is told private addresses are allowed, as its own check resolves the
 * name apart from the connection (the module's check is the one that holds). A document on a
 * domain this server does not federate with is never asked for, nor read from the cache;
 * under AUTHORIZED_FETCH, requests are signed by the instance actor so that servers in secure
 * mode answer them. Documents are cached in the key-value store as Fedify's own loaders cache
 * them. JSON-LD contexts are not signed: most are preloaded, the rest are public vocabulary.
 */
export function loadersOf(config: Config, kv: KvStore, outgoing: OutgoingHttp, refuses: (url: string) => boolean, instanceKey: () => Promise<{ keyId: URL; privateKey: CryptoKey }>): Loaders {
  const through =
    (loader: DocumentLoader): DocumentLoader =>
    (url, options) =>
      outgoing.run(() => loader(url, options));
  const plain = through(getDocumentLoader({ allowPrivateAddress: true }));
  let signing: DocumentLoader | null = null;
  const signed: DocumentLoader = async (url, options) => {
    signing ??= through(getAuthenticatedDocumentLoader(await instanceKey(), { allowPrivateAddress: true }));
    return signing(url, options);
  };
  const gated =
    (loader: DocumentLoader): DocumentLoader =>
    async (url, options) => {
      if (refuses(url)) throw new FetchError(url, `Not fetched: ${new URL(url).hostname} is a domain this server does not federate with.`);
      return loader(url, options);
    };
  const cached = (loader: DocumentLoader) => kvCache({ loader, kv, prefix: ["_fedify", "remoteDocument"] });
  // The preloaded contexts are tagged static, which lets jsonld.js keep them resolved between
  // documents instead of resolving them again for each of the several expansions every
  // incoming activity goes through (0.15-0.2 ms of CPU per activity, measured).
  const fromCache = cached(plain);
  const contextLoader: DocumentLoader = async (url, options) => {
    const document = await fromCache(url, options);
    return url in preloadedContexts ? ({ ...document, tag: "static" } as typeof document) : document;
  };
  // A key's claimed owner is asked whether the key is theirs before the key is believed
  // (key-owners.ts), on every document fetched, before it is cached.
  const confirming = (loader: DocumentLoader) => confirmingKeyOwners(loader, { owners: () => documentLoader, contextLoader });
  const documentLoader: DocumentLoader = gated(cached(confirming(config.authorizedFetch ? signed : plain)));
  return {
    documentLoaderFactory: () => documentLoader,
    contextLoaderFactory: () => contextLoader,
    authenticatedDocumentLoaderFactory: (identity) => gated(confirming(through(getAuthenticatedDocumentLoader(identity, { allowPrivateAddress: true, specDeterminer: rememberedSpecs(kv) })))),
  };
}

/**
 * Which signature spec each server took, in the key-value store where Fedify's deliveries keep
 * theirs: Fedify's own factory shares that memory between fetches and deliveries, a factory of
 * ours must hand it over, or every first request to a server that reads only draft-cavage
 * (GoToSocial) is a 401 and a second knock.
 */
function rememberedSpecs(kv: KvStore): HttpMessageSignaturesSpecDeterminer {
  const key = (origin: string) => ["_fedify", "httpMessageSignaturesSpec", origin] as const;
  return {
    determineSpec: async (origin) => (await kv.get<HttpMessageSignaturesSpec>(key(origin))) ?? "rfc9421",
    rememberSpec: (origin, spec) => kv.set(key(origin), spec),
  };
}

/**
 * Fedify's lookupObject (a URL, or `acct:` through WebFinger) through our loaders, and its
 * WebFinger requests through the outgoing-HTTP module (a refused domain is never asked, not
 * even by the WebFinger fallback for a URL). The federation's own `ctx.lookupObject` would not
 * do: Fedify takes the private-address check for WebFinger from its `allowPrivateAddress`
 * option, which cannot be set beside custom loaders.
 */
export function lookup(ctx: Context<void>, outgoing: OutgoingHttp, identifier: string, signal?: AbortSignal): Promise<ApObject | null> {
  const options = { documentLoader: ctx.documentLoader, contextLoader: ctx.contextLoader, signal, allowPrivateAddress: true };
  return outgoing.run(() => lookupObject(identifier, options as Parameters<typeof lookupObject>[1]));
}
