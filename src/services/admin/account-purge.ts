import { and, eq, isNotNull, or } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { accounts, followRequests, follows, statuses, users } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ProfileImageService } from "../accounts/profile-images.ts";
import type { TokenService } from "../oauth/tokens.ts";
import type { WebSessionService } from "../oauth/web-sessions.ts";
import type { RemovalService } from "../statuses/removal.ts";

/**
 * What suspending and deleting an account take away, as Mastodon's SuspendAccountService and
 * DeleteAccountService do. Each runs inside the caller's transaction; what the outside is told
 * follows from the events emitted (the table in consequences.ts).
 */
export class AccountPurge {
  constructor(
    private db: Db,
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
  signOut(accountId: number): void {
    this.tokens.revokeAllFor(accountId);
    this.webSessions.destroyAllFor(accountId);
  }

  /**
   * A remote account suspended here may not go on reading local accounts' posts through its
   * follows: each is removed and answered with Reject (Mastodon's reject_remote_follows!).
   */
  rejectFollowsOf(accountId: number): void {
    const followed = this.db.select({ target: follows.targetAccountId }).from(follows).where(eq(follows.accountId, accountId)).all();
    for (const { target } of followed) {
      this.follows.removeFollow(accountId, target);
      this.events.emit({ type: "follow.rejected", accountId, targetAccountId: target });
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
  purge(accountId: number, now: number): { remoteFollowers: number[]; files: string[] } {
    const row = this.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
    if (!row) return { remoteFollowers: [], files: [] };
    const remoteFollowers =
      row.domain === null
        ? this.db
            .select({ id: follows.accountId })
            .from(follows)
            .innerJoin(accounts, eq(accounts.id, follows.accountId))
            .where(and(eq(follows.targetAccountId, accountId), isNotNull(accounts.domain)))
            .all()
            .map((r) => r.id)
        : [];
    for (const status of this.db.select().from(statuses).where(eq(statuses.accountId, accountId)).all()) {
      // A boost of its that an earlier removal took along (its own status boosted) is gone already.
      if (this.db.select({ id: statuses.id }).from(statuses).where(eq(statuses.id, status.id)).get()) this.removal.remove(status);
    }
    if (row.domain !== null) this.rejectFollowsOf(accountId);
    const pairs = this.db
      .select({ accountId: follows.accountId, targetId: follows.targetAccountId })
      .from(follows)
      .where(or(eq(follows.accountId, accountId), eq(follows.targetAccountId, accountId)))
      .all();
    for (const pair of pairs) this.follows.removeFollow(pair.accountId, pair.targetId);
    this.db
      .delete(followRequests)
      .where(or(eq(followRequests.accountId, accountId), eq(followRequests.targetAccountId, accountId)))
      .run();
    const files = [row.avatarFile, row.headerFile].filter((f): f is string => f !== null);
    this.db
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
      .where(eq(accounts.id, accountId))
      .run();
    if (row.domain === null) {
      this.signOut(accountId);
      this.db.delete(users).where(eq(users.accountId, accountId)).run();
    }
    return { remoteFollowers, files };
  }
}
