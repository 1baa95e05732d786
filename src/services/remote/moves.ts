import type { DatabasePort } from "../../db/port.ts";
import type { EventBus } from "../../infra/events.ts";
import { log } from "../../log.ts";
import type { ActorRefs } from "../accounts/actor-refs.ts";
import type { FollowerMoves } from "../accounts/follower-moves.ts";
import type { RemoteAccounts } from "./accounts.ts";

/**
 * A remote account that moved (Move), as Mastodon's ActivityPub::Activity::Move: believed only
 * when the new account, fetched now, names the old one among its aliases (alsoKnownAs); then
 * the old account shows `moved`, and its followers here follow the new one instead (a follow
 * request, sent, for a remote one; a follow, or a request when it is locked, for an account
 * here). Every Move that is not believed is logged with the reason.
 */
export class AccountMoves {
  constructor(
    private db: DatabasePort,
    private remote: Pick<RemoteAccounts, "byUri">,
    /** Resolves the new account, here or fetched fresh from its server (never when federation is off). */
    private refs: ActorRefs,
    private followers: FollowerMoves,
    private events: EventBus,
  ) {}

  /** The actor at `actorUri` says it moved to `targetUri` (the caller checked that it moves itself). */
  async move(actorUri: string, targetUri: string): Promise<void> {
    const refuse = (reason: string) => log("info", "Move refused", { actor: actorUri, target: targetUri, reason });
    const origin = await this.remote.byUri(actorUri);
    if (!origin) return refuse("the account that moves is not known here");
    if (targetUri === origin.uri) return refuse("an account cannot move to itself");
    const target = await this.refs.resolve({ uri: targetUri }).catch(() => null);
    if (!target) return refuse("the new account could not be fetched");
    if (!target.aliases.includes(actorUri)) return refuse(`the new account does not name the old one among its aliases (alsoKnownAs: ${JSON.stringify(target.aliases)})`);
    if (target.account.id === origin.id) return refuse("an account cannot move to itself");
    await this.db.transaction(async () => {
      await this.db.run("UPDATE accounts SET moved_to_account_id = ? WHERE id = ?", [target.account.id, origin.id]);
      await this.events.emit({ type: "account.updated", accountId: origin.id });
    });
    const moved = await this.followers.move(origin.id, target.account.id);
    log("info", "Move accepted", { actor: actorUri, target: target.uri, followers_moved: moved });
  }
}
