import type { SQL } from "bun";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import type { RemoteInfra } from "../services/remote/fetcher.ts";
import { PortKvStore } from "./kv.ts";
import { PgMessageQueue } from "./pg-queue.ts";
import { PortMessageQueue } from "./queue.ts";

/** What the rest of src/federation asks of Fedify's queue, whichever of the two it is. */
export type FederationQueue = Pick<PortMessageQueue, "nativeRetrial" | "enqueue" | "enqueueMany" | "getDepth" | "listen" | "idle" | "handlingInbox" | "pending">;

/** Fedify's key-value store and message queue, both in our database. */
export interface FederationStores {
  kv: PortKvStore;
  queue: FederationQueue;
}

/**
 * On PostgreSQL, the queue several processes share (pg-queue.ts: leases, SKIP LOCKED, NOTIFY),
 * over a pool of its own; `worker` names this process's slot, the same across its restarts.
 */
export interface SharedQueue {
  sql: SQL;
  worker: string;
}

/**
 * The store and the queue, which need nothing of Fedify: they are made at start-up while
 * Fedify itself is loaded at the first federation request or send (lazy.ts), so that the
 * queue can be watched for deliveries a restart or a command left.
 */
export function federationStores(deps: { clock: Clock; port: DatabasePort; sharedQueue?: SharedQueue } & RemoteInfra): FederationStores {
  const { clock, outgoing, refuses, traffic } = deps;
  const kv = new PortKvStore(deps.port, clock);
  const refused = (inbox: string, reason: string) => {
    traffic.failed();
    // Only a listening queue refuses an inbox, and it listens once Fedify (and delivery.ts) is loaded.
    import("./delivery.ts")
      .then(({ recordFailure }) => recordFailure(kv, clock, new Error(`refused: ${reason}`), inbox))
      .catch(() => {});
  };
  const queue = deps.sharedQueue
    ? new PgMessageQueue({ sql: deps.sharedQueue.sql, clock, outgoing, refusesDomain: (url) => refuses(url), traffic, onAddressRefused: refused, worker: deps.sharedQueue.worker })
    : new PortMessageQueue(deps.port, clock, outgoing, (url) => refuses(url), traffic, refused);
  return { kv, queue };
}
