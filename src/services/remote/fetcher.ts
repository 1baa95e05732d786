import type { OutgoingHttp } from "../../net/outgoing.ts";
import type { TrafficCounter } from "../admin/traffic.ts";
import type { RemoteActorInput, RemoteNoteInput, RemotePages, RemoteStampInput, RemoteThreadNode } from "./inputs.ts";

/**
 * What the services ask of other servers, implemented by src/federation (absent while
 * FEDERATION=off: nothing is fetched). Every fetch is signed by the instance actor and goes
 * through the outgoing-HTTP module: refused domains and private addresses are never asked.
 */
export interface RemoteFetcher {
  /**
   * An actor by its IRI, or by `acct:user@domain` through WebFinger; null when it is none or
   * cannot be had. Asked of its server each time, never read from a cache: what a move is
   * checked against (the new account's aliases) is as it is this moment.
   */
  actor(uriOrAcct: string, signal?: AbortSignal): Promise<RemoteActorInput | null>;
  /** What a URL of another server names, when it is an actor or a status. */
  object(url: string, signal?: AbortSignal): Promise<{ actor: RemoteActorInput } | { note: RemoteNoteInput } | null>;
  /**
   * A status by its IRI with the collections of its thread (a Create by its IRI gives its
   * object): null when it is no status, or cannot be had.
   */
  thread(uri: string, signal?: AbortSignal): Promise<RemoteThreadNode | null>;
  /** A collection by its IRI (an outbox, a featured collection), to be read page by page. */
  collection(url: string, signal?: AbortSignal): Promise<RemotePages | null>;
  /** Whether an actor's IRI answers 404 or 410 now (any other failure, or none, is no proof it is gone). */
  gone(uri: string): Promise<boolean>;
  /**
   * A quote's stamp (QuoteAuthorization) as its server serves it at `uri`: null when that
   * server says it is not there (404, 410) or serves something else at another id or origin;
   * throws FetchFailed when it could not be had otherwise: no proof either way.
   */
  stamp(uri: string, signal?: AbortSignal): Promise<RemoteStampInput | null>;
}

/**
 * A fetch that got no usable answer. `temporary`: worth asking again later (no answer at all, a
 * timeout, 401, 408, 429, or a 5xx other than 501), as Mastodon's JsonLdHelper tells a
 * salvageable error from one that is not (response_error_unsalvageable?).
 */
export class FetchFailed extends Error {
  constructor(
    message: string,
    readonly temporary: boolean,
  ) {
    super(message);
    this.name = "FetchFailed";
  }
}

/** Whether an HTTP status (undefined: there was no answer) is one to ask again about later. */
export function temporaryStatus(status: number | undefined): boolean {
  if (status === undefined) return true;
  return status === 401 || status === 408 || status === 429 || (status >= 500 && status !== 501);
}

/** What src/federation makes its fetcher of, handed over by createServices. */
export interface RemoteInfra {
  /** Every request to another server goes through it. */
  outgoing: OutgoingHttp;
  /** Whether federation with the host of a URL (or a host) is refused (FederationDomains). */
  refuses(urlOrHost: string | URL): boolean;
  /** Counts deliveries and received activities for the health page (src/services/admin/traffic.ts). */
  traffic: TrafficCounter;
}
