import { createFederation, type Context, type DocumentLoader, type Federation } from "@fedify/fedify";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { DatabasePort } from "../db/port.ts";
import type { RemoteFetcher, RemoteInfra } from "../services/remote/fetcher.ts";
import { loadersOf } from "./access.ts";
import { DELIVERY_RETRY_POLICY, PERMANENT_FAILURES, recordFailure } from "./delivery.ts";
import { remoteFetcher } from "./fetcher.ts";
import { InstanceActor } from "./instance-actor.ts";
import { AccountKeys } from "./keys.ts";
import type { PortKvStore } from "./kv.ts";
import { withoutRefusedKeys } from "./refusals.ts";
import { federationStores, type FederationQueue, type FederationStores } from "./stores.ts";

/**
 * Fedify's side of federation, made before the services (which are given its fetcher) and
 * needing none of them: the Federation object over our key-value store and queue, the loaders
 * every fetch goes through, the instance actor that signs them.
 */
export interface FederationCore extends RemoteInfra {
  config: Config;
  clock: Clock;
  federation: Federation<void>;
  kv: PortKvStore;
  queue: FederationQueue;
  instance: InstanceActor;
  /** The key pairs of local accounts. */
  keys: AccountKeys;
  publicUrl: URL;
  /** A context outside any request (to send, to build objects). */
  context(): Context<void>;
  /** Reads what an actor document only links to (its images), signed by the instance actor. */
  linked: DocumentLoader;
  /** The services' RemoteFetcher. */
  fetcher: RemoteFetcher;
}

export function createFederationCore(deps: { config: Config; clock: Clock; port: DatabasePort } & RemoteInfra, stores: FederationStores = federationStores(deps)): FederationCore {
  const { config, clock, outgoing, refuses, traffic } = deps;
  const { kv, queue } = stores;
  const publicUrl = new URL(config.publicUrl);
  const instance = new InstanceActor(deps.port, publicUrl.hostname);
  const federation: Federation<void> = createFederation<void>({
    // A refused domain's kept keys are not read: none of its signatures verifies.
    kv: withoutRefusedKeys(kv, (url) => refuses(url)),
    // Deliveries (and their fan-out) wait in the queue; incoming activities are handled while
    // their request waits, as Mastodon's sender expects nothing sooner than the 202: queued,
    // Fedify parsed each one twice (JSON-LD expansion, the inbound bound) and held it in a second
    // table. A sender's next activity of the same object comes only after this 202 (Fedify and
    // Mastodon order them per object), so a Delete never overtakes its Create here.
    queue: { outbox: queue, fanout: queue },
    manuallyStartQueue: true,
    // Identity from PUBLIC_URL alone, never from Host or X-Forwarded-* of a request.
    origin: { handleHost: publicUrl.host, webOrigin: publicUrl.origin },
    outboxRetryPolicy: DELIVERY_RETRY_POLICY,
    // Each delivery backs off on its own (DELIVERY_RETRY_POLICY); Fedify's per-host circuit
    // breaker would hold and release them on timings of its own, off the server's clock.
    circuitBreaker: false,
    permanentFailureStatusCodes: PERMANENT_FAILURES,
    onOutboxError: (error) => {
      traffic.failed();
      return recordFailure(kv, clock, error, queue.handlingInbox()).catch(() => {});
    },
    // Every fetch goes through these, and they through the outgoing-HTTP module: refused domains
    // are never asked, and under AUTHORIZED_FETCH even Fedify's own unsigned fetches are signed.
    ...loadersOf(config, kv, outgoing, (url) => refuses(url), async (): Promise<{ keyId: URL; privateKey: CryptoKey }> => {
      const pairs = await federation.createContext(publicUrl, undefined).getActorKeyPairs(instance.identifier);
      return { keyId: pairs[0]!.keyId, privateKey: pairs[0]!.privateKey };
    }),
  });
  const context = () => federation.createContext(publicUrl, undefined);
  // Every fetch from other servers is signed by the instance actor: GoToSocial, and Mastodon
  // with AUTHORIZED_FETCH, answer 401 to an unsigned GET of an actor or a status.
  const signedLoader = (c: Context<void>) => c.getDocumentLoader({ identifier: instance.identifier });
  /** A context whose documentLoader signs, for the lookups made for the services. */
  const signedContext = async (): Promise<Context<void>> => {
    const c = context();
    return Object.assign(c, { documentLoader: await signedLoader(c) });
  };
  // Images an actor document only links to go through Fedify's loader (signed): its refusal
  // of private addresses.
  const linked: DocumentLoader = async (url, options) => (await signedLoader(context()))(url, options);
  const fetcher = remoteFetcher({ signedContext, outgoing, loader: linked });
  return { ...deps, federation, kv, queue, instance, keys: new AccountKeys(deps.port, clock), publicUrl, context, linked, fetcher };
}
