import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import type { NotificationRequest } from "../models/views.ts";
import { notificationRequestsJson } from "../presenters/notification-request.ts";
import { POLICY_FIELDS, type Policy, type PolicyField } from "../services/notifications/policy.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { bool, pathId, str, strArray, type Params } from "./params.ts";
import { jsonText } from "./render.ts";

/** The v1 policy (Mastodon 4.3 keeps it for older clients): each rule as filter (true) or accept (false). */
const V1_FIELDS: Record<string, PolicyField> = {
  filter_not_following: "for_not_following",
  filter_not_followers: "for_not_followers",
  filter_new_accounts: "for_new_accounts",
  filter_private_mentions: "for_private_mentions",
};

/**
 * Notification policies and requests (Mastodon 4.3's Api::V2::Notifications::PoliciesController,
 * Api::V1::Notifications::PoliciesController and RequestsController): what the policy held back
 * waits per sender until accepted or dismissed.
 */
export function notificationRequestRoutes(ctx: AppContext) {
  const { services } = ctx;
  const policies = services.notificationPolicies;
  const v2 = async (accountId: number, policy: Policy) => ({ ...policy, summary: await policies.summary(accountId) });
  const v1 = async (accountId: number, policy: Policy) => ({
    ...Object.fromEntries(Object.entries(V1_FIELDS).map(([v1Name, field]) => [v1Name, policy[field] !== "accept"])),
    summary: await policies.summary(accountId),
  });
  const render = async (rows: NotificationRequest[], viewerId: number) =>
    notificationRequestsJson(services, ctx.urls, rows, await services.embeds.notificationRequests(rows, viewerId), viewerId);
  const ids = (p: Params) => (strArray(p.id, "id") ?? []).map((id) => parseId(id)).filter((id): id is number => id !== null);
  return new Elysia()
    .get("/api/v2/notifications/policy", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      return v2(auth.accountId, await policies.get(auth.accountId));
    })
    .patch("/api/v2/notifications/policy", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      const p = input(c);
      const changes = Object.fromEntries(POLICY_FIELDS.map((f) => [f, str(p[f], f)]));
      return v2(auth.accountId, await policies.update(auth.accountId, changes));
    })
    .get("/api/v1/notifications/policy", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      return v1(auth.accountId, await policies.get(auth.accountId));
    })
    .patch("/api/v1/notifications/policy", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      const p = input(c);
      const changes: Partial<Record<PolicyField, string>> = {};
      for (const [v1Name, field] of Object.entries(V1_FIELDS)) {
        const value = bool(p[v1Name], v1Name);
        if (value !== undefined) changes[field] = value ? "filter" : "accept";
      }
      return v1(auth.accountId, await policies.update(auth.accountId, changes));
    })
    .get("/api/v1/notifications/requests", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const rows = await policies.listRequests(auth.accountId, pageParams(p, 40, 80));
      const body = `[${(await render(rows, auth.accountId)).join(",")}]`;
      if (rows.length === 0) return jsonText(body);
      const link = linkHeader(ctx.config.publicUrl, c.request, { next: rows[rows.length - 1]!.id, prev: rows[0]!.id, keep: ["limit"] });
      return jsonText(body, link ? { link } : undefined);
    })
    // Requests are merged as they are accepted, never in the background: always done.
    .get("/api/v1/notifications/requests/merged", (c) => {
      requireUser(ctx, c.request, "read:notifications");
      return { merged: true };
    })
    .post("/api/v1/notifications/requests/accept", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      for (const id of ids(input(c))) await services.notifications.acceptRequest(auth.accountId, id, { ignoreMissing: true });
      return {};
    })
    .post("/api/v1/notifications/requests/dismiss", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      for (const id of ids(input(c))) await services.notifications.dismissRequest(auth.accountId, id, { ignoreMissing: true });
      return {};
    })
    .get("/api/v1/notifications/requests/:id", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const [json] = await render([await policies.request(auth.accountId, pathId(c.params.id))], auth.accountId);
      if (!json) throw notFound();
      return jsonText(json);
    })
    .post("/api/v1/notifications/requests/:id/accept", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      await services.notifications.acceptRequest(auth.accountId, pathId(c.params.id));
      return {};
    })
    .post("/api/v1/notifications/requests/:id/dismiss", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      await services.notifications.dismissRequest(auth.accountId, pathId(c.params.id));
      return {};
    });
}
