import { createExponentialBackoffPolicy, SendActivityError, type Federation } from "@fedify/fedify";
import { Temporal } from "@js-temporal/polyfill";
import type { Clock } from "../clock.ts";
import { log } from "../log.ts";
import { failureKey, type DeliveryFailure } from "./failures.ts";
import type { PortKvStore } from "./kv.ts";
import type { FederationServices } from "./port.ts";

/**
 * How deliveries hold when a server is down, as Mastodon's DeliveryWorker does: retried with
 * growing delays (30 s, doubling, at most 6 hours apart) for about two days, 16 attempts in
 * all (the first and 15 retries), then given up. The delays run on the server's clock, through our queue.
 */
export const DELIVERY_RETRY_POLICY = createExponentialBackoffPolicy({ initialDelay: { seconds: 30 }, factor: 2, maxDelay: { hours: 6 }, maxAttempts: 15, jitter: false });

/** Deliveries answered 410 Gone or 404 are not retried (Fedify's default permanent failures). */
export const PERMANENT_FAILURES = [404, 410] as const;

/** A failing domain is forgotten a week after its last failure. */
const FAILURE_TTL = { days: 7 };

/**
 * Records a failed delivery to a domain (Fedify's onOutboxError: every failed attempt). A host
 * that answered is named by the error; one that never answered (refused, timed out, no such
 * name: the commonest failure) only by the queue's message, `handling`.
 */
export async function recordFailure(kv: PortKvStore, clock: Clock, error: Error, handling: string | null = null): Promise<void> {
  const inbox = error instanceof SendActivityError ? error.inbox : handling !== null && URL.canParse(handling) ? new URL(handling) : null;
  if (!inbox) return;
  const domain = inbox.host;
  const previous = await kv.get<DeliveryFailure>(failureKey(domain));
  const status = error instanceof SendActivityError ? error.statusCode : null;
  const entry: DeliveryFailure = { domain, failures: (previous?.failures ?? 0) + 1, lastStatus: status, lastError: error.message.split("\n")[0]!.slice(0, 300), lastAt: clock.now() };
  await kv.set(failureKey(domain), entry, { ttl: Temporal.Duration.from(FAILURE_TTL) });
}

/**
 * An inbox that answers 410 Gone or 404 will never take deliveries again: the remote
 * accounts behind it stop following local accounts here (Hollo and Mastodon prune them), so
 * nothing more is queued for them.
 */
export function wirePermanentFailures(services: Pick<FederationServices, "remoteAccounts" | "federationActors" | "follows">, federation: Federation<void>): void {
  federation.setOutboxPermanentFailureHandler(async (_ctx, failure) => {
    for (const actorId of failure.actorIds) {
      const account = await services.remoteAccounts.byUri(actorId.href);
      if (!account) continue;
      const followed = await services.federationActors.localFollowed(account.id);
      for (const localId of followed) await services.follows.removeFollow(account.id, localId);
      if (followed.length > 0) log("info", "federation: a follower's inbox is gone; it follows nobody here now", { actor: actorId.href, status: failure.statusCode });
    }
  });
}
