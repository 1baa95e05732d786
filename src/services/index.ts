import { SearchService } from "./search.ts";
import { TagFollowService } from "./tag-follows.ts";
import { EditingService } from "./statuses/editing.ts";
import { StatusMedia } from "./media/status-media.ts";
import { GroupCommit } from "../infra/group-commit.ts";
import { TicketSigner } from "../auth/tickets.ts";
import { AccountService } from "./accounts/accounts.ts";
import { InviteService } from "./accounts/invites.ts";
import { RegistrationService } from "./accounts/registrations.ts";
import { FollowService } from "./accounts/follows.ts";
import { MarkerService } from "./accounts/markers.ts";
import { ModerationService } from "./accounts/moderation.ts";
import { AccountDomainBlocks } from "./accounts/domain-blocks.ts";
import { ProfileImageService } from "./accounts/profile-images.ts";
import { EventBus } from "../infra/events.ts";
import { FederationActors } from "./remote/local-actors.ts";
import { FederationInbox } from "./remote/inbox.ts";
import { RemoteAccounts } from "./remote/accounts.ts";
import { RemoteMentions } from "./remote/mentions.ts";
import { RemoteNotes } from "./remote/notes.ts";
import { RemoteInteractions } from "./remote/interactions.ts";
import { GoneAccounts } from "./remote/gone-accounts.ts";
import { RemoteThreads } from "./remote/threads.ts";
import { NoteQuotes } from "./remote/note-quotes.ts";
import { QuoteChecks, QuoteRechecks } from "./remote/quote-checks.ts";
import { QuoteStamps } from "./remote/quote-stamps.ts";
import { RemoteQuotes } from "./remote/quotes.ts";
import { ThreadFill } from "./remote/thread-fill.ts";
import { AccountHistory } from "./remote/account-history.ts";
import { AsyncRefreshes } from "./async-refreshes.ts";
import { AccountMoves } from "./remote/moves.ts";
import { ActorRefs } from "./accounts/actor-refs.ts";
import { AccountAliases } from "./accounts/aliases.ts";
import { FollowerMoves } from "./accounts/follower-moves.ts";
import { AccountMoving } from "./accounts/moving.ts";
import { FederationDomains } from "./remote/domains.ts";
import { Relays } from "./remote/relays.ts";
import { Tombstones } from "./remote/tombstones.ts";
import { findTools, mediaTools } from "../media-files/ffmpeg.ts";
import { MediaService } from "./media/media.ts";
import { RemoteMediaCache } from "./media/remote-media-cache.ts";
import { LinkCards } from "./statuses/link-cards.ts";
import { PushDeliveries } from "./push/deliveries.ts";
import { NotificationPolicies } from "./notifications/policy.ts";
import { postToPushService } from "../net/push-post.ts";
import { PushSubscriptions } from "./push/subscriptions.ts";
import { TokenSeal } from "./push/token-seal.ts";
import { TWO_FACTOR_KEY_FILE, TwoFactor } from "./accounts/two-factor.ts";
import { VapidSigner } from "./push/web-push.ts";
import { Directory } from "./accounts/directory.ts";
import { Endorsements } from "./accounts/endorsements.ts";
import { OutgoingHttp, systemResolver } from "../net/outgoing.ts";
import { ROOKERY_VERSION } from "../version.ts";
import { ConversationService } from "./conversations.ts";
import { FilterService } from "./filters.ts";
import { V1FilterService } from "./filters-v1.ts";
import { ListService } from "./lists.ts";
import { FeaturedTagService } from "./featured-tags.ts";
import { InstanceInfo } from "./instance-info.ts";
import { ReportService } from "./reports.ts";
import { EmbedLoader } from "./embeds.ts";
import { CustomEmojiService } from "./custom-emojis.ts";
import { AnnouncementService } from "./announcements.ts";
import { NotificationService } from "./notifications/notifications.ts";
import { bucketsWithInbox, RateLimiter, SIGN_IN_BUCKETS } from "../infra/rate-limits.ts";
import { SharedIds } from "../infra/shared-ids.ts";
import { SharedCounters } from "../infra/shared-counters.ts";
import { ApplicationService } from "./oauth/applications.ts";
import { GrantService } from "./oauth/grants.ts";
import { TokenService } from "./oauth/tokens.ts";
import { Passwords } from "./accounts/passwords.ts";
import { WebSessionService } from "./oauth/web-sessions.ts";
import { StatusActionService } from "./statuses/actions.ts";
import { Counters } from "./statuses/counters.ts";
import { RenderCache } from "./statuses/render-cache.ts";
import { ScheduledStatusService } from "./statuses/scheduled.ts";
import { HomeFeedService } from "./statuses/home-feed.ts";
import { IdempotencyStore } from "./statuses/idempotency.ts";
import { StatusComposer } from "./statuses/composer.ts";
import { StatusCommands } from "./statuses/commands.ts";
import { PollService } from "./statuses/polls.ts";
import { PostingService } from "./statuses/posting.ts";
import { NewStatuses } from "./statuses/new-status.ts";
import { StatusReader } from "./statuses/reader.ts";
import { RemovalService } from "./statuses/removal.ts";
import { ThreadService } from "./statuses/threads.ts";
import { TimelineService } from "./statuses/timelines.ts";
import { StatusPolicy } from "./statuses/visibility.ts";
import { TimerWheel } from "../infra/timer-wheel.ts";
import { ExportService } from "./portability/exports.ts";
import { ImportActions } from "./portability/import-actions.ts";
import { ImportOverwrite } from "./portability/import-overwrite.ts";
import { ImportService } from "./portability/imports.ts";
import { ImportWorker } from "./portability/import-worker.ts";
import { ArchiveExport } from "./archive/export.ts";
import { ArchiveImport } from "./archive/import.ts";
import { QuotePolicy } from "./quotes/policy.ts";
import { QuoteService } from "./quotes/quotes.ts";
import { QuoteReads } from "./quotes/reads.ts";
import { QuoteListing } from "./quotes/listing.ts";
import { AuditLog } from "./admin/audit-log.ts";
import { AccountPurge } from "./admin/account-purge.ts";
import { AdminAccounts } from "./admin/accounts.ts";
import { AdminReports } from "./admin/reports.ts";
import { AdminDomains } from "./admin/domains.ts";
import { FederationTraffic } from "./admin/traffic.ts";
import { FederationHealth } from "./admin/federation-health.ts";
import { AdminInstance } from "./admin/instance.ts";
import type { DeliveryQueueReport } from "../models/federation-health.ts";
import { DATABASE_FILE } from "../db/connection.ts";

export type { ServiceDeps, SharedLimiter, SharedState } from "./deps.ts";
import type { ServiceDeps, SharedLimiter } from "./deps.ts";

const NO_QUEUE: DeliveryQueueReport = { total: 0, due: 0, retrying: 0, nextAt: null, failing: [] };

/** A remote image is copied within this, or stays at its own server. */
const REMOTE_MEDIA_TIMEOUT_MS = 30_000;

export function createServices(deps: ServiceDeps) {
  const { port, clock, ids, config, storage } = deps;
  const events = new EventBus(port);
  const writes = new GroupCommit(port);
  const wheel = new TimerWheel(clock, deps.shared?.timerClaims ?? null, deps.shared?.timers ?? null);

  const tokens = new TokenService(port, ids, clock, events);
  const applications = new ApplicationService(port, ids, clock);
  // Local statuses and profiles keep the custom emojis they use when they are written.
  const customEmojis = new CustomEmojiService(port, ids, clock, storage);
  const localEmojis = (texts: string[]) => customEmojis.inTexts(texts);
  const accounts = new AccountService(port, ids, clock, config.publicUrl, new ProfileImageService(storage), events, localEmojis);
  // Two-factor secrets are sealed under their own key file beside the database (see TwoFactor).
  const twoFactor = new TwoFactor(port, ids, clock, new TokenSeal(config.dataDir, TWO_FACTOR_KEY_FILE), config.domain);
  const grants = new GrantService(port, ids, clock, applications, tokens, accounts, (accountId) => twoFactor.enabled(accountId));
  // Sign-ups: REGISTRATIONS, approval, and the invite links that open the door whatever it says.
  const invites = new InviteService(port, ids, clock, config.publicUrl);
  // REGISTRATIONS is the mode until an admin saves one (/admin/settings), read at each sign-up.
  const instanceInfo = new InstanceInfo(port, ids, clock, config.publicUrl, config.registrations);
  const registrations = new RegistrationService(async () => (await instanceInfo.registrationsMode()).mode, accounts, invites);
  const webSessions = new WebSessionService(port, ids, clock);
  const passwords = new Passwords(port, webSessions);
  const tickets = new TicketSigner(deps.keys.secret, clock);
  const follows = new FollowService(port, ids, clock, events);
  const domainBlocks = new AccountDomainBlocks(port, ids, clock, follows, events);
  const moderation = new ModerationService(port, ids, clock, follows, events, domainBlocks);
  const directory = new Directory(port, moderation);
  const endorsements = new Endorsements(port, ids, clock, follows);
  const markers = new MarkerService(port, clock);
  const notificationPolicies = new NotificationPolicies(port, ids, clock);
  const notifications = new NotificationService(port, ids, clock, moderation, events, notificationPolicies);

  const policy = new StatusPolicy(follows, moderation, port);
  const statusMedia = new StatusMedia(port, clock);
  const quotePolicy = new QuotePolicy(port, follows, moderation, policy);
  const reader = new StatusReader(port, clock, policy, (statusIds) => statusMedia.forStatuses(statusIds), { reads: new QuoteReads(port, policy, moderation), policy: quotePolicy });
  const homeFeed = new HomeFeedService(port, clock);
  const renderCache = new RenderCache(deps.renderCacheChanges, port.dialect === "postgres" ? port : undefined);
  const counters = new Counters(port, renderCache);
  const newStatuses = new NewStatuses(port);
  // Quote posts: who may quote what, and the quotes' states (their consequences: consequences.ts).
  const quotes = new QuoteService(port, ids, clock, events, quotePolicy, reader, renderCache, config.publicUrl);
  const posting = new PostingService(port, ids, clock, config, accounts, moderation, reader, events, counters, statusMedia, newStatuses, quotes, localEmojis);
  const removal = new RemovalService(port, events, renderCache, statusMedia, quotes);
  const statusActions = new StatusActionService(port, ids, clock, reader, moderation, removal, events, newStatuses);
  const polls = new PollService(port, ids, clock, reader, moderation, wheel, events);
  const lists = new ListService(port, ids, clock, events);
  const timelines = new TimelineService(port, reader, moderation, lists, renderCache);
  const threads = new ThreadService(port, reader, moderation);
  const idempotency = new IdempotencyStore(port, clock);
  const media = new MediaService(port, ids, clock, storage, renderCache, { workers: config.mediaWorkers, transcodes: config.transcodeWorkers, tools: () => mediaTools(config.dataDir), available: findTools() !== null, claims: deps.shared?.mediaClaims });

  const scheduled = new ScheduledStatusService(port, ids, clock, posting, wheel);
  const rateLimits: RateLimiter | SharedLimiter = deps.shared?.limiter(bucketsWithInbox(config.inboxRateLimit)) ?? new RateLimiter(clock, bucketsWithInbox(config.inboxRateLimit), deps.sharedCounters ? new SharedCounters(deps.sharedCounters) : null);
  const signInLimits: RateLimiter | SharedLimiter = deps.shared?.limiter(SIGN_IN_BUCKETS) ?? new RateLimiter(clock, SIGN_IN_BUCKETS);
  const filters = new FilterService(port, ids, clock, events, reader);
  const filtersV1 = new V1FilterService(filters);
  const conversations = new ConversationService(port, ids, notifications, events);
  const goneAccounts = new GoneAccounts(port, follows, removal);
  const federationDomains = new FederationDomains(port, ids, clock, events, config.whitelistMode, new URL(config.publicUrl).hostname.toLowerCase(), goneAccounts);
  // Every request to another server (federation, link previews, the media cache, push) goes through this one.
  const outgoing = new OutgoingHttp({
    allowPrivateAddresses: config.allowPrivateAddresses,
    refusesHost: (host) => federationDomains.refuses(host),
    resolve: deps.resolve ?? systemResolver,
    transport: deps.transport,
    userAgent: `Rookery/${ROOKERY_VERSION} (+${config.publicUrl}/)`,
    limits: config.outgoing,
  });
  // What is fetched from other servers, made by src/federation of the two above (none while FEDERATION=off).
  // Federation counts what it sends and receives here, for the admin pages' health page.
  const federationTraffic = new FederationTraffic(port, clock);
  const fetcher = deps.remote?.({ outgoing, refuses: (url) => federationDomains.refuses(url), traffic: federationTraffic }) ?? null;
  const remoteAccounts = new RemoteAccounts(port, ids, clock, events, federationDomains, fetcher, goneAccounts);
  const announcements = new AnnouncementService(port, ids, clock, config.publicUrl, accounts, reader, customEmojis, events);
  const reports = new ReportService(port, ids, clock, config.publicUrl, accounts, reader, instanceInfo, events);
  const embeds = new EmbedLoader(accounts, reader, reports);
  // Staff actions (src/services/admin): on accounts, reports and domains, each in the audit log.
  const auditLog = new AuditLog(port, ids, clock);
  const adminReports = new AdminReports(port, clock, accounts, reader, removal, instanceInfo, auditLog);
  const accountPurge = new AccountPurge(port, events, follows, removal, tokens, webSessions, new ProfileImageService(storage));
  const adminAccounts = new AdminAccounts(port, clock, accounts, accountPurge, auditLog, adminReports, events, twoFactor);
  const adminDomains = new AdminDomains(port, federationDomains, auditLog);

  const editing = new EditingService(port, ids, clock, reader, posting, events, renderCache, { uploads: media, statuses: statusMedia }, newStatuses, (id) => quotes.quotedStatusOf(id));
  const federationActors = new FederationActors(port);
  // Quotes remote posts make are checked against their stamps (FEP-044f) before they count.
  // Quotes that could not be settled for want of an answer are checked again later, off the wheel.
  const quoteChecks = new QuoteChecks(port, clock, wheel);
  const noteQuotes = new NoteQuotes(quotes, new QuoteStamps(fetcher), (id) => accounts.get(id), (id) => reader.findRow(id), quoteChecks);
  // Relays the instance actor follows: what they bring fills the federated timeline.
  const relays = new Relays(port, ids, clock, events, (url) => federationDomains.refuses(url), fetcher, config.publicUrl);
  // The admin pages' changes to the server itself (relays, emojis, rules, announcements, description), each in the audit log.
  const adminInstance = new AdminInstance(port, auditLog, relays, customEmojis, instanceInfo, announcements, invites);
  const remoteNotes = new RemoteNotes(federationActors, remoteAccounts, posting, reader, moderation, editing, polls, noteQuotes, fetcher, relays, new Tombstones(port, clock), writes);
  const quoteRechecks = new QuoteRechecks(quoteChecks, wheel, (id) => remoteNotes.recheckQuote(id));
  const remoteQuotes = new RemoteQuotes(quotes, remoteNotes, remoteAccounts, reader, (id) => accounts.get(id));
  const search = new SearchService(port, clock, reader, remoteAccounts, remoteNotes, fetcher, config.publicUrl, config.domain);
  const tagFollows = new TagFollowService(port, ids, clock, search);
  const featuredTags = new FeaturedTagService(port, ids, clock, search);
  const remoteInteractions = new RemoteInteractions(federationActors, remoteAccounts, statusActions, removal, reader, remoteNotes, fetcher, relays);
  // A thread's missing replies, fetched in the background when it is opened; clients follow the work as an async refresh.
  const asyncRefreshes = new AsyncRefreshes(clock);
  const threadFill = new ThreadFill(port, clock, remoteNotes, remoteAccounts, asyncRefreshes, fetcher, deps.sharedFills ? new SharedIds(deps.sharedFills) : null);
  const remoteThreads = new RemoteThreads(threads, reader, remoteNotes, threadFill, fetcher, deps.servingThread ?? null);
  // A remote account's pinned and newest public posts, fetched when it is followed or its profile opened.
  const accountHistory = new AccountHistory(port, clock, accounts, remoteNotes, federationActors, statusActions, fetcher);
  // Moves, in and out, and the aliases they are believed by: accounts named by handle or IRI, here or fetched.
  const actorRefs = new ActorRefs(accounts, remoteAccounts, fetcher, config.publicUrl);
  const followerMoves = new FollowerMoves(port, clock, follows, moderation);
  const accountMoves = new AccountMoves(port, remoteAccounts, actorRefs, followerMoves, events);
  const accountAliases = new AccountAliases(port, actorRefs, events);
  const accountMoving = new AccountMoving(port, clock, accounts, actorRefs, followerMoves, events);
  const federationInbox = new FederationInbox(federationActors, remoteAccounts, follows, removal, reader, moderation, remoteNotes, goneAccounts);
  const remoteMentions = new RemoteMentions(remoteAccounts, config.domain);
  // Lists in and out as CSV: imports are worked off in the background, at a bounded rate per server.
  const exports = new ExportService(port, clock, config.publicUrl, config.domain);
  const portabilityDeps = { db: port, follows, moderation, domainBlocks, lists, statusActions, publicUrl: config.publicUrl };
  const importActions = new ImportActions({
    ...portabilityDeps,
    search,
    remoteAccounts,
    refuses: (host) => federationDomains.refuses(host),
    answers: (host, signal) => answersHttp(outgoing, host, signal),
  });
  const importWorker = new ImportWorker(port, clock, importActions, new ImportOverwrite(portabilityDeps), config.importRates);
  const imports = new ImportService(port, ids, clock, config.domain, () => importWorker.wake());
  const composer = new StatusComposer(writes, posting, scheduled, reader, idempotency, remoteMentions, deps.shared?.idempotency ?? null);
  const statusCommands = new StatusCommands(writes, reader, accounts, statusActions, removal, polls, editing, remoteMentions, quotes);
  // Housekeeping on the wheel, once an hour: unattached media past their day of grace,
  // rate-limit counters of windows already over, Idempotency-Keys past their hour.
  wheel.handle("maintenance", async () => {
    await rateLimits.sweep();
    await signInLimits.sweep();
    await idempotency.sweep();
    await deps.shared?.sweep();
    wheel.schedule("maintenance", "hourly", clock.now() + 60 * 60 * 1000);
    await media.cleanup();
  });

  // Web Push subscriptions go with their token.
  const tokenSeal = new TokenSeal(config.dataDir);
  const pushSubscriptions = new PushSubscriptions(port, ids, clock, config.allowPrivateAddresses, tokenSeal);
  const vapid = new VapidSigner(deps.keys.vapidPrivateJwk, deps.keys.vapidPublicKey, config.contactEmail ? `mailto:${config.contactEmail}` : config.publicUrl, clock);
  const pushDeliveries = new PushDeliveries(port, ids, clock, wheel, deps.renderPush, tokenSeal, vapid, (endpoint, init) => postToPushService(outgoing, endpoint, init), pushSubscriptions, writes);
  const linkCards = new LinkCards(port, ids, clock, renderCache, writes, (url, maxBytes, timeoutMs) => outgoing.bytes(url, { maxBytes, totalMs: timeoutMs, accept: "text/html" }));
  // Remote statuses' images are copied here when the operator asked for it.
  const federationHealth = new FederationHealth({
    db: port,
    clock,
    dataDir: config.dataDir,
    databaseFile: DATABASE_FILE,
    traffic: federationTraffic,
    relays,
    deliveryQueue: deps.deliveryQueue ?? (async () => NO_QUEUE),
    remoteCacheLimit: config.remoteMediaCache?.maxTotalBytes ?? null,
    mediaBucket: config.mediaStorage.kind === "s3" ? config.mediaStorage.bucket : null,
  });
  const remoteMediaCache = config.remoteMediaCache
    ? new RemoteMediaCache(port, storage, renderCache, {
        maxTotalBytes: config.remoteMediaCache.maxTotalBytes,
        download: (url, maxBytes) => outgoing.bytes(url, { maxBytes, totalMs: REMOTE_MEDIA_TIMEOUT_MS, accept: "image/*" }),
      })
    : null;
  // An account's archive: written in Mastodon's layout, and read back in from one.
  const archiveExport = deps.archiveRenderer ? new ArchiveExport(port, clock, storage, accounts, reader, statusMedia, polls, deps.archiveRenderer) : null;
  const archiveImport = new ArchiveImport(port, clock, posting, media);
  return {
    auditLog,
    adminAccounts,
    adminReports,
    adminDomains,
    federationTraffic,
    federationHealth,
    adminInstance,
    quotes,
    quoteListing: new QuoteListing(port, reader),
    archiveExport,
    archiveImport,
    outgoing,
    writes,
    events,
    federationActors,
    remoteAccounts,
    remoteNotes,
    remoteInteractions,
    goneAccounts,
    remoteThreads,
    remoteQuotes,
    asyncRefreshes,
    threadFill,
    accountHistory,
    accountMoves,
    accountAliases,
    accountMoving,
    linkCards,
    remoteMediaCache,
    pushSubscriptions,
    pushDeliveries,
    notificationPolicies,
    directory,
    endorsements,
    federationDomains,
    federationInbox,
    relays,
    quoteChecks,
    quoteRechecks,
    wheel,
    tokens,
    applications,
    accounts,
    invites,
    registrations,
    grants,
    webSessions,
    passwords,
    twoFactor,
    tickets,
    follows,
    moderation,
    domainBlocks,
    markers,
    notifications,
    reader,
    homeFeed,
    counters,
    posting,
    editing,
    removal,
    statusActions,
    polls,
    timelines,
    threads,
    idempotency,
    composer,
    statusCommands,
    renderCache,
    media,
    statusMedia,
    scheduled,
    rateLimits,
    signInLimits,
    filters,
    filtersV1,
    lists,
    conversations,
    search,
    tagFollows,
    featuredTags,
    instanceInfo,
    reports,
    embeds,
    customEmojis,
    announcements,
    exports,
    imports,
    importWorker,
  };
}

/** Whether a server answers HTTP at all (any status below 500): an unknown account is not a server that is down. */
async function answersHttp(outgoing: OutgoingHttp, host: string, signal: AbortSignal): Promise<boolean> {
  try {
    const response = await outgoing.fetch(`https://${host}/.well-known/host-meta`, { signal }, { maxBytes: 64 * 1024 });
    await response.body?.cancel().catch(() => {});
    return response.status < 500;
  } catch {
    return false;
  }
}

export type Services = ReturnType<typeof createServices>;
