import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { serializePushSubscription } from "../presenters/push-subscription.ts";
import { ALERT_TYPES, type SubscriptionData } from "../services/push/subscriptions.ts";
import { bearerToken, requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { bool, obj, str, type Params } from "./params.ts";

/** `data[alerts][...]` and `data[policy]`, as Mastodon permits them. */
function dataOf(p: Params): SubscriptionData {
  const data = obj(p.data, "data");
  if (!data) return {};
  const given = obj(data.alerts, "data[alerts]") ?? {};
  const alerts: Record<string, boolean> = {};
  for (const type of ALERT_TYPES) {
    const value = bool(given[type], `data[alerts][${type}]`);
    if (value !== undefined) alerts[type] = value;
  }
  return { alerts, policy: str(data.policy, "data[policy]") };
}

/** GET/POST/PUT/DELETE /api/v1/push/subscription: the token's Web Push subscription (scope push). */
export function pushRoutes(ctx: AppContext) {
  const { services, keys } = ctx;
  const present = (row: Parameters<typeof serializePushSubscription>[0]) => serializePushSubscription(row, keys.vapidPublicKey);
  return new Elysia()
    .post("/api/v1/push/subscription", async (c) => {
      const auth = requireUser(ctx, c.request, "push");
      const p = input(c);
      const subscription = obj(p.subscription, "subscription");
      if (!subscription) throw new ApiError(400, "param is missing or the value is empty: subscription");
      const keysParam = obj(subscription.keys, "subscription[keys]") ?? {};
      const row = await services.pushSubscriptions.subscribe(
        auth.tokenId,
        bearerToken(c.request)!,
        auth.accountId,
        { endpoint: str(subscription.endpoint, "subscription[endpoint]"), p256dh: str(keysParam.p256dh, "subscription[keys][p256dh]"), auth: str(keysParam.auth, "subscription[keys][auth]"), standard: bool(subscription.standard, "subscription[standard]") },
        dataOf(p),
      );
      return present(row);
    })
    .get("/api/v1/push/subscription", async (c) => present(await services.pushSubscriptions.show(requireUser(ctx, c.request, "push").tokenId)))
    .put("/api/v1/push/subscription", async (c) => {
      const auth = requireUser(ctx, c.request, "push");
      return present(await services.pushSubscriptions.update(auth.tokenId, dataOf(input(c))));
    })
    .delete("/api/v1/push/subscription", async (c) => {
      await services.pushSubscriptions.unsubscribe(requireUser(ctx, c.request, "push").tokenId);
      return {};
    });
}
