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
   * throws when it could not be asked (unreachable, timed out): no proof either way.
   */
  stamp(uri: string, signal?: AbortSignal): Promise<RemoteStampInput | null>;
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
