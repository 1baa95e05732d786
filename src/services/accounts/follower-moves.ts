import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { ApiError } from "../../errors.ts";
import type { FollowService } from "./follows.ts";
import type { ModerationService } from "./moderation.ts";

/**
 * What an account's move does to the local accounts that knew the old one, as Mastodon's
 * MoveWorker: its followers here follow the new account instead (a request, sent, when that is
 * remote or locked; their follow's options kept), and those that blocked or muted the old one
 * block or mute the new one, unless they follow it. Remote followers move when their own
 * servers hear of the Move. On the database port: its callers (a local move, an inbound Move) await it.
 */
export class FollowerMoves {
  constructor(
    private port: DatabasePort,
    private clock: Clock,
    private follows: Pick<FollowService, "follow" | "unfollow" | "following">,
    private moderation: Pick<ModerationService, "block" | "mute">,
  ) {}

  /** Answers how many local followers now follow (or asked to follow) the new account. */
  async move(originId: number, targetId: number): Promise<number> {
    const followers = await this.port.all<{ id: number; reblogs: unknown; notify: unknown; languages: string | null }>(
      `SELECT f.account_id AS id, f.show_reblogs AS reblogs, f.notify AS notify, f.languages AS languages
       FROM follows f JOIN accounts a ON a.id = f.account_id WHERE f.target_account_id = ? AND a.domain IS NULL ORDER BY f.id`,
      [originId],
    );
    let moved = 0;
    for (const f of followers) {
      // The new account itself following the old one (a move between two accounts here) stays.
      if (f.id === targetId) continue;
      try {
        await this.follows.follow(f.id, targetId, { reblogs: truthy(f.reblogs), notify: truthy(f.notify), languages: f.languages === null ? null : (JSON.parse(f.languages) as string[]) });
        await this.follows.unfollow(f.id, originId);
        moved++;
      } catch (error) {
        // The follower blocks the new account, or is blocked by it (403; or the account is gone,
        // 404): it keeps following the old one, as in Mastodon. A failure of the database is
        // thrown, not taken for a refusal: the Move is tried again rather than a follower left behind.
        if (!(error instanceof ApiError)) throw error;
      }
    }
    const blockers = await this.port.all<{ id: number }>(
      "SELECT b.account_id AS id FROM blocks b JOIN accounts a ON a.id = b.account_id WHERE b.target_account_id = ? AND a.domain IS NULL ORDER BY b.id",
      [originId],
    );
    for (const { id } of blockers) {
      if (id === targetId || (await this.follows.following(id, targetId)) || (await this.has("blocks", id, targetId))) continue;
      await this.moderation.block(id, targetId);
    }
    const muters = await this.port.all<{ id: number; notifications: unknown }>(
      `SELECT m.account_id AS id, m.hide_notifications AS notifications FROM mutes m JOIN accounts a ON a.id = m.account_id
       WHERE m.target_account_id = ? AND a.domain IS NULL ORDER BY m.id`,
      [originId],
    );
    for (const { id, notifications } of muters) {
      if (id === targetId || (await this.follows.following(id, targetId)) || (await this.has("mutes", id, targetId, true))) continue;
      await this.moderation.mute(id, targetId, { notifications: truthy(notifications) });
    }
    return moved;
  }

  /** A block (or an active mute) of `targetId` by `accountId`. */
  private async has(table: "blocks" | "mutes", accountId: number, targetId: number, active = false): Promise<boolean> {
    const unexpired = active ? " AND (expires_at IS NULL OR expires_at > ?)" : "";
    const params = active ? [accountId, targetId, this.clock.now()] : [accountId, targetId];
    return (await this.port.get(`SELECT 1 AS one FROM ${table} WHERE account_id = ? AND target_account_id = ?${unexpired}`, params)) !== undefined;
  }
}

const truthy = (v: unknown) => v === 1 || v === true;
