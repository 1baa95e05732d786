import { Delete, Update } from "@fedify/fedify/vocab";
import type { EventBus } from "../../infra/events.ts";
import { actorOf } from "../vocab.ts";
import type { Outbound } from "./index.ts";
import { recipientOf } from "./sender.ts";

/** What orders a local account's actor activities (Updates, then a Move) as they are prepared, known from the event alone. */
export const profileKey = (accountId: number) => `profile:${accountId}`;

/**
 * A local account's profile change (a suspension by staff too, which its actor shows) is told to its remote followers as an Update of its actor
 * (Mastodon's ActivityPub::UpdateDistributionWorker), so their servers need not wait for their
 * next refresh to show it.
 */
export function profiles(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, context: ctx, sender, urls } = out;
  events.afterCommit("account.updated", (e) => {
    sender.send(
      "Update of a profile",
      async () => {
        const account = await services.accounts.get(e.accountId);
        if (!account || account.domain !== null) return;
        const followers = await services.federationActors.remoteFollowers(account.id);
        if (followers.length === 0) return;
        const c = ctx();
        const movedTo = account.movedToAccountId === null ? undefined : await services.accounts.get(account.movedToAccountId);
        const actor = await actorOf(c, urls, account, movedTo);
        const update = new Update({ id: new URL(`${actor.id!.href}#updates/${crypto.randomUUID()}`), actor: actor.id, to: new URL("https://www.w3.org/ns/activitystreams#Public"), object: actor });
        await c.sendActivity({ identifier: account.username }, followers.map(recipientOf), update, { preferSharedInbox: true, orderingKey: `${c.getActorUri(account.username).href}#profile` });
      },
      profileKey(e.accountId),
    );
  });

  // Staff deleted a local account: the servers of its followers (gone from here now) are sent
  // a Delete of its actor, signed with its keys, which stay for this (DeleteAccountService#delete_actor!).
  events.afterCommit("account.deleted", (e) => {
    if (e.recipientIds.length === 0) return;
    sender.send(
      "Delete of an actor",
      async () => {
        const account = await services.accounts.get(e.accountId);
        if (!account || account.domain !== null) return;
        const followers = await services.accounts.getMany(e.recipientIds);
        if (followers.length === 0) return;
        const c = ctx();
        const actor = c.getActorUri(account.username);
        const del = new Delete({ id: new URL(`${actor.href}#delete`), actor, to: new URL("https://www.w3.org/ns/activitystreams#Public"), object: actor });
        await c.sendActivity({ identifier: account.username }, followers.map(recipientOf), del, { preferSharedInbox: true });
      },
      profileKey(e.accountId),
    );
  });
}
