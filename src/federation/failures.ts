/**
 * How failing deliveries are kept (in the key-value store, per domain), apart from delivery.ts:
 * `rookery federation status` and the health page read them without loading Fedify, which
 * delivery.ts needs for its retry policy.
 */

/** A domain whose deliveries fail, as `rookery federation status` shows it. */
export interface DeliveryFailure {
  domain: string;
  failures: number;
  lastStatus: number | null;
  lastError: string;
  lastAt: number;
}

export const FAILURE_PREFIX = ["rookery", "delivery-failure"] as const;
export const failureKey = (domain: string) => [...FAILURE_PREFIX, domain] as const;
