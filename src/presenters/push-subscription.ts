import type { PushSubscriptionRow } from "../db/schema.ts";

/** REST::WebPushSubscriptionSerializer (Mastodon 4.4), in its key order: alerts as they were asked for, policy `all` unless set. */
export function serializePushSubscription(row: PushSubscriptionRow, serverKey: string) {
  return {
    id: String(row.id),
    endpoint: row.endpoint,
    standard: row.standard,
    alerts: JSON.parse(row.alerts) as Record<string, boolean>,
    server_key: serverKey,
    policy: row.policy,
  };
}
