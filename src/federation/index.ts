import type { Context, Federation, SenderKeyPair } from "@fedify/fedify";
import type { Actor } from "@fedify/fedify/vocab";
import type { AccountRow } from "../db/schema.ts";
import { log } from "../log.ts";
import type { Urls } from "../presenters/account.ts";
import type { EventBus } from "../infra/events.ts";
import type { FederationCore } from "./core.ts";
import { wirePermanentFailures } from "./delivery.ts";
import { deliveryRequests } from "./delivered-by.ts";
import { dispatch } from "./dispatchers.ts";
import { actorInput } from "./inbound/actor.ts";
import { goneActorHandler } from "./inbound/gone-actor.ts";
import { listen } from "./inbound/index.ts";
import type { AccountKeyPair } from "./keys.ts";
import type { PortKvStore } from "./kv.ts";
import { subscribe, type Outbound } from "./outbound/index.ts";
import { Sender } from "./outbound/sender.ts";
import type { FederationServices } from "./port.ts";
import type { FederationQueue } from "./stores.ts";
import { federationReaders } from "./readers.ts";
import { refusingActors } from "./refusals.ts";
import type { NoteLookups } from "./vocab.ts";

export { createFederationCore, type FederationCore } from "./core.ts";

/** How long a stop waits for the activities being prepared to be queued. */
const STOP_GRACE_MS = 10_000;

/** What the edge hands requests for ActivityPub to. */
export type FederationHandler = Pick<Federation<void>, "fetch">;

export interface RookeryFederation {
  federation: Federation<void>;
  /** What the edge hands ActivityPub requests to: Fedify, with the request kept for the inbox listeners (delivered-by.ts). */
  handler: FederationHandler;
  kv: PortKvStore;
  queue: FederationQueue;
  /** Fetches a remote actor by its IRI and stores it (the start of `resolve=true`); null when it is none. */
  resolveActor(uri: string): Promise<AccountRow | null>;
  /** A local account's key pairs (made on first need). */
  keyPairs(accountId: number): Promise<AccountKeyPair[]>;
  /** Stores a remote actor document as an account, as if it had been fetched (tests); null when it is not a usable one. */
  storeActor(actor: Actor): Promise<AccountRow | null>;
  /**
   * Resolves once what has been set in motion is done: refreshes of remote accounts have
   * finished, sends being prepared have queued their deliveries and the queue has handled every
   * message that is due (for tests and benchmarks).
   */
  idle(): Promise<void>;
  /**
   * Resolves once every activity set in motion so far is in the queue (in the database), for a
   * process that sends but does not deliver: the command line, whose queue the server delivers.
   */
  queued(): Promise<void>;
  /** Registers what is sent to other servers after a write, by the event it follows (outbound/). */
  subscribe(events: Pick<EventBus, "afterCommit">): void;
  /** Starts handling queued messages (deliveries, incoming activities) until stopped. */
  start(): void;
  stop(): Promise<void>;
}

/**
 * ActivityPub on Fedify, wired to the services: what others read here (dispatchers.ts), what
 * they send (inbound/, one listener per activity), what is sent to them after a write
 * (outbound/), on the core made before the services (core.ts). Hollo's src/federation/ is the
 * model of the wiring (github.com/hollo-social/hollo).
 */
export function createRookeryFederation(core: FederationCore, deps: { urls: Urls; services: FederationServices }): RookeryFederation {
  const { services, urls } = deps;
  const { federation, kv, queue, instance, config, clock, outgoing, fetcher, linked } = core;
  const remote = services.remoteAccounts;
  const lookups: NoteLookups = {
    account: (id) => services.accounts.get(id),
    status: (id) => services.reader.findRow(id),
    media: async (statusId) => (await services.statusMedia.forStatuses([statusId])).get(statusId) ?? [],
    poll: (statusId) => services.polls.pollOf(statusId),
    quote: (statusId) => services.quotes.forStatus(statusId),
  };
  wirePermanentFailures(services, federation);
  // Who reads, and what: secure mode (AUTHORIZED_FETCH or WHITELIST_MODE), blocks (readers.ts).
  const readers = federationReaders(config, services, (request) => federation.createContext(request, undefined).getSignedKeyOwner().catch(() => null));
  dispatch({ federation, services, urls, lookups, instance, keys: core.keys, readers });

  // Fedify verifies the signature before any listener runs: a bad or missing one is 401. What
  // an actor on a refused domain sends is dropped before any listener.
  const inbox = refusingActors(federation.setInboxListeners("/users/{identifier}/inbox", "/inbox"), (url) => core.refuses(url), () => core.traffic.received())
    // What the shared inbox fetches (the actor of an activity, its object) is signed by the
    // instance actor; at a personal inbox Fedify signs as the recipient.
    .setSharedKeyDispatcher(instanceSenderKey(instance.identifier));
  const deliveries = deliveryRequests(federation);
  listen(inbox, { services, kv, loader: linked, instanceIdentifier: instance.identifier, deliveredBy: () => deliveries.deliveredBy() })
    .onUnverifiedActivity(goneActorHandler({ outgoing, accountByUri: (uri) => remote.byUri(uri), remove: (id) => services.goneAccounts.remove(id) }))
    .onError((_ctx, error) => {
      log("warn", "inbox activity failed", { error: String(error).split("\n")[0] });
    });

  const sender = new Sender();
  // What is sent after a write is registered by the table of consequences (src/services/consequences.ts).
  const outbound: Outbound = { services, urls, context: core.context, lookups, sender, kv, instanceIdentifier: instance.identifier };

  let controller: AbortController | null = null;
  let listening: Promise<void> | null = null;
  return {
    federation,
    handler: { fetch: (request, options) => deliveries.fetch(request, options) },
    kv,
    queue,
    async idle() {
      await remote.idle();
      await sender.idle();
      await queue.idle();
    },
    queued: () => sender.idle(),
    subscribe: (events) => subscribe(events, outbound),
    async resolveActor(uri) {
      const actor = await fetcher.actor(uri);
      return actor ? remote.upsert(actor) : null;
    },
    keyPairs: (accountId) => core.keys.keyPairs(accountId),
    async storeActor(actor) {
      const input = actorInput(actor, linked);
      return input ? remote.upsert(input) : null;
    },
    start() {
      // Expired cache entries nobody reads again are swept hourly, like the other housekeeping.
      const HOUR = 60 * 60 * 1000;
      services.wheel.handle("federation-sweep", async () => {
        await kv.sweep();
        services.wheel.schedule("federation-sweep", "hourly", clock.now() + HOUR);
      });
      services.wheel.schedule("federation-sweep", "hourly", clock.now() + HOUR);
      controller = new AbortController();
      listening = federation.startQueue(undefined, { signal: controller.signal });
    },
    async stop() {
      remote.stop();
      // Activities of writes already committed are being prepared: they reach the queue (in the
      // database) before it closes, or a follow made just before the stop would never be sent.
      // Bounded: a send waits on at most the fetch deadline of a recipient's inbox.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([sender.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(timer);
      controller?.abort();
      await listening?.catch(() => {});
    },
  };
}

/**
 * The instance actor's RSA key as Fedify's SenderKeyPair, found once. Answering the shared
 * inbox's key dispatcher with the actor's identifier made Fedify call the key-pairs dispatcher
 * and expand the actor's URI template on every request at the shared inbox (3-4% of the CPU
 * of an incoming Create, issue 30); the instance actor's keys are made once and never change.
 */
function instanceSenderKey(identifier: string): (ctx: Context<void>) => Promise<SenderKeyPair | { identifier: string }> {
  let found: Promise<SenderKeyPair | { identifier: string }> | null = null;
  return (ctx) =>
    (found ??= ctx.getActorKeyPairs(identifier).then(
      (pairs) => {
        const rsa = pairs.find((p) => p.privateKey.algorithm.name === "RSASSA-PKCS1-v1_5");
        // Without an RSA pair Fedify decides as before (it signs nothing: the plain loader).
        return rsa ? { keyId: rsa.keyId, privateKey: rsa.privateKey } : { identifier };
      },
      (error) => {
        found = null;
        throw error;
      },
    ));
}
