/**
 * A serving thread (WEB_THREADS > 1): a Bun Worker that listens on the main thread's port
 * (SO_REUSEPORT: the kernel spreads new connections over the threads) and answers the reads
 * of src/http/read-routes.ts from its own read-only connection to the database, with its own
 * services, caches and stream hub. Nothing is started here that writes or reaches another
 * server: no queues, no federation, no jobs on the wheel (which beats the streams' keep-alives
 * only). Everything else is passed to the main thread and its answer returned as it is, the
 * bodies both ways carried chunk by chunk as they are read (src/threads/body-stream.ts).
 *
 * What the main thread's writes change shows here at once: before each request (and each
 * event) the thread compares the database's data_version, which moves when another connection
 * commits, and forgets what it keeps in memory when it moved (forgetCached); tokens check it
 * themselves, the kept JSON documents are keyed on it. The render cache, the one worth keeping
 * warm under writes, replays the main thread's own invalidations instead, posted after commit
 * and numbered: a request first awaits those the main thread posted before it answered. The
 * main thread commits before it answers, so a client's read after its write, wherever it
 * lands, sees the write. Stream events come from the main thread after commit and are
 * rendered here for this thread's connections.
 */
import type { Server } from "bun";
import { SystemClock } from "./clock.ts";
import type { AppContext } from "./context.ts";
import { openDatabase } from "./db/connection.ts";
import { createApp } from "./http/app.ts";
import { bodyLimit, pathOf } from "./http/body-limits.ts";
import { createEdge, SERVER_BODY_LIMIT } from "./http/edge.ts";
import { answersHere, NEEDS_OWNER, OWNERS_WORK } from "./http/read-routes.ts";
import { isStreamingPath } from "./http/streaming.ts";
import { IdGenerator } from "./ids.ts";
import { log } from "./log.ts";
import { mediaStorageFor } from "./media-files/stores.ts";
import type { PushNotificationView } from "./models/views.ts";
import { routePath } from "./net/paths.ts";
import type { Urls } from "./presenters/account.ts";
import { serializePushNotification } from "./presenters/push-notification.ts";
import { forgetCached, registerReaderConsequences } from "./services/consequences.ts";
import { createServices } from "./services/index.ts";
import { loadInstanceKeys } from "./services/instance-keys.ts";
import { Streaming } from "./streaming/index.ts";
import { WS_OPTIONS, type WsData } from "./streaming/websocket.ts";
import { BodyReceiver, BodySender, INLINE_BYTES } from "./threads/body-stream.ts";
import { headerPairs, type FromThread, type PassedResponse, type ThreadStart, type ToThread } from "./threads/protocol.ts";

declare const self: Worker;
const RATE_LIMIT_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];
const tell = (message: FromThread, transfer: Transferable[] = []) => self.postMessage(message, transfer);

self.onmessage = (e: MessageEvent<ToThread>) => {
  if (e.data.type !== "start") return;
  serve(e.data).catch((error) => tell({ type: "failed", error: String(error) }));
};

async function serve(start: ThreadStart) {
  const { config } = start;
  const clock = new SystemClock();
  const database = openDatabase(config.dataDir, { readonly: true });
  const keys = await loadInstanceKeys(database.port);
  const storage = mediaStorageFor(config);
  const urls: Urls = { publicUrl: config.publicUrl, media: (path) => storage.url(path) };
  const ids = new IdGenerator(clock);
  const services = createServices({
    config,
    db: database.db,
    port: database.port,
    clock,
    ids,
    storage,
    keys,
    renderPush: (view: PushNotificationView) => serializePushNotification(urls, view),
    sharedCounters: start.counters ?? undefined,
    sharedFills: start.fills,
    servingThread: { federation: config.federation },
  });
  const ctx: AppContext = { config, clock, ids, db: database.db, databaseGeneration: () => database.port.generation(), storage, keys, services, urls };
  const app = createApp(ctx);
  const streaming = new Streaming(ctx);
  registerReaderConsequences(services.events, { streams: (events) => streaming.fanout.subscribe(events) });
  services.wheel.start();
  const edge = createEdge(ctx, app, streaming, null);

  // The main thread's commits, seen from this connection: SQLite's data_version, as serving threads
  // are SQLite's alone (readers of its file beside the writer; on PostgreSQL, processes share the work).
  const version = database.sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
  let seen = version.get()!.data_version;
  const catchUp = () => {
    const now = version.get()!.data_version;
    if (now !== seen) {
      seen = now;
      forgetCached(services, true);
    }
  };
  // The main thread's render-cache invalidations, applied in order (ThreadStart.renderSeq): a
  // request awaits those posted before the main thread answered whatever the client did last.
  const renderSeq = new Int32Array(start.renderSeq);
  const gauges = new Int32Array(start.gauges);
  let applied = 0;
  const appliedNow: (() => void)[] = [];
  const renderedUpToDate = async () => {
    Atomics.add(gauges, 2 * start.slot + 1, 1);
    while (Atomics.load(renderSeq, 0) > applied) await new Promise<void>((resolve) => appliedNow.push(resolve));
    Atomics.sub(gauges, 2 * start.slot + 1, 1);
  };
  const localAccount = async (id: string) => /^\d{1,19}$/.test(id) && (await services.accounts.get(Number(id)))?.domain === null;

  // Requests passed to the main thread, by id, until it answers; their bodies and their answers' carried meanwhile.
  const waiting = new Map<number, (answer: PassedResponse) => void>();
  const counted = () => Atomics.store(gauges, 2 * start.slot, waiting.size + requestBodies.size + answers.size);
  const requestBodies = new BodySender(tell, counted);
  const answers = new BodyReceiver(tell, counted);
  let nextId = 0;
  /** `begun`: this thread's own answer to a read it passes on after all (NEEDS_OWNER), which counted it against the rate limits. */
  const pass = async (request: Request, server: Server<WsData>, begun?: Response): Promise<Response> => {
    const path = routePath(pathOf(request.url));
    const id = ++nextId;
    const body = await bodyOf(request, id, bodyLimit(request.method, path));
    const answered = new Promise<PassedResponse>((resolve) => waiting.set(id, resolve));
    counted();
    const passed = { type: "request" as const, id, method: request.method, url: request.url, headers: headerPairs(request.headers), body: body.first, more: body.more, peer: server.requestIP(request)?.address ?? null, counted: begun !== undefined };
    tell(passed, body.first ? [body.first] : []);
    const answer = await answered;
    // The main thread answered: what it left unread of the body is not wanted.
    requestBodies.cancel(id);
    const response = new Response(answer.more ? answers.stream(id, answer.body, true) : answer.body, { status: answer.status, headers: answer.headers });
    // Counted here once: the count's headers are this thread's.
    for (const name of RATE_LIMIT_HEADERS) {
      const value = begun?.headers.get(name);
      if (value) response.headers.set(name, value);
    }
    return response;
  };

  /**
   * The body to pass: none when declared past its route's cap (the main thread answers 413 from
   * the header, reading nothing); whole when declared small (HTTP's framing bounds it by that
   * length, and one read is a few µs less than a stream); else carried as the main thread's
   * edge reads it, which counts it against the cap.
   */
  const bodyOf = async (request: Request, id: number, limit: number): Promise<{ first: ArrayBuffer | null; more: boolean }> => {
    const declared = Number(request.headers.get("content-length") ?? 0);
    if (!request.body || declared > limit) return { first: null, more: false };
    if (declared > 0 && declared <= INLINE_BYTES && !request.headers.has("transfer-encoding")) return { first: await request.arrayBuffer(), more: false };
    return requestBodies.open(id, request.body);
  };

  // Whether this thread may have a stream open, for the main thread (ThreadStart.listening): set
  // before a stream connects (in the same turn), cleared once a second while none is open.
  const listening = new Int32Array(start.listening);
  const listen = () => Atomics.store(listening, start.slot, 1);
  const quiet = setInterval(() => streaming.hub.connectionCount === 0 && Atomics.store(listening, start.slot, 0), 1000);
  quiet.unref?.();
  let toldAt = 0;
  const server = Bun.serve<WsData>({
    port: config.port,
    hostname: config.host,
    reusePort: true,
    maxRequestBodySize: SERVER_BODY_LIMIT,
    idleTimeout: 60,
    async fetch(request, srv) {
      const path = routePath(pathOf(request.url));
      if (!request.url.startsWith("http")) return pass(request, srv);
      // Awaited only when it is a promise (the one route that reads the account): the others decide at once.
      const here = answersHere(request, path, localAccount);
      if (!(typeof here === "boolean" ? here : await here)) return pass(request, srv);
      if (isStreamingPath(path)) listen();
      if (Atomics.load(renderSeq, 0) > applied) await renderedUpToDate();
      catchUp();
      const response = await edge(request, srv);
      const needsOwner = response?.headers.get(NEEDS_OWNER);
      if (needsOwner) {
        // Told once a minute at most: a popular status would otherwise fill the log.
        if (needsOwner !== OWNERS_WORK && clock.now() - toldAt > 60_000) {
          toldAt = clock.now();
          log("warn", "a read tried to write: passed to the main thread (take its route off src/http/read-routes.ts?)", { path });
        }
        return pass(request, srv, response!);
      }
      return response;
    },
    websocket: {
      ...WS_OPTIONS,
      open: (ws) => {
        listen();
        // Bun types the handler `void | Promise<void>`; ours is synchronous.
        void streaming.websocket.open(ws);
      },
      message: (ws, message) => streaming.websocket.message(ws, message),
      pong: (ws, data) => streaming.websocket.pong(ws, data),
      close: (ws, code, reason) => streaming.websocket.close(ws, code, reason),
    },
  });

  self.onmessage = async (e: MessageEvent<ToThread>) => {
    const message = e.data;
    if (message.type === "response") {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
      counted();
    } else if (message.type === "chunk" || message.type === "end" || message.type === "abort") answers.receive(message);
    else if (message.type === "pull") void requestBodies.pull(message.id);
    else if (message.type === "cancel") requestBodies.cancel(message.id);
    else if (message.type === "render") {
      for (const change of message.changes) {
        if (change === "clear") services.renderCache.clear();
        else if ("status" in change) services.renderCache.invalidateStatus(change.status);
        else services.renderCache.touchAccount(change.account);
      }
      applied = message.seq;
      for (const resolve of appliedNow.splice(0)) resolve();
    } else if (message.type === "event") {
      catchUp();
      void services.events.emit(message.event);
    } else if (message.type === "stop") {
      clearInterval(quiet);
      requestBodies.cancelAll();
      answers.dropAll();
      streaming.closeAll();
      const graceful = server.stop();
      if ((await Promise.race([graceful.then(() => true), Bun.sleep(3000).then(() => false)])) === false) await server.stop(true);
      services.wheel.stop();
      database.close();
      tell({ type: "stopped" });
    }
  };
  tell({ type: "ready" });
}
