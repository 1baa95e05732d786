import { Delete, Update } from "@fedify/fedify/vocab";
import type { EventBus } from "../../infra/events.ts";
import { actorOf } from "../vocab.ts";
import type { Outbound } from "./index.ts";
import { recipientOf } from "./sender.ts";

/**
 * A local account's profile change (a suspension by staff too, which its actor shows) is told to its remote followers as an Update of its actor
 * (Mastodon's ActivityPub::UpdateDistributionWorker), so their servers need not wait for their
 * next refresh to show it.
 */
export function profiles(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, context: ctx, sender, urls } = out;
  events.afterCommit("account.updated", (e) => {
    const account = services.accounts.findById(e.accountId);
    if (!account || account.domain !== null) return;
    const c = ctx();
    const key = `${c.getActorUri(account.username).href}#profile`;
    sender.send("Update of a profile", async () => {
      const followers = await services.federationActors.remoteFollowers(account.id);
      if (followers.length === 0) return;
      const actor = await actorOf(c, urls, account, account.movedToAccountId === null ? undefined : services.accounts.findById(account.movedToAccountId));
      const update = new Update({ id: new URL(`${actor.id!.href}#updates/${crypto.randomUUID()}`), actor: actor.id, to: new URL("https://www.w3.org/ns/activitystreams#Public"), object: actor });
      await c.sendActivity({ identifier: account.username }, followers.map(recipientOf), update, { preferSharedInbox: true, orderingKey: key });
    }, key);
  });

  // Staff deleted a local account: the servers of its followers (gone from here now) are sent
  // a Delete of its actor, signed with its keys, which stay for this (DeleteAccountService#delete_actor!).
  events.afterCommit("account.deleted", (e) => {
    const account = services.accounts.findById(e.accountId);
    const followers = e.recipientIds.flatMap((id) => services.accounts.findById(id) ?? []);
    if (!account || account.domain !== null || followers.length === 0) return;
    const c = ctx();
    const actor = c.getActorUri(account.username);
    const del = new Delete({ id: new URL(`${actor.href}#delete`), actor, to: new URL("https://www.w3.org/ns/activitystreams#Public"), object: actor });
    sender.send("Delete of an actor", () => c.sendActivity({ identifier: account.username }, followers.map(recipientOf), del, { preferSharedInbox: true }));
  });
}
