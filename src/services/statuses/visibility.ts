import type { DatabasePort } from "../../db/port.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import { mentionedIds } from "../../models/mentions.ts";
import { hostSql } from "../../net/domains.ts";

export const VISIBILITIES = ["public", "unlisted", "private", "direct"] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/**
 * StatusPolicy's rule as an SQL condition, for queries that must filter before they page:
 * the status row is `status` (a table name or alias), the viewer an SQL expression (a bound
 * parameter such as `$owner` or `?2`), or null for someone not signed in. The same rule as
 * `StatusPolicy.visible`, which test/unit/visibility.test.ts checks case by case; what a
 * particular place adds (public timelines show only public statuses, feeds take no direct
 * messages) stays a separate condition there.
 *
 * Each term is an index lookup per row (blocks_pair, follows_pair, the mentions key), so it
 * adds no query and keeps a query's plan on its own index.
 */
export function visibleToSql(status: string, viewer: string | null): string {
  const s = status;
  // Staff suspended the author: nobody sees its statuses (one primary-key lookup a row).
  const available = `NOT EXISTS (SELECT 1 FROM accounts vs WHERE vs.id = ${s}.account_id AND vs.suspended_at IS NOT NULL)`;
  if (viewer === null) return `(${s}.visibility IN ('public', 'unlisted') AND ${available})`;
  return `(${available} AND (${s}.account_id = ${viewer} OR (
    NOT EXISTS (SELECT 1 FROM blocks vb WHERE vb.account_id = ${s}.account_id AND vb.target_account_id = ${viewer})
    AND NOT EXISTS (SELECT 1 FROM account_domain_blocks vd WHERE vd.account_id = ${s}.account_id
      AND vd.domain = (SELECT ${hostSql("va.domain")} FROM accounts va WHERE va.id = ${viewer}))
    AND (${s}.visibility IN ('public', 'unlisted')
      OR (${s}.visibility = 'private' AND EXISTS (SELECT 1 FROM follows vf WHERE vf.account_id = ${viewer} AND vf.target_account_id = ${s}.account_id))
      OR EXISTS (SELECT 1 FROM mentions vm WHERE vm.status_id = ${s}.id AND vm.account_id = ${viewer})))))`;
}

/**
 * SQL: `viewer` (an account id expression) blocks the domain of the account `account` (an
 * account id expression), as Mastodon's AccountDomainBlock reads it: that domain exactly,
 * port aside; a local account has no domain to block. What keeps such statuses out of the
 * viewer's public timelines, feeds and lists: one index lookup per row.
 */
export function domainBlockedSql(viewer: string, account: string): string {
  return `EXISTS (SELECT 1 FROM accounts da JOIN account_domain_blocks db ON db.account_id = ${viewer} AND db.domain = ${hostSql("da.domain")} WHERE da.id = ${account} AND da.domain IS NOT NULL)`;
}

/**
 * Mastodon's StatusPolicy#show?: public and unlisted for anyone the author has not blocked,
 * private for the author, followers and mentioned accounts (silently mentioned ones too),
 * direct for the author and the mentioned. An author's block of the viewer, or of the viewer's domain (a remote viewer:
 * Mastodon's author_blocking_domain?), hides everything. Decided in batches: a few queries
 * for any number of statuses.
 */
export class StatusPolicy {
  constructor(
    private follows: FollowService,
    private moderation: ModerationService,
    private port: DatabasePort,
  ) {}

  async visible<T extends StatusRow>(all: T[], viewerId: number | null): Promise<T[]> {
    // A suspended author's statuses are shown to nobody, not even to the author (who cannot sign in).
    const suspended = await this.moderation.suspendedAmong([...new Set(all.map((r) => r.accountId))]);
    const rows = suspended.size === 0 ? all : all.filter((r) => !suspended.has(r.accountId));
    if (viewerId === null) return rows.filter((r) => r.visibility === "public" || r.visibility === "unlisted");
    const others = [...new Set(rows.filter((r) => r.accountId !== viewerId).map((r) => r.accountId))];
    if (others.length === 0) return rows;
    const needsFollow = rows.some((r) => r.visibility === "private" && r.accountId !== viewerId);
    // Independent reads, started together: on SQLite each runs at once, and the page waits once.
    const [followed, { blockedBy }, hiding] = await Promise.all([
      needsFollow ? this.follows.followedAmong(viewerId, others) : new Set<number>(),
      this.moderation.blocked(viewerId, others),
      this.moderation.hidingFrom(viewerId, others),
    ]);
    const shown = (r: T) => {
      switch (r.visibility) {
        case "public":
        case "unlisted":
          return true;
        case "private":
          return followed.has(r.accountId) || mentionedIds(r).includes(viewerId);
        default:
          return mentionedIds(r).includes(viewerId);
      }
    };
    const open = rows.filter((r) => r.accountId !== viewerId && !blockedBy.has(r.accountId) && !hiding.has(r.accountId));
    const silent = await this.silentlyMentioned(
      viewerId,
      open.filter((r) => !shown(r)).map((r) => r.id),
    );
    return rows.filter((r) => {
      if (r.accountId === viewerId) return true;
      if (blockedBy.has(r.accountId) || hiding.has(r.accountId)) return false;
      return shown(r) || silent.has(r.id);
    });
  }

  /**
   * Of these statuses, those that mention the viewer silently: a row of the mentions table the
   * status's own list of mentions does not name (Mastodon's silent mentions: the quoted author
   * of a private quote, Quote#ensure_quoted_access). Asked only for statuses the viewer would
   * not otherwise see, so that reads of what is shown cost no query.
   */
  private async silentlyMentioned(viewerId: number, statusIds: number[]): Promise<Set<number>> {
    if (statusIds.length === 0) return new Set();
    const size = paddedSize(statusIds.length);
    const found = await this.port.values(`SELECT status_id FROM mentions WHERE account_id = ? AND status_id IN (${marks(size)})`, [viewerId, ...padded(statusIds, size)]);
    return new Set(found.map((r) => r[0] as number));
  }

  async canSee(row: StatusRow, viewerId: number | null): Promise<boolean> {
    return (await this.visible([row], viewerId)).length === 1;
  }
}
