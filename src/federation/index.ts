import { createFederation, type Context, type DocumentLoader, type Federation, type RequestContext } from "@fedify/fedify";
import { Accept, Add, Announce, Block, Move, Create, Delete, Emoji, Follow, isActor, Like, Note, Reject, Remove, Undo, Update, type Recipient } from "@fedify/fedify/vocab";
import { followKey, wireRelationships } from "./relationships.ts";
import { recipientOf, Sender } from "./sender.ts";
import { wireStatuses } from "./statuses.ts";
import { wireProfiles } from "./profiles.ts";
import { DELIVERY_RETRY_POLICY, PERMANENT_FAILURES, recordFailure, wirePermanentFailures } from "./delivery.ts";
import { wireInteractions } from "./interactions.ts";
import { wireReports } from "./reports.ts";
import type { AppContext } from "../context.ts";
import type { EventBus } from "../services/events.ts";
import type { AccountRow } from "../db/schema.ts";
import { log } from "../log.ts";
import { actorOf, createOf, emojiOf, noteOf, type NoteLookups } from "./vocab.ts";
import { SqliteKvStore } from "./kv.ts";
import { isStatusObject } from "../services/federation/remote-notes.ts";
import { SqliteMessageQueue } from "./queue.ts";
import { InstanceActor } from "./instance-actor.ts";
import { goneActorHandler } from "./gone-actor.ts";
import { bareActorOf, loadersOf, lookup } from "./access.ts";
import { federationReaders } from "./readers.ts";
import { refusingActors, withoutRefusedKeys } from "./refusals.ts";

const PAGE_SIZE = 20;

/** A paged collection's first page starts from the top; Fedify wants a string cursor for it. */
const FIRST = "";
const cursorOf = (cursor: string) => (cursor === FIRST ? null : cursor);

export interface RookeryFederation {
  federation: Federation<void>;
  kv: SqliteKvStore;
  queue: SqliteMessageQueue;
  /** Fetches a remote actor by its IRI and stores it (the start of `resolve=true`); null when it is none. */
  resolveActor(uri: string): Promise<AccountRow | null>;
  /**
   * Resolves once what has been set in motion is done: refreshes of remote accounts have
   * finished, sends being prepared have queued their deliveries and the queue has handled every
   * message that is due (for tests and benchmarks).
   */
  idle(): Promise<void>;
  /** Registers the after-commit listeners that send activities (called once, by the table of consequences). */
  subscribe(events: EventBus): void;
  /** Starts handling queued messages (deliveries, incoming activities) until stopped. */
  start(): void;
  stop(): Promise<void>;
}

/**
 * ActivityPub on Fedify: the actors of local accounts at the URIs the client API already
 * emits (/users/:name), their collections and published statuses, and the inboxes. Hollo's
 * src/federation/ is the model of the wiring (github.com/hollo-social/hollo).
 */
export function createRookeryFederation(app: AppContext): RookeryFederation {
  const { config, services, urls } = app;
  const actors = services.federationActors;
  const sqlite = app.db.$client;
  const kv = new SqliteKvStore(sqlite, app.clock);
  const domains = services.federationDomains;
  const outgoing = services.outgoing;
  const queue = new SqliteMessageQueue(sqlite, app.clock, outgoing, (url) => domains.refuses(url));
  const publicUrl = new URL(config.publicUrl);
  const lookups: NoteLookups = {
    account: (id) => services.accounts.findById(id),
    status: (id) => services.reader.findRow(id),
    media: (statusId) => services.statusMedia.forStatuses([statusId]).get(statusId) ?? [],
    poll: (statusId) => services.polls.ofStatus(statusId),
  };
  const instance = new InstanceActor(app.db, publicUrl.hostname);
  const federation: Federation<void> = createFederation<void>({
    // A refused domain's kept keys are not read: none of its signatures verifies.
    kv: withoutRefusedKeys(kv, (url) => domains.refuses(url)),
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
    onOutboxError: (error) => recordFailure(kv, app.clock, error).catch(() => {}),
    // Every fetch goes through these, and they through the outgoing-HTTP module: refused domains
    // are never asked, and under AUTHORIZED_FETCH even Fedify's own unsigned fetches are signed.
    ...loadersOf(config, kv, outgoing, (url) => domains.refuses(url), async (): Promise<{ keyId: URL; privateKey: CryptoKey }> => {
      const pairs = await federation.createContext(publicUrl, undefined).getActorKeyPairs(instance.identifier);
      return { keyId: pairs[0]!.keyId, privateKey: pairs[0]!.privateKey };
    }),
  });
  wirePermanentFailures(app, federation);
  // Who reads, and what: secure mode (AUTHORIZED_FETCH or WHITELIST_MODE), blocks (readers.ts).
  const readers = federationReaders(app, (request) => federation.createContext(request, undefined).getSignedKeyOwner().catch(() => null));
  const authorized = readers.authorized;
  /**
   * A reader the account blocks (or whose domain it blocks) finds its collections empty. (The
   * followers dispatcher is also asked outside any request, to deliver: no reader there.)
   */
  const hidden = async (ctx: Context<void>, account: AccountRow) =>
    "request" in ctx && readers.hides(account.id, await readers.readerOf(ctx as RequestContext<void>));

  /** The account behind an identifier, exactly as its URIs spell it (one actor per account). */
  const local = (identifier: string) => {
    const account = actors.localAccount(identifier);
    return account && account.username === identifier ? account : undefined;
  };

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (identifier === instance.identifier) return instance.actor(ctx);
      const account = local(identifier);
      if (!account) return null;
      // Secure mode: an unsigned fetch gets what checking a signature needs, not the profile;
      // so does a reader the account blocks. (Fedify also asks for the actor at an inbox POST.)
      const fetched = ctx.request.method === "GET" || ctx.request.method === "HEAD";
      if (fetched && (await readers.seesBareActor(ctx, account))) return bareActorOf(ctx, account);
      return actorOf(ctx, urls, account);
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      if (identifier === instance.identifier) return instance.keyPairs();
      const account = local(identifier);
      return account ? actors.keyPairs(account.id) : [];
    });

  federation
    .setOutboxDispatcher("/users/{identifier}/outbox", async (ctx, identifier, cursor) => {
      const account = local(identifier);
      if (!account || cursor === null) return null;
      if (await hidden(ctx, account)) return { items: [] };
      const page = actors.outbox(account.id, cursorOf(cursor), PAGE_SIZE);
      const items = page.items.map((status) => createOf(ctx, noteOf(ctx, urls, account, status, lookups), account, status));
      return { items, nextCursor: page.next };
    })
    .setCounter((_ctx, identifier) => {
      const account = local(identifier);
      return account ? actors.outboxCount(account.id) : null;
    })
    .setFirstCursor(() => FIRST)
    .authorize(authorized);

  federation
    .setFollowersDispatcher("/users/{identifier}/followers", async (ctx, identifier, cursor) => {
      const account = local(identifier);
      if (!account) return null;
      // The whole collection is what delivery to "followers" asks for: only remote inboxes.
      if (cursor === null) return { items: actors.remoteFollowers(account.id).map(recipientOf) };
      if (await hidden(ctx, account)) return { items: [] };
      const page = actors.followers(account.id, cursorOf(cursor), PAGE_SIZE);
      const items: Recipient[] = page.items.map((f) => (f.domain === null ? { id: ctx.getActorUri(f.username), inboxId: null } : recipientOf(f)));
      return { items, nextCursor: page.next };
    })
    .setCounter((_ctx, identifier) => local(identifier)?.followersCount ?? null)
    .setFirstCursor(() => FIRST)
    .authorize(authorized);

  // Mastodon shows the count of followed accounts, not who they are.
  federation
    .setFollowingDispatcher("/users/{identifier}/following", (_ctx, identifier) => (local(identifier) ? { items: [] } : null))
    .setCounter((_ctx, identifier) => local(identifier)?.followingCount ?? null)
    .authorize(authorized);

  federation
    .setFeaturedDispatcher("/users/{identifier}/featured", async (ctx, identifier) => {
      const account = local(identifier);
      if (!account) return null;
      if (await hidden(ctx, account)) return { items: [] };
      return { items: actors.pinned(account.id).map((status) => noteOf(ctx, urls, account, status, lookups)) };
    })
    .authorize(authorized);

  // This server's custom emojis, which Notes and actors name by these IRIs.
  federation.setObjectDispatcher(Emoji, "/emojis/{shortcode}", (ctx, { shortcode }) => {
    const row = services.customEmojis.find(shortcode);
    return row ? emojiOf(ctx, services.customEmojis.entity(row)) : null;
  });

  // Public and unlisted statuses for anyone (signed, in secure mode); a private or direct one
  // for a signed request by an account allowed to see it (a follower, a mentioned account), as
  // Mastodon's StatusPolicy decides with the signer as the viewer. A signer the author blocks,
  // or whose domain the author blocks, sees nothing.
  federation
    .setObjectDispatcher(Note, "/users/{identifier}/statuses/{id}", async (ctx, { identifier, id }) => {
      const account = local(identifier);
      if (!account || !/^\d+$/.test(id)) return null;
      const status = actors.ownStatus(account.id, Number(id));
      if (!status) return null;
      const published = status.visibility === "public" || status.visibility === "unlisted";
      const reader = await readers.readerOf(ctx);
      if (readers.hides(account.id, reader)) return null;
      if (!reader.viewer) return published ? noteOf(ctx, urls, account, status, lookups) : null;
      return services.reader.visible([status], reader.viewer.id).length === 1 ? noteOf(ctx, urls, account, status, lookups) : null;
    })
    .authorize((ctx) => authorized(ctx));

  // Fedify verifies the signature before any listener runs: a bad or missing one is 401. What
  // an actor on a refused domain sends is dropped before any listener.
  refusingActors(federation.setInboxListeners("/users/{identifier}/inbox", "/inbox"), (url) => domains.refuses(url))
    // What the shared inbox fetches (the actor of an activity, its object) is signed by the
    // instance actor; at a personal inbox Fedify signs as the recipient.
    .setSharedKeyDispatcher(() => ({ identifier: instance.identifier }))
    .on(Follow, async (ctx, follow) => {
      const kept = await services.federationInbox.follow(ctx, follow);
      if (kept && follow.id) await kv.set(followKey(kept.followerId, kept.targetId), follow.id.href);
    })
    .on(Create, async (ctx, create) => {
      await services.federationInbox.create(ctx, create);
    })
    .on(Update, async (ctx, update) => {
      await services.federationInbox.update(ctx, update);
    })
    .on(Delete, async (ctx, del) => {
      await services.federationInbox.delete(ctx, del);
    })
    .on(Accept, async (ctx, accept) => {
      await services.federationInbox.accept(ctx, accept);
    })
    .on(Reject, async (ctx, reject) => {
      await services.federationInbox.reject(ctx, reject);
    })
    .on(Block, async (ctx, block) => {
      await services.federationInbox.block(ctx, block);
    })
    .on(Like, async (ctx, like) => {
      await services.remoteInteractions.like(ctx, like);
    })
    .on(Announce, async (ctx, announce) => {
      await services.remoteInteractions.announce(ctx, announce);
    })
    .on(Add, async (ctx, add) => {
      await services.remoteInteractions.feature(ctx, add);
    })
    .on(Remove, async (ctx, remove) => {
      await services.remoteInteractions.feature(ctx, remove);
    })
    .on(Move, async (ctx, move) => {
      await services.accountMoves.move(ctx, move);
    })
    .on(Undo, async (ctx, undo) => {
      await services.federationInbox.undo(ctx, undo);
    })
    .onUnverifiedActivity(goneActorHandler({ outgoing, accountByUri: (uri) => services.remoteAccounts.byUri(uri), remove: (id) => services.goneAccounts.remove(id) }))
    .onError((_ctx, error) => {
      log("warn", "inbox activity failed", { error: String(error).split("\n")[0] });
    });

  const sender = new Sender();
  const context = () => federation.createContext(publicUrl, undefined);
  // Registered by the table of consequences (src/services/consequences.ts); the wire functions
  // take the bus from the services.
  const subscribe = () => {
    wireRelationships(app, context, kv, sender);
    wireStatuses(app, context, lookups, sender);
    wireProfiles(app, context, sender);
    wireInteractions(app, context, lookups, sender);
    wireReports(app, context, instance.identifier, sender);
  };
  // Every fetch from other servers is signed by the instance actor: GoToSocial, and Mastodon
  // with AUTHORIZED_FETCH, answer 401 to an unsigned GET of an actor or a status.
  const signedLoader = (c: Context<void>) => c.getDocumentLoader({ identifier: instance.identifier });
  /** A context whose documentLoader signs, for the services that fetch through it. */
  const signedContext = async (): Promise<Context<void>> => {
    const c = context();
    return Object.assign(c, { documentLoader: await signedLoader(c) });
  };
  // acct: lookups go through WebFinger, which Fedify always asks over https.
  const remote = services.remoteAccounts;
  const lookupActor = async (identifier: string, signal?: AbortSignal) => {
    const object = await lookup(await signedContext(), outgoing, identifier, signal);
    return object && isActor(object) ? object : null;
  };
  remote.resolver = async (username, domain, signal) => {
    const actor = await lookupActor(`acct:${username}@${domain}`, signal);
    return actor ? remote.upsert(actor) : null;
  };
  // Refreshes of stale accounts, and images an actor document only links to, go through
  // Fedify's loader (signed): its refusal of private addresses.
  remote.fetchActor = lookupActor;
  const linked: DocumentLoader = async (url, options) => (await signedLoader(context()))(url, options);
  remote.documentLoader = linked;

  // Search with resolve=true: an actor is stored as an account, a Note as a status (Fedify
  // drops a document whose id is on another origin than the URL it was fetched from).
  services.search.urlResolver = async (url, signal) => {
    const c = await signedContext();
    const object = await lookup(c, outgoing, url, signal);
    if (object && isActor(object)) return { account: await remote.upsert(object) };
    if (isStatusObject(object)) return { status: await services.remoteNotes.store(c, object, { fetched: true }) };
    return null;
  };
  // A thread's missing ancestors, fetched when it is asked for.
  services.remoteThreads.fetcher = async (uri, signal) => {
    const c = await signedContext();
    const object = await lookup(c, outgoing, uri, signal);
    return isStatusObject(object) ? services.remoteNotes.store(c, object, { fetched: true }) : null;
  };

  let controller: AbortController | null = null;
  let listening: Promise<void> | null = null;
  return {
    federation,
    kv,
    queue,
    subscribe,
    async idle() {
      await remote.idle();
      await sender.idle();
      await queue.idle();
    },
    async resolveActor(uri) {
      const actor = await lookupActor(uri);
      return actor ? remote.upsert(actor) : null;
    },
    start() {
      // Expired cache entries nobody reads again are swept hourly, like the other housekeeping.
      const HOUR = 60 * 60 * 1000;
      app.services.wheel.handle("federation-sweep", () => {
        kv.sweep();
        app.services.wheel.schedule("federation-sweep", "hourly", app.clock.now() + HOUR);
      });
      app.services.wheel.schedule("federation-sweep", "hourly", app.clock.now() + HOUR);
      controller = new AbortController();
      listening = federation.startQueue(undefined, { signal: controller.signal });
    },
    async stop() {
      remote.stop();
      controller?.abort();
      await listening?.catch(() => {});
    },
  };
}
