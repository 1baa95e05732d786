import type { Clock } from "../clock.ts";
import type { Db } from "../db/connection.ts";
import type { RemoteInfra } from "../services/remote/fetcher.ts";
import { SqliteKvStore } from "./kv.ts";
import { SqliteMessageQueue } from "./queue.ts";

/** Fedify's key-value store and message queue, both in our database. */
export interface FederationStores {
  kv: SqliteKvStore;
  queue: SqliteMessageQueue;
}

/**
 * The store and the queue, which need nothing of Fedify: they are made at start-up while
 * Fedify itself is loaded at the first federation request or send (lazy.ts), so that the
 * queue can be watched for deliveries a restart or a command left.
 */
export function federationStores(deps: { clock: Clock; db: Db } & RemoteInfra): FederationStores {
  const { clock, outgoing, refuses, traffic } = deps;
  const sqlite = deps.db.$client;
  const kv = new SqliteKvStore(sqlite, clock);
  const queue = new SqliteMessageQueue(sqlite, clock, outgoing, (url) => refuses(url), traffic, (inbox, reason) => {
    traffic.failed();
    // Only a listening queue refuses an inbox, and it listens once Fedify (and delivery.ts) is loaded.
    import("./delivery.ts")
      .then(({ recordFailure }) => recordFailure(kv, clock, new Error(`refused: ${reason}`), inbox))
      .catch(() => {});
  });
  return { kv, queue };
}
