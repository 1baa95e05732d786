import type { Context } from "@fedify/fedify";
import { type Activity, Add, Announce, Like, PUBLIC_COLLECTION, type Recipient, Remove, Undo } from "@fedify/fedify/vocab";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import { actorUriOf, instant, noteUriOf } from "../vocab.ts";
import type { Outbound } from "./index.ts";
import { relayRecipient } from "./relays.ts";
import { recipientOf } from "./sender.ts";
import { statusKey } from "./statuses.ts";

/**
 * Favourites and boosts by local accounts, told to other servers once committed: a
 * favourite of a remote status is a Like sent to its author (Mastodon sends it nowhere else),
 * a boost an Announce sent to the booster's remote followers, the boosted status's remote
 * author and (a public one) the relays, and taking either back an Undo quoting it.
 */
export function interactions(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, lookups, context: ctx, sender } = out;

  /** The local account and the remote status (with its author) a favourite concerns. */
  const liked = async (accountId: number, statusId: number) => {
    const account = await lookups.account(accountId);
    const status = await lookups.status(statusId);
    const author = status && (await lookups.account(status.accountId));
    if (!account || account.domain !== null || !status || status.uri === null || !author || author.domain === null) return null;
    return { account, status, author };
  };
  const likeOf = (c: Context<void>, account: AccountRow, status: StatusRow, favouriteId: number) => {
    const actor = c.getActorUri(account.username);
    return new Like({ id: new URL(`${actor.href}#likes/${favouriteId}`), actor, object: new URL(status.uri!) });
  };
  // A favourite's Like and its Undo are prepared in turn (their rows read inside the send).
  const likeKey = (e: { favouriteId: number }) => `like:${e.favouriteId}`;

  events.afterCommit("favourite.created", (e) => {
    sender.send(
      "Like",
      async () => {
        const p = await liked(e.accountId, e.statusId);
        if (!p) return;
        const c = ctx();
        const like = likeOf(c, p.account, p.status, e.favouriteId);
        await c.sendActivity({ identifier: p.account.username }, recipientOf(p.author), like, { orderingKey: like.id!.href });
      },
      likeKey(e),
    );
  });

  events.afterCommit("favourite.removed", (e) => {
    sender.send(
      "Undo Like",
      async () => {
        const p = await liked(e.accountId, e.statusId);
        if (!p) return;
        const c = ctx();
        const like = likeOf(c, p.account, p.status, e.favouriteId);
        const undo = new Undo({ id: new URL(`${like.id!.href}/undo`), actor: like.actorId, object: like });
        await c.sendActivity({ identifier: p.account.username }, recipientOf(p.author), undo, { orderingKey: like.id!.href });
      },
      likeKey(e),
    );
  });

  /**
   * A local boost as an Announce (Mastodon's: its id is the boost's URI plus /activity;
   * public boosts have as:Public in `to`, unlisted ones in `cc`, with the booster's
   * followers and the boosted author), and who should get it (read as the send is prepared);
   * null when it is no local boost.
   */
  const announcement = async (boost: StatusRow) => {
    if (boost.reblogOfId === null || boost.uri !== null) return null;
    const booster = await lookups.account(boost.accountId);
    const original = await lookups.status(boost.reblogOfId);
    const author = original && (await lookups.account(original.accountId));
    if (!booster || booster.domain !== null || !original || !author) return null;
    const recipients = async () => {
      const all = [...(await services.federationActors.remoteFollowers(booster.id)), ...(author.domain !== null ? [author] : [])].map(recipientOf);
      // A public boost goes to the accepted relays too, as any public status (Mastodon's
      // StatusReachFinder#relay_inboxes asks only public_visibility?, which a reblog has).
      if (boost.visibility === "public") all.push(...(await services.relays.accepted()).map(relayRecipient));
      return all;
    };
    const c = ctx();
    const followers = c.getFollowersUri(booster.username);
    const authorUri = actorUriOf(c, author);
    const [tos, ccs] = boost.visibility === "public" ? [[PUBLIC_COLLECTION], [followers, authorUri]] : boost.visibility === "unlisted" ? [[followers], [PUBLIC_COLLECTION, authorUri]] : [[followers], [authorUri]];
    const announce = new Announce({
      id: new URL(`${noteUriOf(c, booster, boost).href}/activity`),
      actor: c.getActorUri(booster.username),
      object: noteUriOf(c, author, original),
      published: instant(boost.createdAt),
      tos,
      ccs,
    });
    return { c, booster, announce, recipients };
  };

  // A boost's Announce and its Undo are prepared in turn, under the boost's key (statuses.ts).
  events.afterCommit("status.created", (e) => {
    if (e.status.reblogOfId === null || e.status.uri !== null) return;
    sender.send(
      "Announce",
      async () => {
        const a = await announcement(e.status);
        if (a) await sendTo(a.c, a.booster, await a.recipients(), a.announce, a.announce.id!.href);
      },
      statusKey(e.status.id),
    );
  });

  events.afterCommit("status.deleted", (e) => {
    if (e.status.reblogOfId === null || e.status.uri !== null) return;
    sender.send(
      "Undo Announce",
      async () => {
        const a = await announcement(e.status);
        if (!a) return;
        const { announce } = a;
        const undo = new Undo({ id: new URL(`${announce.id!.href}/undo`), actor: announce.actorId, tos: announce.toIds, ccs: announce.ccIds, object: announce });
        await sendTo(a.c, a.booster, await a.recipients(), undo, announce.id!.href);
      },
      statusKey(e.status.id),
    );
  });

  // A local pin or unpin: Add to or Remove from the featured collection, told to the remote
  // followers (Mastodon's AddSerializer / RemoveSerializer), so their servers show it pinned.
  const featuring = (kind: "Add" | "Remove") => (e: { accountId: number; statusId: number }) => {
    sender.send(
      kind,
      async () => {
        const account = await lookups.account(e.accountId);
        const status = await lookups.status(e.statusId);
        if (!account || account.domain !== null || !status || status.uri !== null) return;
        const c = ctx();
        const actor = c.getActorUri(account.username);
        const values = { id: new URL(`${actor.href}#${kind === "Add" ? "pins" : "unpins"}/${status.id}/${crypto.randomUUID()}`), actor, object: noteUriOf(c, account, status), target: c.getFeaturedUri(account.username), to: PUBLIC_COLLECTION };
        const activity = kind === "Add" ? new Add(values) : new Remove(values);
        await sendTo(c, account, (await services.federationActors.remoteFollowers(account.id)).map(recipientOf), activity, `${actor.href}#featured`);
      },
      `featured:${e.accountId}`,
    );
  };
  events.afterCommit("status.pinned", featuring("Add"));
  events.afterCommit("status.unpinned", featuring("Remove"));
}

/** Sends to the followers' servers (one delivery per shared inbox), unless there is nobody to send to. */
async function sendTo(c: Context<void>, from: AccountRow, recipients: Recipient[], activity: Activity, orderingKey: string): Promise<void> {
  if (recipients.length > 0) await c.sendActivity({ identifier: from.username }, recipients, activity, { preferSharedInbox: true, orderingKey });
}
