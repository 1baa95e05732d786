import type { Actor } from "@fedify/fedify/vocab";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { DatabasePort } from "../db/port.ts";
import type { AccountRow } from "../db/schema.ts";
import type { DomainEvent, EventBus } from "../infra/events.ts";
import { log } from "../log.ts";
import { statusUri } from "../presenters/status.ts";
import type { Urls } from "../presenters/account.ts";
import type { ArchiveRenderer } from "../services/archive/ports.ts";
import type { RemoteFetcher, RemoteInfra } from "../services/remote/fetcher.ts";
import type { FederationCore } from "./core.ts";
import type { RookeryFederation } from "./index.ts";
import type { AccountKeyPair } from "./keys.ts";
import type { PortKvStore } from "./kv.ts";
import type { FederationServices } from "./port.ts";
import { federationStores, type FederationQueue, type SharedQueue } from "./stores.ts";

/**
 * Fedify with its vocabulary, JSON-LD and X.509 stack is most of the code and about a quarter
 * of the memory of an idle server (22 MB of 93 in the executable): it is loaded here, by
 * `import()`, at the first thing that needs it: a request for ActivityPub (WebFinger, an actor,
 * an inbox), an activity to send after a write, a fetch from another server, a delivery waiting
 * in the queue. Until then the server answers the API without it. Nothing else in src/ may
 * import a module of src/federation that imports Fedify, except by type (a unit test checks
 * it: test/unit/lazy-modules.test.ts).
 */

/** What outbound/ listens to: forwarded from start-up, each told to it once Fedify is loaded. */
export const OUTBOUND_EVENTS = [
  "account.deleted",
  "account.moved",
  "account.updated",
  "block.created",
  "block.removed",
  "favourite.created",
  "favourite.removed",
  "follow.rejected",
  "follow.removed",
  "follow_request.authorized",
  "follow_request.created",
  "follow_request.rejected",
  "poll.ended",
  "poll.voted",
  "quote.accepted",
  "quote.rejected",
  "quote.removed",
  "quote.requested",
  "quote.revoked",
  "quote_policy.changed",
  "relay.subscribed",
  "relay.unsubscribed",
  "report.created",
  "status.created",
  "status.deleted",
  "status.pinned",
  "status.unpinned",
  "status.updated",
] as const satisfies readonly DomainEvent["type"][];

/** How often the queue is looked at for deliveries a restart or a command left, while Fedify is not loaded (as the queue's own idle poll). */
const QUEUE_WATCH_MS = 1000;

/** The core (core.ts) before Fedify is loaded: its store and queue, and the services' fetcher. */
export interface LazyFederationCore {
  kv: PortKvStore;
  queue: FederationQueue;
  /** The services' RemoteFetcher: each call loads Fedify first, if it is not yet. */
  fetcher: RemoteFetcher;
  /** Fedify's core alone (no dispatchers). */
  load(): Promise<FederationCore>;
  /**
   * Called once by lazyRookeryFederation, made right after the services: the fetcher's calls
   * then wait for the whole federation, as its fetches are signed by the instance actor, whose
   * keys its dispatchers give.
   */
  wire(whole: () => Promise<unknown>): void;
  /**
   * Whether this server knows any account of another server, or any relay: without them an
   * activity has nobody to go to (its recipients are remote accounts and relays), so an island
   * server's posts do not load Fedify.
   */
  knowsOtherServers(): Promise<boolean>;
}

export function lazyFederationCore(deps: { config: Config; clock: Clock; port: DatabasePort; sharedQueue?: SharedQueue } & RemoteInfra): LazyFederationCore {
  const stores = federationStores(deps);
  let core: Promise<FederationCore> | null = null;
  const load = () => (core ??= import("./core.ts").then(({ createFederationCore }) => createFederationCore(deps, stores)));
  // Local accounts have no uri; the index on it finds a remote one without a scan.
  const others = "SELECT CASE WHEN EXISTS (SELECT 1 FROM accounts WHERE uri IS NOT NULL) OR EXISTS (SELECT 1 FROM relays) THEN 1 ELSE 0 END AS known";
  let whole: (() => Promise<unknown>) | null = null;
  const ready = async () => {
    await whole?.();
    return load();
  };
  const fetcher: RemoteFetcher = {
    actor: async (uri, signal) => (await ready()).fetcher.actor(uri, signal),
    object: async (url, signal) => (await ready()).fetcher.object(url, signal),
    thread: async (uri, signal) => (await ready()).fetcher.thread(uri, signal),
    collection: async (url, signal) => (await ready()).fetcher.collection(url, signal),
    gone: async (uri) => (await ready()).fetcher.gone(uri),
    stamp: async (uri, signal) => (await ready()).fetcher.stamp(uri, signal),
  };
  return {
    ...stores,
    fetcher,
    load,
    wire(given) {
      whole = given;
    },
    knowsOtherServers: async () => Number((await deps.port.get<{ known: number }>(others))?.known) === 1,
  };
}

/** RookeryFederation (index.ts) made when first needed; what needs Fedify's objects awaits `load()`. */
export interface LazyFederation extends Omit<RookeryFederation, "federation"> {
  /** Loads Fedify and wires it to the services now, if that is not done yet. */
  load(): Promise<RookeryFederation>;
  /** Whether it is loaded (or being loaded). */
  loaded(): boolean;
}

type AnyListener = (event: DomainEvent) => void;

export function lazyRookeryFederation(core: LazyFederationCore, deps: { urls: Urls; services: FederationServices }): LazyFederation {
  const { kv, queue } = core;
  let real: RookeryFederation | null = null;
  let loading: Promise<RookeryFederation> | null = null;
  let subscribed = false;
  let started = false;
  let stopped = false;
  let watcher: ReturnType<typeof setInterval> | null = null;
  /** outbound/'s listeners, by event, once loaded; the events that came before, in order. */
  const listeners = new Map<string, AnyListener[]>();
  const waiting: DomainEvent[] = [];
  /** Events being decided (see subscribe), for idle() to await. */
  const pending = new Set<Promise<void>>();

  const tell = (event: DomainEvent) => {
    // One listener failing must not keep the others from the news (as the event bus runs them).
    for (const listener of listeners.get(event.type) ?? []) {
      try {
        listener(event);
      } catch (e) {
        log("error", "after-commit task failed", { error: String(e).split("\n")[0] });
      }
    }
  };

  const load = (): Promise<RookeryFederation> =>
    (loading ??= (async () => {
      const [loadedCore, { createRookeryFederation }] = await Promise.all([core.load(), import("./index.ts")]);
      const federation = createRookeryFederation(loadedCore, deps);
      if (subscribed) {
        federation.subscribe({
          afterCommit(type, listener) {
            if (!(OUTBOUND_EVENTS as readonly string[]).includes(type)) throw new Error(`outbound/ listens to ${type}: add it to OUTBOUND_EVENTS in lazy.ts`);
            listeners.set(type, [...(listeners.get(type) ?? []), listener as AnyListener]);
          },
        });
      }
      // What happened while it loaded is sent first, in order; from here on at once.
      for (const event of waiting.splice(0)) tell(event);
      real = federation;
      if (watcher) clearInterval(watcher);
      if (started && !stopped) federation.start();
      return federation;
    })());

  core.wire(load);
  const loadLogged = () => {
    load().catch((e) => log("error", "federation could not be loaded", { error: String(e).split("\n")[0] }));
  };
  const ready = async () => real ?? (await load());

  return {
    kv,
    queue,
    handler: { fetch: async (request, options) => (await ready()).handler.fetch(request, options) },
    resolveActor: async (uri: string): Promise<AccountRow | null> => (await ready()).resolveActor(uri),
    keyPairs: async (accountId: number): Promise<AccountKeyPair[]> => (await ready()).keyPairs(accountId),
    storeActor: async (actor: Actor): Promise<AccountRow | null> => (await ready()).storeActor(actor),
    load,
    loaded: () => loading !== null,
    subscribe(events: Pick<EventBus, "afterCommit">) {
      subscribed = true;
      // An event heard while federation is not loaded waits in `waiting`, in order, unless
      // nobody elsewhere is known (outbound/ would send nothing). That is read through the port,
      // so events are decided in turn: one heard while an earlier one is being decided follows it.
      let deciding: Promise<void> = Promise.resolve();
      let undecided = 0;
      let known = false;
      const decide = (event: DomainEvent) => {
        if (real) return tell(event);
        if (!loading && !known) return;
        waiting.push(event);
        loadLogged();
      };
      for (const type of OUTBOUND_EVENTS) {
        events.afterCommit(type, (event) => {
          if (undecided === 0 && (real || loading || known)) return decide(event);
          undecided++;
          const decided = (deciding = deciding
            .then(async () => {
              // Once another server is known it stays so for this process (at worst Fedify loads for nothing).
              if (!real && !loading && !known) known = await core.knowsOtherServers();
            })
            .catch((e) => log("warn", "federation: whether other servers are known could not be read", { error: String(e).split("\n")[0] }))
            .then(() => decide(event))
            .finally(() => undecided--));
          pending.add(decided);
          void decided.finally(() => pending.delete(decided));
        });
      }
    },
    start() {
      started = true;
      if (real) return real.start();
      // Deliveries a restart or a command (rookery relays add, accounts move) left in the queue.
      const look = async () => {
        if (!loading && (await queue.pending()) > 0) loadLogged();
      };
      const looked = () => void look().catch((e) => log("warn", "federation queue could not be read", { error: String(e).split("\n")[0] }));
      looked();
      if (!loading) {
        watcher = setInterval(looked, QUEUE_WATCH_MS);
        watcher.unref?.();
      }
    },
    async idle() {
      // Events still being decided (whether anybody elsewhere is known) may load federation.
      while (pending.size > 0) await Promise.all([...pending]);
      if (!loading && (await queue.pending()) > 0) loadLogged();
      if (!loading) await deps.services.remoteAccounts.idle();
      // Loaded meanwhile (a refresh fetched), or before.
      if (loading) await (await loading).idle();
    },
    async queued() {
      // An event still being decided may yet load federation and queue its activity.
      while (pending.size > 0) await Promise.all([...pending]);
      if (loading) await (await loading).queued();
    },
    async stop() {
      stopped = true;
      if (watcher) clearInterval(watcher);
      if (loading) await (await loading.catch(() => null))?.stop();
      else deps.services.remoteAccounts.stop();
    },
  };
}

/**
 * The archive renderer (archive.ts, over Fedify) made at the first status or actor an export
 * renders. A status's IRI needs no Fedify: it is the one the API gives as `uri`.
 */
export function lazyArchiveRenderer(deps: { config: Config; port: DatabasePort; clock: Clock; urls: Urls }): ArchiveRenderer {
  let made: Promise<ArchiveRenderer> | null = null;
  const renderer = () => (made ??= import("./archive.ts").then(({ createArchiveRenderer }) => createArchiveRenderer(deps)));
  return {
    actor: async (account) => (await renderer()).actor(account),
    activity: async (author, status, lookups) => (await renderer()).activity(author, status, lookups),
    statusUri: (author, status) => (status.uri !== null ? new URL(status.uri).href : statusUri(deps.urls, author.username, status.id)),
  };
}
