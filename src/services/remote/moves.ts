import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { accounts, follows } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { EventBus } from "../../infra/events.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { RemoteAccounts } from "./accounts.ts";

/**
 * A remote account that moved (Move), as Mastodon's ActivityPub::Activity::Move: believed only
 * when the new account names the old one among its aliases (alsoKnownAs); then the old account
 * shows `moved`, and its followers here follow the new one instead (a follow request, sent).
 */
export class AccountMoves {
  constructor(
    private db: Db,
    private remote: RemoteAccounts,
    private follows: FollowService,
    private events: EventBus,
    /** Fetches the new actor from its server (null while federation is off: no move is believed). */
    private fetcher: RemoteFetcher | null,
  ) {}

  /** The actor at `actorUri` says it moved to `targetUri` (the caller checked that it moves itself). */
  async move(actorUri: string, targetUri: string): Promise<void> {
    const origin = this.remote.byUri(actorUri);
    if (!origin || !this.fetcher || targetUri === origin.uri) return;
    const target = await this.fetcher.actor(targetUri).catch(() => null);
    if (!target || !target.aliases.some((alias) => alias === origin.uri)) return;
    const moved = await this.remote.upsert(target);
    if (!moved || moved.id === origin.id) return;
    const followers = this.db.transaction((tx) => {
      tx.update(accounts).set({ movedToAccountId: moved.id }).where(eq(accounts.id, origin.id)).run();
      this.events.emit({ type: "account.updated", accountId: origin.id });
      // Its followers here (local accounts: remote ones are told by their own servers).
      return tx
        .select({ id: follows.accountId })
        .from(follows)
        .innerJoin(accounts, eq(accounts.id, follows.accountId))
        .where(and(eq(follows.targetAccountId, origin.id), isNull(accounts.domain)))
        .all();
    });
    for (const follower of followers) {
      try {
        this.follows.follow(follower.id, moved.id, {});
        this.follows.unfollow(follower.id, origin.id);
      } catch {
        // The follower blocks the new account (or is blocked by it): it keeps following the old one, as in Mastodon.
      }
    }
  }
}
