import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { accounts, blocks, follows, mutes } from "../../db/schema.ts";
import type { FollowService } from "./follows.ts";
import type { ModerationService } from "./moderation.ts";

/**
 * What an account's move does to the local accounts that knew the old one, as Mastodon's
 * MoveWorker: its followers here follow the new account instead (a request, sent, when that is
 * remote or locked; their follow's options kept), and those that blocked or muted the old one
 * block or mute the new one, unless they follow it. Remote followers move when their own
 * servers hear of the Move.
 */
export class FollowerMoves {
  constructor(
    private db: Db,
    private follows: FollowService,
    private moderation: Pick<ModerationService, "block" | "mute" | "isBlocking" | "muted">,
  ) {}

  /** Answers how many local followers now follow (or asked to follow) the new account. */
  move(originId: number, targetId: number): number {
    const local = isNull(accounts.domain);
    const followers = this.db
      .select({ id: follows.accountId, reblogs: follows.showReblogs, notify: follows.notify, languages: follows.languages })
      .from(follows)
      .innerJoin(accounts, eq(accounts.id, follows.accountId))
      .where(and(eq(follows.targetAccountId, originId), local))
      .all();
    let moved = 0;
    for (const f of followers) {
      // The new account itself following the old one (a move between two accounts here) stays.
      if (f.id === targetId) continue;
      try {
        this.follows.follow(f.id, targetId, { reblogs: f.reblogs, notify: f.notify, languages: f.languages === null ? null : (JSON.parse(f.languages) as string[]) });
        this.follows.unfollow(f.id, originId);
        moved++;
      } catch {
        // The follower blocks the new account, or is blocked by it: it keeps following the old one, as in Mastodon.
      }
    }
    const blockers = this.db.select({ id: blocks.accountId }).from(blocks).innerJoin(accounts, eq(accounts.id, blocks.accountId)).where(and(eq(blocks.targetAccountId, originId), local)).all();
    for (const { id } of blockers) {
      if (id === targetId || this.follows.isFollowing(id, targetId) || this.moderation.isBlocking(id, targetId)) continue;
      this.moderation.block(id, targetId);
    }
    const muters = this.db
      .select({ id: mutes.accountId, notifications: mutes.hideNotifications })
      .from(mutes)
      .innerJoin(accounts, eq(accounts.id, mutes.accountId))
      .where(and(eq(mutes.targetAccountId, originId), local))
      .all();
    for (const { id, notifications } of muters) {
      if (id === targetId || this.follows.isFollowing(id, targetId) || this.moderation.muted(id, [targetId]).has(targetId)) continue;
      this.moderation.mute(id, targetId, { notifications });
    }
    return moved;
  }
}
