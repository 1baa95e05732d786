import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { parseId } from "../ids.ts";
import { groupedNotificationsJson, type ExpandAccounts } from "../presenters/notification-group.ts";
import { serializeAccount } from "../presenters/account.ts";
import { requireUser } from "./auth.ts";
import { input } from "./input.ts";
import { linkHeader, pageParams } from "./pagination.ts";
import { bool, str, strArray, type Params } from "./params.ts";
import { jsonText } from "./render.ts";

function expandAccounts(p: Params): ExpandAccounts {
  const value = str(p.expand_accounts, "expand_accounts");
  if (value === undefined || value === "full") return "full";
  if (value === "partial_avatars") return value;
  throw new ApiError(400, `Invalid value for 'expand_accounts': '${value}', allowed values are 'full' and 'partial_avatars'`);
}

/**
 * Mastodon 4.3's grouped notifications (Api::V2::NotificationsController and
 * Api::V2::Notifications::AccountsController): favourites and boosts of one status, and follows,
 * within 12 hours come as one group with its count and newest senders.
 */
export function notificationV2Routes(ctx: AppContext) {
  const { services } = ctx;
  const filtersOf = (accountId: number, p: Params) =>
    services.notifications.filters(accountId, {
      types: strArray(p.types, "types"),
      excludeTypes: strArray(p.exclude_types, "exclude_types"),
      fromAccountId: parseId(str(p.account_id, "account_id")) ?? undefined,
      includeFiltered: bool(p.include_filtered, "include_filtered") ?? false,
    });
  return new Elysia()
    .get("/api/v2/notifications", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const expand = expandAccounts(p);
      const page = pageParams(p, 40, 80);
      const where = await filtersOf(auth.accountId, p);
      const groups = where === "none" ? [] : await services.notifications.groups.page(auth.accountId, { page, where, groupedTypes: strArray(p.grouped_types, "grouped_types") });
      const embeds = await services.embeds.notificationGroups(groups, auth.accountId);
      const body = await groupedNotificationsJson(services, ctx.urls, groups, embeds, auth.accountId, { expand, paginated: true });
      if (groups.length === 0) return jsonText(body);
      // A page going down with fewer groups than asked has reached the oldest notification, and
      // its groups reach back to their oldest (see NotificationGroups.page): a next page could only
      // show parts of them again, which clients that group page by page (Phanpy) list twice.
      // Mastodon links on regardless; without `next`, clients know they are at the end.
      const last = groups.length < page.limit && page.minId === undefined;
      const link = linkHeader(ctx.config.publicUrl, c.request, {
        next: last ? null : groups[groups.length - 1]!.notification.id,
        prev: groups[0]!.notification.id,
        keep: ["limit", "types", "exclude_types", "grouped_types", "include_filtered", "account_id", "expand_accounts"],
      });
      return jsonText(body, link ? { link } : undefined);
    })
    // How many groups came after the notifications marker (capped: 100 by default, at most 1,000).
    .get("/api/v2/notifications/unread_count", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const p = input(c);
      const limit = pageParams(p, 100, 1000).limit;
      const marker = (await services.markers.get(auth.accountId, ["notifications"]))[0];
      const where = await filtersOf(auth.accountId, p);
      if (where === "none") return { count: 0 };
      const after = marker ? (parseId(marker.lastReadId) ?? undefined) : undefined;
      return { count: await services.notifications.groups.countAfter(auth.accountId, after, limit, where, strArray(p.grouped_types, "grouped_types")) };
    })
    .post("/api/v2/notifications/clear", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      await services.notifications.clear(auth.accountId);
      return {};
    })
    .get("/api/v2/notifications/:group_key", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const where = await services.notifications.filters(auth.accountId, { includeFiltered: true });
      const group = await services.notifications.groups.one(auth.accountId, c.params.group_key, where === "none" ? undefined : where);
      const embeds = await services.embeds.notificationGroups([group], auth.accountId);
      return jsonText(await groupedNotificationsJson(services, ctx.urls, [group], embeds, auth.accountId, { expand: "full", paginated: false }));
    })
    .get("/api/v2/notifications/:group_key/accounts", async (c) => {
      const auth = requireUser(ctx, c.request, "read:notifications");
      const where = await services.notifications.filters(auth.accountId, { includeFiltered: true });
      const ids = await services.notifications.groups.accountIds(auth.accountId, c.params.group_key, where === "none" ? undefined : where);
      const byId = new Map((await services.accounts.showByIds(ids)).map((a) => [a.id, a]));
      return ids.flatMap((id) => (byId.has(id) ? [serializeAccount(ctx.urls, byId.get(id)!)] : []));
    })
    .post("/api/v2/notifications/:group_key/dismiss", async (c) => {
      const auth = requireUser(ctx, c.request, "write:notifications");
      await services.notifications.groups.dismiss(auth.accountId, c.params.group_key);
      return {};
    });
}
