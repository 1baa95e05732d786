import { and, eq, isNotNull, or } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import type { EventBus } from "../../infra/events.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ProfileImageService } from "../accounts/profile-images.ts";
import type { TokenService } from "../oauth/tokens.ts";
import type { WebSessionService } from "../oauth/web-sessions.ts";
import type { RemovalService } from "../statuses/removal.ts";

/**
 * What suspending and deleting an account take away, as Mastodon's SuspendAccountService and
 * DeleteAccountService do. Each runs inside the caller's transaction; what the outside is told
 * follows from the events emitted (the table in consequences.ts). Removal is on the port; the
 * other services it calls (follows, tokens, sessions) are not yet: synchronous, they join the
 * caller's transaction.
 */
export class AccountPurge {
  constructor(
    private db: DatabasePort,
    private events: EventBus,
    private follows: FollowService,
    private removal: RemovalService,
    private tokens: TokenService,
    private webSessions: WebSessionService,
    private images: ProfileImageService,
  ) {}

  /** Removes profile pictures of a committed deletion. */
  removeFiles(files: string[]): void {
    for (const file of files) void this.images.remove(file);
  }

  /** A local account is signed out everywhere: its tokens revoked (its streams close), its browser sessions ended. */
  async signOut(accountId: number): Promise<void> {
    await this.tokens.revokeAllFor(accountId);
    await this.webSessions.destroyAllFor(accountId);
  }

  /**
   * A remote account suspended here may not go on reading local accounts' posts through its
   * follows: each is removed and answered with Reject (Mastodon's reject_remote_follows!).
   */
  async rejectFollowsOf(accountId: number): Promise<void> {
    const { follows } = this.db.tables;
    const followed = await this.db.orm.select({ target: follows.targetAccountId }).from(follows).where(eq(follows.accountId, accountId));
    for (const { target } of followed) {
      await this.follows.removeFollow(accountId, target);
      await this.events.emit({ type: "follow.rejected", accountId, targetAccountId: target });
    }
  }

  /**
   * Deletes an account's data and keeps its row as a suspended tombstone, so that its name
   * stays taken and its URIs answer 410 (DeleteAccountService with reserve_username): its
   * statuses, its follows both ways (a remote account's follows of local ones rejected), its
   * follow requests, and its profile. A local account's user goes too: it can never sign in
   * again. Returns the remote accounts that followed it, which a local account's Delete is sent
   * to, and its avatar and header files, for the caller to remove once the deletion is committed.
   */
  async purge(accountId: number, now: number): Promise<{ remoteFollowers: number[]; files: string[] }> {
    const { accounts, followRequests, follows, statuses, users } = this.db.tables;
    const orm = this.db.orm;
    const [row] = await orm.select().from(accounts).where(eq(accounts.id, accountId)).limit(1);
    if (!row) return { remoteFollowers: [], files: [] };
    const remoteFollowers =
      row.domain === null
        ? (
            await orm
              .select({ id: follows.accountId })
              .from(follows)
              .innerJoin(accounts, eq(accounts.id, follows.accountId))
              .where(and(eq(follows.targetAccountId, accountId), isNotNull(accounts.domain)))
          ).map((r) => r.id)
        : [];
    for (const status of await orm.select().from(statuses).where(eq(statuses.accountId, accountId))) {
      // A boost of its that an earlier removal took along (its own status boosted) is gone already.
      const [still] = await orm.select({ id: statuses.id }).from(statuses).where(eq(statuses.id, status.id)).limit(1);
      if (still) await this.removal.remove(status);
    }
    if (row.domain !== null) await this.rejectFollowsOf(accountId);
    const pairs = await orm
      .select({ accountId: follows.accountId, targetId: follows.targetAccountId })
      .from(follows)
      .where(or(eq(follows.accountId, accountId), eq(follows.targetAccountId, accountId)));
    for (const pair of pairs) await this.follows.removeFollow(pair.accountId, pair.targetId);
    await orm.delete(followRequests).where(or(eq(followRequests.accountId, accountId), eq(followRequests.targetAccountId, accountId)));
    const files = [row.avatarFile, row.headerFile].filter((f): f is string => f !== null);
    await orm
      .update(accounts)
      .set({
        suspendedAt: row.suspendedAt ?? now,
        silencedAt: null,
        displayName: "",
        note: "",
        noteHtml: "",
        fields: "[]",
        emojis: "[]",
        locked: false,
        discoverable: false,
        indexable: false,
        avatarFile: null,
        headerFile: null,
        avatarRemoteUrl: null,
        headerRemoteUrl: null,
        statusesCount: 0,
        followersCount: 0,
        followingCount: 0,
        movedToAccountId: null,
        alsoKnownAs: "[]",
      })
      .where(eq(accounts.id, accountId));
    if (row.domain === null) {
      await this.signOut(accountId);
      await orm.delete(users).where(eq(users.accountId, accountId));
    }
    return { remoteFollowers, files };
  }
}
