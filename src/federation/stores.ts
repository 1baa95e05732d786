import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import type { RemoteInfra } from "../services/remote/fetcher.ts";
import { PortKvStore } from "./kv.ts";
import { PortMessageQueue } from "./queue.ts";

/** Fedify's key-value store and message queue, both in our database. */
export interface FederationStores {
  kv: PortKvStore;
  queue: PortMessageQueue;
}

/**
 * The store and the queue, which need nothing of Fedify: they are made at start-up while
 * Fedify itself is loaded at the first federation request or send (lazy.ts), so that the
 * queue can be watched for deliveries a restart or a command left.
 */
export function federationStores(deps: { clock: Clock; port: DatabasePort } & RemoteInfra): FederationStores {
  const { clock, outgoing, refuses, traffic } = deps;
  const kv = new PortKvStore(deps.port, clock);
  const queue = new PortMessageQueue(deps.port, clock, outgoing, (url) => refuses(url), traffic, (inbox, reason) => {
    traffic.failed();
    // Only a listening queue refuses an inbox, and it listens once Fedify (and delivery.ts) is loaded.
    import("./delivery.ts")
      .then(({ recordFailure }) => recordFailure(kv, clock, new Error(`refused: ${reason}`), inbox))
      .catch(() => {});
  });
  return { kv, queue };
}
