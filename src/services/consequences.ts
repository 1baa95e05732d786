import type { EventBus, Subscribe } from "../infra/events.ts";
import type { CacheKind } from "../infra/pg-generations.ts";
import { applyRenderKeys } from "./statuses/render-cache.ts";
import type { Services } from "./index.ts";

/**
 * The table of consequences: the one place to read what follows an event, and the only
 * place listeners are registered. Services announce what they did (events.ts); what that
 * sets off is written here, event by event, in two columns:
 *
 * - within: part of the same write, in its transaction (rows of other tables, caches made
 *   stale); a listener that throws fails the write;
 * - after commit: the transports, which tell the world outside the database once the write
 *   is readable, and never for one rolled back.
 *
 * Transports outside the services (streams, federation) are handed in, so that services
 * import neither; each says in its `subscribe` which events it hears. Listeners of one
 * event run in the order they are registered here. At a glance (the transports' part is
 * theirs to keep; this summary must follow them):
 *
 *   event                       within                                      after commit
 *   token.revoked               its push subscriptions                      streams (its connections closed)
 *   follow.created              notification, home feed, render cache       -
 *   follow_request.created      notification                                federation (Follow), a remote profile's posts fetched
 *   follow_request.authorized   notification withdrawn, home feed, cache    federation (Accept)
 *   follow_request.rejected     -                                           federation (Reject)
 *   follow.rejected             -                                           federation (Reject)
 *   follow.removed              notification withdrawn, home feed, lists,   federation (Undo Follow)
 *                               endorsements, render cache
 *   block.created / .removed    -                                           federation (Block, Undo Block)
 *   mute.removed                home feed                                   -
 *   account.registered          admin.sign_up notifications to staff        -
 *   account.updated             render cache, its tokens' kept standing     federation (Update; a suspension by staff too)
 *   account.deleted             its tokens' kept standing                   federation (Delete of the actor)
 *   account.unlocked            waiting requests authorized                 -
 *   account.moved               -                                           federation (Move)
 *   status.created              counters, home feeds, notifications,        link card, remote media copy, streams,
 *                               lists, conversations                        federation (Create, Announce)
 *   status.created (backfill)   counters                                    link card, remote media copy
 *   status.imported             counters                                    -
 *   status.updated              notifications (local edits; quoted_update   link card, remote media copy, streams,
 *                               to local quoters)                           federation (Update)
 *   status.deleted              counters, boost notification withdrawn,     streams, federation (Delete, Undo Announce)
 *                               conversations
 *   favourite.created / .removed  counter, notification (or withdrawn)      federation (Like, Undo Like)
 *   status.pinned / .unpinned   -                                           federation (Add, Remove)
 *   poll.opened                 -                                           its end put on the wheel
 *   poll.voted                  -                                           federation (the votes)
 *   poll.ended                  notifications                               federation (Update)
 *   notification.created        push deliveries                             push, streams
 *   quote.requested             -                                           federation (QuoteRequest)
 *   quote.accepted              quotes_count, quote notification            federation (Accept with the stamp, or
 *                                                                           Update of a local quoting post), streams
 *                                                                           (status.update, unless settled with it)
 *   quote.rejected              -                                           federation (Reject), streams (likewise)
 *   quote.revoked               quotes_count back                           federation (Delete of the stamp), streams
 *   quote.removed               quotes_count back (if it counted)           federation (Delete to a remote quoted author),
 *                                                                           streams (an edit dropped it)
 *   quote_policy.changed        -                                           federation (Update)
 *   report.created              admin.report notifications to staff         federation (Flag)
 *   relay.subscribed / .unsubscribed  -                                     federation (Follow, Undo Follow)
 *   list.delivered, conversation.updated, notifications.merged, filters.changed,
 *   announcement.published / .deleted / .reaction                           streams
 *   token.revoked, account.updated, filters.changed, block.*               other processes' caches (PostgreSQL)
 *   (and what streams hear, to other processes' streams: transports.processes)
 */
export interface Transports {
  /** Stream events to open connections (StreamFanout.subscribe in src/streaming/fanout.ts). */
  streams?: Subscribe;
  /** Activities to other servers (the wire* functions of src/federation); none with FEDERATION=off. */
  federation?: Subscribe;
  /** The serving threads' streams (src/threads, WEB_THREADS > 1): the events streams hear, passed on. */
  threads?: Subscribe;
  /** Other processes on the same PostgreSQL (src/cross-process.ts): what streams hear, and the caches a write made stale there. */
  processes?: Subscribe;
}

/**
 * A serving thread that only reads (src/threads) hears of the main thread's events after they
 * committed, for its own streams; it writes nothing, so no `within` listener runs there. What
 * it keeps of the database follows the database itself (forgetCached).
 */
export function registerReaderConsequences(events: EventBus, transports: Pick<Transports, "streams" | "threads">): void {
  transports.streams?.(events);
  // Another process's events (src/cross-process.ts), to this process's serving threads too.
  transports.threads?.(events);
}

/**
 * Another connection committed (the command line; for a serving thread, the main thread):
 * what is kept in memory of the database is read again. Tokens check for themselves
 * (TokenService). `keepRendered`: a serving thread's render cache, which replays the main
 * thread's own invalidations (src/threads), stays.
 */
export function forgetCached(services: Services, keepRendered = false): void {
  if (!keepRendered) services.renderCache.clear();
  services.moderation.forgetCached();
  services.domainBlocks.forgetCached();
  services.filters.forgetCached();
  services.notificationPolicies.forgetCached();
  // A serving thread asks no other server anything: it never reads the federation rules.
  if (!keepRendered) services.federationDomains.reload();
}

export function registerConsequences(events: EventBus, services: Services, transports: Transports): void {
  const { notifications, homeFeed, counters, renderCache, lists, endorsements, follows, conversations, polls, pushDeliveries, pushSubscriptions, quotes } = services;

  // Every `within` listener below writes through the database port, inside the emitter's
  // transaction, and is awaited by emit in turn: an async function, one step after another.

  // ── Tokens: a revoked token's Web Push subscriptions go with it (its streams close: streams).
  events.within("token.revoked", (e) => pushSubscriptions.unsubscribe(e.tokenId));

  // ── Relationships: notifications, home feeds and lists follow them; rendered accounts (their counts) are stale.
  events.within("follow.created", async (e) => {
    await notifications.notify(e.targetAccountId, e.accountId, "follow");
    await homeFeed.backfill(e.accountId, e.targetAccountId);
    renderCache.touchAccount(e.accountId);
    renderCache.touchAccount(e.targetAccountId);
  });
  events.within("follow_request.created", async (e) => {
    await notifications.notify(e.targetAccountId, e.accountId, "follow_request");
  });
  // A local account asks to follow a remote one: its pinned and recent posts are fetched, for its profile (no feed).
  events.afterCommit("follow_request.created", (e) => services.accountHistory.followed(e.accountId, e.targetAccountId));
  events.within("follow_request.authorized", async (e) => {
    await notifications.withdraw(e.targetAccountId, e.accountId, "follow_request");
    await homeFeed.backfill(e.accountId, e.targetAccountId);
    renderCache.touchAccount(e.accountId);
    renderCache.touchAccount(e.targetAccountId);
  });
  events.within("follow.removed", async (e) => {
    await notifications.withdraw(e.targetAccountId, e.accountId, "follow");
    await homeFeed.removeAuthor(e.accountId, e.targetAccountId);
    await lists.forgetFollow(e.accountId, e.targetAccountId);
    await endorsements.forget(e.accountId, e.targetAccountId);
    renderCache.touchAccount(e.accountId);
    renderCache.touchAccount(e.targetAccountId);
  });
  // An unmuted account's statuses come back into the home feed.
  events.within("mute.removed", (e) => homeFeed.backfill(e.accountId, e.targetAccountId));

  // ── Accounts
  // A sign-up is told to staff (and, pushed and streamed, reaches them wherever they are).
  events.within("account.registered", (e) => notifications.signedUp(e.accountId));
  events.within("account.updated", (e) => {
    renderCache.touchAccount(e.accountId);
    // Its standing (a suspension lifted or made) is read again with its tokens' next use.
    services.tokens.forgetAccount(e.accountId);
  });
  events.within("account.deleted", (e) => services.tokens.forgetAccount(e.accountId));
  // A locked account that opens up approves the follow requests waiting on it.
  events.within("account.unlocked", (e) => follows.authorizeAll(e.accountId));

  // ── Statuses, local and remote, and boosts: counted, into home feeds (which the transports
  // then tell), notified, into lists and direct-message threads. Deleted ones are counted
  // back, their boost notification withdrawn, and leave the threads; edited ones are notified.
  events.within("status.created", async (e) => {
    await counters.statusAdded(e.status);
    // Fetched to fill a thread or a profile: counted, and that is all (no feed, list or notification).
    if (e.backfill) return;
    e.homeRecipients = await homeFeed.deliver(e.status, e.original);
    await notifications.statusCreated(e.status, e.original);
    await lists.deliver(e.status, e.original);
    await conversations.added(e.status);
  });
  // An imported status is counted, and that is all: no feed, notification, stream or activity.
  events.within("status.imported", (e) => counters.statusImported(e.status));
  events.within("status.deleted", async (e) => {
    await counters.statusRemoved(e.status);
    await notifications.statusDeleted(e.status);
    await conversations.removed(e.status);
  });
  // An edit is told to the local accounts whose accepted quotes quote it (`quoted_update`, about their quote).
  events.within("status.updated", async (e) => {
    await notifications.statusEdited(e.status, e.previous);
    for (const q of await quotes.localQuotesOf(e.status.id)) await notifications.notify(q.accountId, e.status.accountId, "quoted_update", q.statusId);
  });

  // ── Quotes: an accepted one counts on the quoted status and tells its author (`quote`, about the
  // quoting status); a revoked one, or an accepted one whose quoting status goes, counts back.
  events.within("quote.accepted", async (e) => {
    if (e.quote.quotedStatusId !== null) await counters.quotes(e.quote.quotedStatusId, 1);
    if (e.quote.quotedAccountId !== null) await notifications.notify(e.quote.quotedAccountId, e.quote.accountId, "quote", e.quote.statusId);
  });
  events.within("quote.revoked", async (e) => {
    if (e.quote.quotedStatusId !== null) await counters.quotes(e.quote.quotedStatusId, -1);
  });
  events.within("quote.removed", async (e) => {
    if (e.quote.state === "accepted" && e.quote.quotedStatusId !== null) await counters.quotes(e.quote.quotedStatusId, -1);
  });

  // ── Favourites: counted and notified, or taken back.
  events.within("favourite.created", async (e) => {
    await counters.favourites(e.statusId, 1);
    await notifications.notify(e.statusAccountId, e.accountId, "favourite", e.statusId);
  });
  events.within("favourite.removed", async (e) => {
    await counters.favourites(e.statusId, -1);
    await notifications.withdraw(e.statusAccountId, e.accountId, "favourite", e.statusId);
  });

  // ── Polls: the wheel is in memory and re-reads the poll when it fires, so it is told once the
  // poll exists. An ended poll is told to its author and voters.
  events.afterCommit("poll.opened", (e) => polls.scheduleEnd(e.pollId, e.expiresAt));
  events.within("poll.ended", async (e) => notifications.pollEnded(e.accountId, e.statusId, await polls.voters(e.pollId)));

  // ── Reports: staff are told (once per reported account while its reports wait).
  events.within("report.created", (e) => notifications.reported({ id: e.reportId, accountId: e.accountId, targetAccountId: e.targetAccountId }));

  // ── Notifications: one push delivery per subscription that wants it, written with the notification.
  events.within("notification.created", (e) => pushDeliveries.enqueue(e.notification));

  // ── Transports, after commit. Each lists the events it hears in its own subscribe.
  // notification.created: the pushes are sent.
  pushDeliveries.subscribe(events);
  // status.created, status.updated: the link preview is fetched.
  services.linkCards.subscribe(events);
  // status.created, status.updated of a remote status with media: its images are copied (CACHE_REMOTE_MEDIA).
  services.remoteMediaCache?.subscribe(events);
  // Statuses, lists, notifications, conversations, filters, announcements, quotes' states: to open streams.
  transports.streams?.(events);
  // Follows, blocks, statuses, favourites, boosts, pins, polls, profiles, moves, reports, quotes: to other servers.
  transports.federation?.(events);
  // What streams hear, to the other serving threads' streams.
  transports.threads?.(events);
  // What streams hear, and revoked tokens, changed filters and blocks (their caches): to other processes on PostgreSQL.
  transports.processes?.(events);
}

/**
 * Another process made a kind of cache stale (src/infra/pg-generations.ts): the one call that
 * forgets it here, for `keys` (or "*": all). `database` has nothing here: what is keyed on it
 * (the kept JSON) compares the generation itself.
 */
export function forgetKind(services: Services, kind: CacheKind, keys: string[]): void {
  const all = keys.includes("*");
  if (kind === "render") applyRenderKeys(services.renderCache, keys);
  else if (kind === "moderation") services.moderation.forgetCached();
  else if (kind === "domain-blocks") services.domainBlocks.forgetCached();
  else if (kind === "filters") services.filters.forgetCached();
  else if (kind === "notification-policies") services.notificationPolicies.forgetCached();
  else if (kind === "federation-domains") services.federationDomains.reload();
  else if (kind === "tokens") {
    if (all) services.tokens.forgetAll();
    else for (const key of keys) services.tokens.forgetAccount(Number(key));
  }
}
