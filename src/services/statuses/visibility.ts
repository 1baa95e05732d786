import type { StatusRow } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import { mentionedIds } from "../../models/mentions.ts";

export const VISIBILITIES = ["public", "unlisted", "private", "direct"] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/**
 * Mastodon's StatusPolicy#show?: public and unlisted for anyone the author has not blocked,
 * private for the author, followers and mentioned accounts, direct for the author and the
 * mentioned. Decided in batches: at most two queries for any number of statuses.
 */
export class StatusPolicy {
  constructor(
    private follows: FollowService,
    private moderation: ModerationService,
  ) {}

  visible<T extends StatusRow>(rows: T[], viewerId: number | null): T[] {
    if (viewerId === null) return rows.filter((r) => r.visibility === "public" || r.visibility === "unlisted");
    const others = [...new Set(rows.filter((r) => r.accountId !== viewerId).map((r) => r.accountId))];
    if (others.length === 0) return rows;
    const needsFollow = rows.some((r) => r.visibility === "private" && r.accountId !== viewerId);
    const followed = needsFollow ? this.follows.followedAmong(viewerId, others) : new Set<number>();
    const { blockedBy } = this.moderation.blocked(viewerId, others);
    return rows.filter((r) => {
      if (r.accountId === viewerId) return true;
      if (blockedBy.has(r.accountId)) return false;
      switch (r.visibility) {
        case "public":
        case "unlisted":
          return true;
        case "private":
          return followed.has(r.accountId) || mentionedIds(r).includes(viewerId);
        default:
          return mentionedIds(r).includes(viewerId);
      }
    });
  }

  canSee(row: StatusRow, viewerId: number | null): boolean {
    return this.visible([row], viewerId).length === 1;
  }
}
