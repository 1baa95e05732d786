import type { Server } from "bun";
import type { Database } from "bun:sqlite";
import { SystemClock, type Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { AppContext } from "./context.ts";
import { largestId } from "./db/largest-id.ts";
import { openServerDatabase, type ServerDatabase, type SharedPieces } from "./server-database.ts";
import { createApp, type App } from "./http/app.ts";
import { createEdge, SERVER_BODY_LIMIT } from "./http/edge.ts";
import { IdGenerator } from "./ids.ts";
import { IdleMemory } from "./infra/idle-memory.ts";
import { log } from "./log.ts";
import { mediaStorageFor } from "./media-files/stores.ts";
import type { PushNotificationView } from "./models/views.ts";
import type { Urls } from "./presenters/account.ts";
import { serializePushNotification } from "./presenters/push-notification.ts";
import { createServices, type ServiceDeps } from "./services/index.ts";
import type { RenderCacheChange } from "./services/statuses/render-cache.ts";
import { forgetCached, registerConsequences } from "./services/consequences.ts";
import { SharedCounters } from "./infra/shared-counters.ts";
import { SharedIds } from "./infra/shared-ids.ts";
import { RequestsInFlight } from "./http/in-flight.ts";
import { afterCommitOf } from "./infra/after-commit.ts";
import { ServingThreads } from "./threads/pool.ts";
import { holdTimers, linkProcesses, shareTimers, startLinkedProcesses, type LinkedProcesses } from "./cross-process.ts";
import type { Resolver } from "./net/outgoing.ts";
import { loadInstanceKeys } from "./services/instance-keys.ts";
import { Streaming } from "./streaming/index.ts";
import { WS_OPTIONS, type WsData } from "./streaming/websocket.ts";
import { deliveryQueueReport } from "./federation/cli-report.ts";
import { lazyArchiveRenderer, lazyFederationCore, lazyRookeryFederation, type LazyFederation, type LazyFederationCore } from "./federation/lazy.ts";
import type { RemoteInfra } from "./services/remote/fetcher.ts";
import type { SharedQueue } from "./federation/stores.ts";

export interface RunningServer {
  url: string;
  server: Server<WsData>;
  streaming: Streaming;
  ctx: AppContext;
  app: App;
  /** SQLite's, or PostgreSQL's with a throwaway SQLite for the services not yet converted (server-database.ts). */
  database: ServerDatabase;
  /** ActivityPub, unless FEDERATION=off; Fedify is loaded at its first use (federation/lazy.ts). */
  federation: LazyFederation | null;
  /** The threads serving reads beside this one (WEB_THREADS > 1). */
  threads: ServingThreads | null;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  stop(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  /** When PUBLIC_URL was not given and the port is chosen by the OS (PORT=0), derive it from the real port. */
  derivePublicUrl?: boolean;
  /** Sees every SQL statement (for counting queries per request). */
  onQuery?: (sql: string) => void;
  /** How names are resolved for requests to other servers (tests map names to loopback addresses). */
  resolve?: Resolver;
  /** What sends requests to other servers once checked (tests reach plain-http servers as if over https). */
  transport?: typeof fetch;
  /**
   * A PostgreSQL URL through which this process shares its stream events and cache
   * invalidations with others (src/cross-process.ts): DATABASE_URL's when it is PostgreSQL; a
   * test may link servers on SQLite by it. Without either nothing of this is made.
   */
  linkProcesses?: string;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? new SystemClock();
  let handler: ((request: Request, server: Server<WsData>, peer?: string | null, counted?: boolean) => Promise<Response | undefined> | Response | undefined) | null = null;
  let streaming: Streaming | null = null;
  let idle: IdleMemory | null = null;
  // Until every serving thread listens too, requests get 503 and their connection closed: a
  // client that waits for a first answer (and keeps its connection) then reconnects, and the
  // kernel can give it to any thread, not only to this one, the first to listen.
  let accepting = false;
  // Listen first so that PORT=0 can tell the URL the server will print and emit.
  const server = Bun.serve<WsData>({
    port: config.port,
    hostname: config.host,
    // Serving threads listen on the same port; the kernel spreads connections over them all.
    reusePort: config.webThreads > 1,
    maxRequestBodySize: SERVER_BODY_LIMIT,
    idleTimeout: 60,
    fetch: (request, srv) => {
      idle?.request();
      return handler && accepting ? handler(request, srv) : new Response("Starting", { status: 503, headers: { connection: "close" } });
    },
    // Sockets exist only once the edge has upgraded them, by which time streaming is set.
    websocket: {
      ...WS_OPTIONS,
      open: (ws) => streaming!.websocket.open(ws),
      message: (ws, message) => streaming!.websocket.message(ws, message),
      pong: (ws, data) => streaming!.websocket.pong(ws, data),
      close: (ws, code, reason) => streaming!.websocket.close(ws, code, reason),
    },
  });
  if (options.derivePublicUrl && config.port === 0) {
    // Loopback servers other than 127.0.0.1 (federation tests) are called by their address.
    const url = new URL(`http://${config.host === "127.0.0.1" ? "localhost" : config.host}:${server.port}`);
    config = { ...config, port: server.port as number, publicUrl: url.origin, domain: url.host };
  }

  let database: ServerDatabase;
  let shared: SharedPieces | null = null;
  try {
    database = await openServerDatabase(config, { onQuery: options.onQuery });
  } catch (e) {
    void server.stop(true);
    throw e;
  }
  try {
    // PostgreSQL only, loaded only then (server-postgres.ts).
    shared = database.postgres ? await (await import("./server-postgres.ts")).sharePieces(database.postgres, database.port, clock, config) : null;
  } catch (e) {
    void server.stop(true);
    await database.close();
    throw e;
  }
  const ids = new IdGenerator(clock, shared?.idWorker ?? config.idWorker);
  ids.seed(await largestId(database.port));
  const keys = await loadInstanceKeys(database.port);
  const storage = mediaStorageFor(config);
  const counters = config.webThreads > 1 ? new SharedCounters().buffer : undefined;
  const fills = config.webThreads > 1 ? new SharedIds().buffer : undefined;
  let link: Awaited<ReturnType<typeof linkProcesses>> | null = null;
  try {
    const linkUrl = options.linkProcesses ?? database.postgres?.url;
    link = linkUrl ? await linkProcesses(linkUrl, database.port) : null;
  } catch (e) {
    void server.stop(true);
    await shared?.stop();
    await database.close();
    throw e;
  }
  // On PostgreSQL every process holds the timers any of them sets (a scheduled status, a poll's end).
  const timers = shared && link ? shareTimers(link, database.port) : null;
  // Serving threads read SQLite's file in parallel (WAL): SQLite's alone, as is AfterCommit of its one connection.
  // A request a serving thread passes on is no stream, and only a stream's is answered with nothing.
  const threads = fills ? new ServingThreads(config.webThreads - 1, config, counters ?? null, fills, (request, peer, counted) => handler!(request, server, peer, counted) as Promise<Response> | Response | undefined, afterCommitOf(database.sqlite!)) : null;
  const { services, urls, core } = assembleServices(
    { config, port: database.port, clock, ids, storage, keys, resolve: options.resolve, transport: options.transport, sharedCounters: counters, sharedFills: fills, renderCacheChanges: renderChanges(threads, link), shared: shared ? { ...shared.state, timers: timers ?? undefined } : undefined },
    { federation: config.federation, sharedQueue: shared?.queue },
  );
  // The federation rules are kept in memory (refuses answers synchronously): read before anything is served.
  await services.federationDomains.load();
  const ctx: AppContext = {
    config,
    clock,
    ids,
    databaseGeneration: () => database.port.generation(),
    storage,
    keys,
    services,
    urls,
  };
  const app = createApp(ctx);
  streaming = new Streaming(ctx);
  const federation = core ? lazyRookeryFederation(core, { urls: ctx.urls, services }) : null;
  let linked: LinkedProcesses | null = null;
  try {
    linked = link ? await startLinkedProcesses(link, services, streaming, threads) : null;
  } catch (e) {
    void server.stop(true);
    await shared?.stop();
    await database.close();
    throw e;
  }
  // Every listener, before the wheel can fire anything (a scheduled status or a poll come due).
  registerConsequences(services.events, services, {
    streams: (events) => streaming!.fanout.subscribe(events),
    federation: federation?.subscribe,
    threads: threads ? (events) => threads.subscribe(events) : undefined,
    processes: linked?.subscribe,
  });
  if (timers) await holdTimers(timers, services);
  await services.polls.restore();
  await services.media.restore();
  await services.scheduled.restore();
  await services.pushDeliveries.restore();
  await services.quoteChecks.restore();
  services.wheel.schedule("maintenance", "hourly", clock.now() + 60 * 1000);
  services.wheel.start();
  federation?.start();
  services.importWorker.start();
  const inFlight = new RequestsInFlight();
  handler = createEdge(ctx, app, streaming, federation?.handler ?? null, inFlight);
  const sqlite = database.sqlite;
  idle = new IdleMemory(() => {
    Bun.gc(true);
    // SQLite's page cache, in this process: SQLite's alone (PostgreSQL's is the server's).
    sqlite?.run("PRAGMA shrink_memory");
  });
  idle.start();
  await services.announcements.syncOtherWriters();
  // On PostgreSQL other writers are other processes, heard through the cache generations.
  const external = sqlite === null ? null : watchOtherWriters(sqlite, () => {
    forgetCached(services);
    services.announcements.syncOtherWriters().catch((e) => log("error", "announcements sync failed", { error: String(e).split("\n")[0] }));
  });

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // The serving threads first: their requests in flight may still be passed here.
      await threads?.stop();
      streaming?.closeAll();
      // In-flight requests get a moment to finish; a peer that stopped reading does not hold the stop up.
      const graceful = server.stop();
      if ((await Promise.race([graceful.then(() => true), Bun.sleep(3000).then(() => false)])) === false) await server.stop(true);
      // Handlers whose clients left run on: their writes finish before the database closes.
      if (!(await inFlight.settled(10_000))) log("warn", "stopping with requests still running", { requests: inFlight.count });
      if (external) clearInterval(external);
      idle?.stop();
      services.wheel.stop();
      await services.importWorker.stop();
      await services.threadFill.stop();
      await services.accountHistory.stop();
      await services.quoteRechecks.stop();
      await federation?.stop();
      await timers?.published();
      await linked?.stop();
      await services.linkCards.stop();
      await services.pushDeliveries.stop();
      await services.media.queue.stop();
      await services.remoteMediaCache?.stop();
      // Awaited: a batch holding a converted write (a delivered Note) commits after its promise.
      await services.writes.flush();
      // The last minute's federation counts (they are written at most a minute late).
      await services.federationTraffic.flush();
      await shared?.stop();
      await database.close();
      log("info", "stopped");
    })();
    return stopping;
  };
  try {
    await threads?.start();
    accepting = true;
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    url: `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`,
    server,
    streaming,
    ctx,
    app,
    database,
    federation,
    threads,
    stop,
  };
}

/** Who hears of the render cache's changes: the serving threads, other processes; nobody (no call at all) without either. */
function renderChanges(threads: ServingThreads | null, link: { renderChanged(change: RenderCacheChange): void } | null): ((change: RenderCacheChange) => void) | undefined {
  if (threads && link) return (change) => (threads.renderChanged(change), link.renderChanged(change));
  if (threads) return (change) => threads.renderChanged(change);
  return link ? (change) => link.renderChanged(change) : undefined;
}

/**
 * The admin CLI writes to the same database while the server runs (`rookery domains block`
 * removes accounts with their statuses and follows, `rookery announcements` makes and deletes
 * announcements). SQLite's data_version moves only when another connection commits; when it
 * has, rendered statuses (which carry counters) are dropped, and announcements made or deleted
 * there are told to the streams. Checked once a second, off the request path. `PRAGMA
 * data_version` is SQLite's alone: on PostgreSQL the cross-process generations play this part.
 */
function watchOtherWriters(sqlite: Database, changed: () => void): ReturnType<typeof setInterval> {
  const version = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
  let last = version.get()?.data_version;
  const timer = setInterval(() => {
    const now = version.get()?.data_version;
    if (now !== last) {
      last = now;
      changed();
    }
  }, 1000);
  timer.unref?.();
  return timer;
}

/**
 * The services as every process that writes builds them (the server, the CLI, the tests' own):
 * their URLs, the push renderer and the archive renderer they are given, and, with
 * `federation`, Fedify's side made as they are (of what it needs of them: the outgoing-HTTP
 * module, the domain rules), which gives them its fetcher and is returned to be registered
 * with them (dispatchers, inbox listeners, outgoing activities). The caller registers the
 * table of consequences once its transports exist.
 */
export function assembleServices(deps: Omit<ServiceDeps, "renderPush" | "remote" | "archiveRenderer" | "deliveryQueue">, options: { federation: boolean; sharedQueue?: SharedQueue }) {
  const { config, port, clock, storage } = deps;
  const urls: Urls = { publicUrl: config.publicUrl, media: (path) => storage.url(path) };
  const made: { core?: LazyFederationCore } = {};
  const remote = (infra: RemoteInfra) => (made.core = lazyFederationCore({ config, clock, port, sharedQueue: options.sharedQueue, ...infra })).fetcher;
  const services = createServices({
    ...deps,
    renderPush: (view: PushNotificationView) => serializePushNotification(urls, view),
    remote: options.federation ? remote : undefined,
    archiveRenderer: lazyArchiveRenderer({ config, port, clock, urls }),
    deliveryQueue: () => deliveryQueueReport(port, clock),
  });
  return { services, urls, core: made.core ?? null };
}
