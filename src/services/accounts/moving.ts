import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow } from "../../db/schema.ts";
import { badRequest, forbidden, notFound, unprocessable } from "../../errors.ts";
import type { EventBus } from "../../infra/events.ts";
import type { AccountService } from "./accounts.ts";
import { parseRef, type ActorRefs } from "./actor-refs.ts";
import type { FollowerMoves } from "./follower-moves.ts";

/** Mastodon's AccountMigration::COOLDOWN_PERIOD: an account moves again no sooner than this after its last move. */
export const MOVE_COOLDOWN_MS = 30 * 24 * 60 * 60 * 1000;

/** What a moved account is told when it tries to post (Mastodon: `require_user!`, as the account is no longer functional). */
export const movedAccountRefusal = () => forbidden("Your login is currently disabled");

export interface MoveRequest {
  /** The new account: an actor IRI (GoToSocial's `moved_to_uri`) or a handle. */
  target: string | undefined;
  /** The account's password, which the API asks for; the operator's command line does not. */
  password?: string | undefined;
}

/**
 * A local account moves to another (GoToSocial's POST /api/v1/accounts/move, Mastodon's
 * migration): believed only when the new account, fetched now, names this one among its
 * aliases (alsoKnownAs), has not moved itself, and is not this one. Then this account shows
 * `moved`, can no longer post, its followers here follow the new account (FollowerMoves) and
 * its followers' servers are sent Move (account.moved), and the new actor document (movedTo) as
 * an Update. Moving again to the same account is allowed (it sends the Move again, as
 * GoToSocial allows); to another one, only once Mastodon's cooldown of 30 days has passed. A
 * redirect (Mastodon's) only points the profile elsewhere, and may be cancelled.
 */
export class AccountMoving {
  constructor(
    private port: DatabasePort,
    private clock: Clock,
    private accounts: Pick<AccountService, "get" | "verifyLogin">,
    private refs: ActorRefs,
    private followers: FollowerMoves,
    private events: EventBus,
  ) {}

  /**
   * Moves `accountId`; `checkPassword` for a request of the account's own. `redirectOnly`:
   * Mastodon's redirect, which only points the profile at the new account (an Update of the
   * actor): no Move is sent, no follower moves, the new account need not name this one, and no
   * cooldown applies. Answers the new account.
   */
  async move(accountId: number, request: MoveRequest, options: { checkPassword: boolean; redirectOnly?: boolean }): Promise<AccountRow> {
    const given = request.target?.trim() ?? "";
    // GoToSocial's checks, in its order: the target, then the password.
    if (given === "") throw badRequest("no moved_to_uri provided in account Move request");
    const ref = parseRef(given);
    if (ref === null) throw badRequest("invalid moved_to_uri provided in account Move request: uri scheme must be http or https");
    const account = await this.accounts.get(accountId);
    if (!account || account.domain !== null) throw notFound();
    if (options.checkPassword) {
      if (!request.password) throw badRequest("no password provided in account Move request");
      if ((await this.accounts.verifyLogin(account.username, request.password)) !== account.id) throw badRequest("invalid password provided in account Move request");
    }
    const self = this.refs.localUri(account);
    const previous = account.movedToAccountId === null ? undefined : await this.accounts.get(account.movedToAccountId);

    const target = await this.refs.resolve(ref);
    if (!target) throw unprocessable("error dereferencing moved_to_uri account: no account could be fetched there");
    if (target.uri === self) throw unprocessable("invalid moved_to_uri provided in account Move request: an account cannot move to itself");
    const again = previous !== undefined && previous.id === target.account.id;
    if (options.redirectOnly) {
      if (again) throw unprocessable(`account ${self} already redirects to ${target.uri}`);
      await this.port.transaction(async () => {
        await this.port.run("UPDATE accounts SET moved_to_account_id = ? WHERE id = ?", [target.account.id, account.id]);
        await this.events.emit({ type: "account.updated", accountId: account.id });
      });
      return target.account;
    }
    // The cooldown counts from the last move, also one whose redirect was cancelled since.
    if (!again && account.movedAt !== null && this.clock.now() - account.movedAt < MOVE_COOLDOWN_MS) {
      const since = new Date(account.movedAt + MOVE_COOLDOWN_MS).toISOString();
      throw unprocessable(`account ${self} last Moved on ${new Date(account.movedAt).toISOString()}; it cannot Move again before ${since} (30 days after its last move)`);
    }
    if (!target.aliases.includes(self)) {
      throw unprocessable(
        `target account ${target.uri} is not aliased to this account via alsoKnownAs; to Move to the target account from this one, you must log in to the target account and set alsoKnownAs to ${self}`,
      );
    }
    if (target.movedTo !== null) throw unprocessable(`target account ${target.uri} has already Moved somewhere else (${target.movedTo}); you will not be able to Move to that account`);

    await this.port.transaction(async () => {
      const movedAt = again && account.movedAt !== null ? account.movedAt : this.clock.now();
      await this.port.run("UPDATE accounts SET moved_to_account_id = ?, moved_at = ? WHERE id = ?", [target.account.id, movedAt, account.id]);
      // The actor document (movedTo) first, then the Move: its receivers may read the document.
      await this.events.emit({ type: "account.updated", accountId: account.id });
      await this.events.emit({ type: "account.moved", accountId: account.id, targetAccountId: target.account.id });
    });
    await this.followers.move(account.id, target.account.id);
    return target.account;
  }

  /**
   * Points the profile back at itself (Mastodon's "cancel redirect"): it shows no `moved` and may
   * post again; followers who moved stay where they are. Answers whether it had moved.
   */
  async cancel(accountId: number): Promise<boolean> {
    const account = await this.accounts.get(accountId);
    if (!account || account.domain !== null) throw notFound();
    if (account.movedToAccountId === null) return false;
    await this.port.transaction(async () => {
      await this.port.run("UPDATE accounts SET moved_to_account_id = NULL WHERE id = ?", [account.id]);
      await this.events.emit({ type: "account.updated", accountId: account.id });
    });
    return true;
  }
}
