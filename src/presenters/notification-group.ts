import type { AccountView, Embeds, NotificationGroup } from "../models/views.ts";
import { serializeAccount, type Urls } from "./account.ts";
import { serializeReport } from "./report.ts";
import { statusJsonById, type StatusSource } from "./status-json.ts";

/** REST::NotificationGroupSerializer's status types: the group names a status by `status_id`. */
const STATUS_TYPES = new Set(["favourite", "reblog", "status", "mention", "poll", "update", "quote", "quoted_update"]);

export type ExpandAccounts = "full" | "partial_avatars";

/** REST::DedupNotificationGroupSerializer::PartialAccountSerializer. */
function partialAccount(urls: Urls, a: AccountView) {
  const full = serializeAccount(urls, a);
  return { id: full.id, acct: full.acct, locked: full.locked, bot: full.bot, url: full.url, avatar: full.avatar, avatar_static: full.avatar_static };
}

function serializeGroup(urls: Urls, g: NotificationGroup, paginated: boolean, embeds: Embeds) {
  const report = g.notification.reportId !== null ? embeds.reports?.get(g.notification.reportId) : undefined;
  return {
    group_key: g.key,
    notifications_count: g.count,
    type: g.notification.type,
    most_recent_notification_id: String(g.mostRecentId),
    ...(paginated && g.page
      ? { page_min_id: String(g.page.minId), page_max_id: String(g.mostRecentId), latest_page_notification_at: new Date(g.page.latestAt).toISOString() }
      : {}),
    sample_account_ids: g.sampleAccountIds.map(String),
    ...(STATUS_TYPES.has(g.notification.type) && g.notification.statusId !== null ? { status_id: String(g.notification.statusId) } : {}),
    ...(report ? { report: serializeReport(urls, report) } : {}),
  };
}

/**
 * Mastodon 4.3's GroupedNotificationsResults as JSON text: the groups, and every account and
 * status they name once (accounts in full, or with `partial_avatars` only each group's newest
 * in full and the other senders as avatars). A group about a status that is not among `embeds`
 * (those the viewer may see) is left out, as the flat list leaves such notifications out.
 */
export async function groupedNotificationsJson(
  source: StatusSource,
  urls: Urls,
  groups: NotificationGroup[],
  embeds: Embeds,
  viewerId: number,
  options: { expand: ExpandAccounts; paginated: boolean },
): Promise<string> {
  const statuses = await statusJsonById(source, urls, embeds.statuses, viewerId);
  const shown = groups.filter(
    (g) => (g.notification.statusId === null || statuses.has(g.notification.statusId)) && (g.notification.reportId === null || embeds.reports?.has(g.notification.reportId)),
  );
  const { accounts } = embeds;
  // Senders that are gone (deleted accounts) leave the samples.
  for (const g of shown) g.sampleAccountIds = g.sampleAccountIds.filter((id) => accounts.has(id));
  const fullIds = new Set(options.expand === "partial_avatars" ? shown.map((g) => g.sampleAccountIds[0]).filter((id): id is number => id !== undefined) : shown.flatMap((g) => g.sampleAccountIds));
  const partialIds = options.expand === "partial_avatars" ? new Set(shown.flatMap((g) => g.sampleAccountIds.slice(1)).filter((id) => !fullIds.has(id))) : new Set<number>();
  const full = [...fullIds].map((id) => JSON.stringify(serializeAccount(urls, accounts.get(id)!)));
  const usedStatuses = [...new Set(shown.map((g) => g.notification.statusId).filter((id): id is number => id !== null))].map((id) => statuses.get(id)!);
  const parts = [`"accounts":[${full.join(",")}]`];
  if (options.expand === "partial_avatars") parts.push(`"partial_accounts":${JSON.stringify([...partialIds].map((id) => partialAccount(urls, accounts.get(id)!)))}`);
  parts.push(`"statuses":[${usedStatuses.join(",")}]`, `"notification_groups":${JSON.stringify(shown.map((g) => serializeGroup(urls, g, options.paginated, embeds)))}`);
  return `{${parts.join(",")}}`;
}
