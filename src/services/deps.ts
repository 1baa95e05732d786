import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { DatabasePort } from "../db/port.ts";
import type { IdGenerator } from "../ids.ts";
import type { TimerClaims } from "../infra/pg-timer-claims.ts";
import type { TimerShare } from "../infra/pg-timer-relay.ts";
import type { MediaClaims } from "../infra/pg-media-claims.ts";
import type { Bucket, RequestLimiter } from "../infra/rate-limits.ts";
import type { MediaStorage } from "../media-files/storage.ts";
import type { DeliveryQueueReport } from "../models/federation-health.ts";
import type { Resolver } from "../net/outgoing.ts";
import type { ArchiveRenderer } from "./archive/ports.ts";
import type { InstanceKeys } from "./instance-keys.ts";
import type { PushRenderer } from "./push/deliveries.ts";
import type { RemoteFetcher, RemoteInfra } from "./remote/fetcher.ts";
import type { IdempotencyGuard } from "./statuses/port-idempotency.ts";
import type { RenderCacheChange } from "./statuses/render-cache.ts";

// What the services are given (createServices in index.ts assembles them from it): the process's
// settings, clock, ids, storage and database, and what differs between the server, its serving
// threads, the commands and the tests.

export interface ServiceDeps {
  config: Config;
  /** The database, SQLite's or PostgreSQL's, through its port (src/db/port.ts). */
  port: DatabasePort;
  clock: Clock;
  ids: IdGenerator;
  storage: MediaStorage;
  keys: InstanceKeys;
  /** How host names are resolved for requests to other servers (tests map names to loopback). */
  resolve?: Resolver;
  /** What sends checked requests to other servers: the platform's fetch unless a test gives another. */
  transport?: typeof fetch;
  /** Renders a Web Push's payload (services decide what a push says; presenters render it). */
  renderPush: PushRenderer;
  /** Makes what fetches from other servers (src/federation), of the outgoing-HTTP module and the domain rules; none when federation is off. */
  remote?: (infra: RemoteInfra) => RemoteFetcher;
  /** Renders statuses and the actor for an account's archive (src/federation/archive.ts); without it, no archive is written. */
  archiveRenderer?: ArchiveRenderer;
  /** The delivery queue and its failing hosts, as src/federation reads them (the health page); empty without it. */
  deliveryQueue?: () => Promise<DeliveryQueueReport>;
  /** The API's rate-limit counters, shared by every serving thread (src/threads); in this thread's memory without. */
  sharedCounters?: SharedArrayBuffer;
  /** The tops of the thread fills under way, shared by every serving thread (src/infra/shared-ids.ts). */
  sharedFills?: SharedArrayBuffer;
  /** On a serving thread: what it knows of the main thread (whose work it passes on, RemoteThreads). */
  servingThread?: { federation: boolean };
  /** Hears of every invalidation of the render cache (the serving threads replay them on theirs). */
  renderCacheChanges?: (change: RenderCacheChange) => void;
  /** On PostgreSQL, what the processes serving one instance share (server.ts makes them); the one-process pieces without. */
  shared?: SharedState;
}

/** The pieces several processes share through PostgreSQL (docs/scaling.md, "Shared state across processes"). */
export interface SharedState {
  /** Who runs a due timer (a scheduled status, a poll's end...): one process. */
  timerClaims: TimerClaims;
  /** The timers every process holds, told to one another (pg-timer-relay.ts); made once the processes are linked. */
  timers?: TimerShare;
  /** The Idempotency-Key guard across processes. */
  idempotency: IdempotencyGuard;
  /** Request limits counted in one table by every process (pg-rate-limits.ts), for these buckets. */
  limiter(buckets: readonly Bucket[]): SharedLimiter;
  /** The hourly sweep of what the shared pieces keep (finished claims). */
  sweep(): Promise<void>;
  /** Who processes an upload (pg-media-claims.ts): one process, any of them. */
  mediaClaims?: MediaClaims;
}

/** A limiter whose verdicts and sweeps may be a round trip away. */
export type SharedLimiter = RequestLimiter & { sweep(): Promise<unknown> };

