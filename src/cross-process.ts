import { SQL } from "bun";
import { hostname } from "node:os";
import type { DatabasePort } from "./db/port.ts";
import type { EventBus, Subscribe } from "./infra/events.ts";
import { PgEventRelay, relayedBus } from "./infra/pg-events.ts";
import { CACHE_KINDS, PgCacheGenerations } from "./infra/pg-generations.ts";
import { PgListener } from "./infra/pg-listener.ts";
import { PgTimerRelay } from "./infra/pg-timer-relay.ts";
import { log } from "./log.ts";
import { forgetKind, registerReaderConsequences } from "./services/consequences.ts";
import type { Services } from "./services/index.ts";
import { renderKey, type RenderCacheChange } from "./services/statuses/render-cache.ts";
import { STREAM_EVENTS } from "./streaming/fanout.ts";
import type { Streaming } from "./streaming/index.ts";
import type { ServingThreads } from "./threads/pool.ts";

/**
 * Wiring beside server.ts for several processes on one PostgreSQL: the stream events and cache
 * invalidations each process shares with the others (src/infra/pg-events.ts, pg-generations.ts),
 * over one pool of two connections and one LISTEN connection. Made in two steps, as federation
 * is: the connection and the cache generations before the services (the render cache tells them
 * of its changes), then the relay once the services and the streams exist.
 */
export interface ProcessLink {
  sql: SQL;
  listener: PgListener;
  generations: PgCacheGenerations;
  /** This process's name in what it publishes: the host, the process id and a random part (a pid comes back after a restart). */
  origin: string;
  /** The render cache's changes, bumped once the write committed (ServiceDeps.renderCacheChanges, with the threads'). */
  renderChanged(change: RenderCacheChange): void;
}

export async function linkProcesses(url: string, port: Pick<DatabasePort, "afterCommit">): Promise<ProcessLink> {
  const sql = new SQL(url, { max: 2 });
  const listener = new PgListener(url);
  const origin = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const generations = new PgCacheGenerations(sql, listener, origin);
  try {
    await generations.start();
  } catch (e) {
    await closeLink(sql, listener);
    throw e;
  }
  return { sql, listener, generations, origin, renderChanged: (change) => port.afterCommit(() => generations.bump("render", renderKey(change))) };
}

/**
 * The timers every linked process holds (pg-timer-relay.ts), told once what set them committed;
 * given to the services' wheel (SharedState.timers), started by `holdTimers` once they exist.
 */
export function shareTimers(link: ProcessLink, port: Pick<DatabasePort, "afterCommit">): PgTimerRelay {
  return new PgTimerRelay({ sql: link.sql, listener: link.listener, origin: link.origin, afterCommit: (task) => port.afterCommit(task) });
}

/**
 * Listens for the others' timers before the rows are read at start (a timer set in between is
 * heard, not missed); after a reconnection of the listen connection the rows are read again,
 * since what was told meanwhile is lost.
 */
export async function holdTimers(timers: PgTimerRelay, services: Services): Promise<void> {
  await timers.start(() => {
    Promise.all([services.polls.restore(), services.scheduled.restore(), services.pushDeliveries.restore(), services.quoteChecks.restore()]).catch((e) =>
      log("error", "timers: reading them again after a reconnection failed", { error: String(e).split("\n")[0] }),
    );
  });
}

export interface LinkedProcesses {
  /** What other processes hear of this one's writes (the `processes` transport of the table of consequences). */
  subscribe: Subscribe;
  stop(): Promise<void>;
}

/**
 * The other processes' stream events go to this process's streams (and its serving threads'),
 * as a serving thread's do; their cache kinds are forgotten here by forgetKind.
 */
export async function startLinkedProcesses(link: ProcessLink, services: Services, streaming: Streaming, threads: ServingThreads | null): Promise<LinkedProcesses> {
  for (const kind of CACHE_KINDS) link.generations.on(kind, (keys) => forgetKind(services, kind, keys));
  const bus = relayedBus();
  registerReaderConsequences(bus, { streams: (events) => streaming.fanout.subscribe(events), threads: threads ? (events) => threads.subscribe(events) : undefined });
  const relay = new PgEventRelay({ sql: link.sql, listener: link.listener, origin: link.origin, tell: (event) => bus.emit(event) });
  try {
    await relay.start();
  } catch (e) {
    await relay.stop();
    await closeLink(link.sql, link.listener);
    throw e;
  }
  return {
    subscribe: (events) => {
      relay.subscribe(events, STREAM_EVENTS);
      link.generations.subscribe(events);
    },
    stop: async () => {
      await relay.stop();
      await link.generations.published();
      await closeLink(link.sql, link.listener);
    },
  };
}

async function closeLink(sql: SQL, listener: PgListener) {
  await listener.close();
  await sql.close().catch(() => {});
}

/**
 * A command's stream events (an announcement made or deleted, an account suspended) go to the
 * running processes' streams as another process's do, through the relay's table: on SQLite the
 * server finds the command's announcements itself (server.ts watchOtherWriters), on PostgreSQL
 * it hears them. The command publishes only; `published` is awaited before it ends.
 */
export async function publishCommandEvents(sql: SQL, events: EventBus): Promise<{ published(): Promise<void> }> {
  await PgEventRelay.makeTable(sql);
  const relay = new PgEventRelay({ sql, origin: `${hostname()}:${process.pid}:command` });
  relay.subscribe(events, STREAM_EVENTS);
  return relay;
}

/**
 * A command that wrote (src/cli) tells the running processes to forget every cache kind, as a
 * server on SQLite forgets its caches when another connection commits (server.ts
 * watchOtherWriters): the command keeps no listener, so it sends and is gone.
 */
export async function tellOtherWriter(sql: SQL): Promise<void> {
  await PgCacheGenerations.everythingChanged(sql, `${hostname()}:${process.pid}:command`);
}
