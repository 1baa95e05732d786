import { Move } from "@fedify/fedify/vocab";
import type { EventBus } from "../../infra/events.ts";
import { actorUriOf } from "../vocab.ts";
import type { Outbound } from "./index.ts";
import { profileKey } from "./profiles.ts";
import { recipientOf } from "./sender.ts";

/**
 * A local account that moved tells its remote followers' servers with Move (Mastodon's
 * ActivityPub::MoveSerializer: the account as actor and object, the new account as target), so
 * that they make their accounts follow the new one. Sent in the order of the account's profile
 * Updates: the actor document naming the new account (movedTo) goes out before it.
 */
export function moves(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, context: ctx, sender } = out;
  events.afterCommit("account.moved", (e) => {
    // After the profile Updates set in motion before it (their ordering key, profiles.ts).
    sender.send(
      "Move",
      async () => {
        const account = await services.accounts.get(e.accountId);
        const target = await services.accounts.get(e.targetAccountId);
        if (!account || account.domain !== null || !target) return;
        const followers = await services.federationActors.remoteFollowers(account.id);
        if (followers.length === 0) return;
        const c = ctx();
        const actor = c.getActorUri(account.username);
        const move = new Move({ id: new URL(`${actor.href}#moves/${crypto.randomUUID()}`), actor, object: actor, target: actorUriOf(c, target) });
        await c.sendActivity({ identifier: account.username }, followers.map(recipientOf), move, { preferSharedInbox: true, orderingKey: `${actor.href}#profile` });
      },
      profileKey(e.accountId),
    );
  });
}
