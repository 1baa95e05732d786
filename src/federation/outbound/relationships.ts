import type { Context } from "@fedify/fedify";
import { Accept, Block, Follow, Reject, Undo, type Actor } from "@fedify/fedify/vocab";
import type { AccountRow } from "../../db/schema.ts";
import type { EventBus } from "../../infra/events.ts";
import type { Outbound } from "./index.ts";
import { recipientOf } from "./sender.ts";

/** The IRI of a Follow between a follower and its target: a remote actor's, waiting for the local account's answer, or a local account's, for its Undo to quote. */
export const followKey = (followerId: number, targetId: number) => ["rookery", "follow", String(followerId), String(targetId)] as const;

/** The IRI of a local account's Block of a remote one, for its Undo to quote. */
const blockKey = (accountId: number, targetId: number) => ["rookery", "block", String(accountId), String(targetId)] as const;


/**
 * Relationship changes told to remote servers, once committed: a local account's follow
 * request to a remote one sends Follow, its unfollow Undo, and a local account approving a
 * remote follower's request sends Accept. Deliveries go through Fedify's queue (retries,
 * restarts).
 */
export function relationships(events: Pick<EventBus, "afterCommit">, out: Outbound): void {
  const { services, context: ctx, kv, sender } = out;
  const pair = async (accountId: number, targetId: number) => {
    const account = await services.accounts.get(accountId);
    const target = account && (await services.accounts.get(targetId));
    return account && target ? { account, target } : null;
  };
  // The activities between two accounts are prepared in the order they were set in motion (a
  // Follow before its Undo, a Reject before the Block): their rows are read inside the send.
  const send = (what: string, accountId: number, targetId: number, work: () => Promise<void>) =>
    sender.send(what, work, `relationship:${Math.min(accountId, targetId)}/${Math.max(accountId, targetId)}`);
  // Each Follow has an id of its own (receivers drop an id they have seen, so a second follow
  // after an unfollow or a block would go unheard); it is kept for the Undo to quote.
  const followOf = (c: Context<void>, local: AccountRow, remote: AccountRow, id: string) =>
    new Follow({ id: new URL(id), actor: c.getActorUri(local.username), object: new URL(remote.uri!) });

  events.afterCommit("follow_request.created", (e) => {
    send("Follow", e.accountId, e.targetAccountId, async () => {
      const p = await pair(e.accountId, e.targetAccountId);
      if (!p || p.account.domain !== null || p.target.domain === null) return;
      const c = ctx();
      const id = `${c.getActorUri(p.account.username).href}#follows/${p.target.id}/${crypto.randomUUID()}`;
      await kv.set(followKey(p.account.id, p.target.id), id);
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), followOf(c, p.account, p.target, id));
    });
  });

  events.afterCommit("follow.removed", (e) => {
    send("Undo", e.accountId, e.targetAccountId, async () => {
      const p = await pair(e.accountId, e.targetAccountId);
      if (!p || p.account.domain !== null || p.target.domain === null) return;
      const c = ctx();
      const actor = c.getActorUri(p.account.username);
      const kept = await kv.get<string>(followKey(p.account.id, p.target.id));
      // A follow ended by the followed account's Block goes without Undo: its server ended it
      // already and refuses whatever the blocked account sends (GoToSocial answers 403, and the
      // delivery would be retried for two days). The block is written in the same synchronous
      // call as the follow's removal, so it is there by now.
      if ((await services.follows.relationship(p.account.id, p.target.id)).blockedBy) {
        await kv.delete(followKey(p.account.id, p.target.id));
        return;
      }
      const id = kept ?? `${actor.href}#follows/${p.target.id}`;
      const undo = new Undo({ id: new URL(`${id}/undo`), actor, object: followOf(c, p.account, p.target, id) });
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), undo);
      await kv.delete(followKey(p.account.id, p.target.id));
    });
  });

  // A local account answers a remote account's follow request: Accept or Reject, quoting the
  // Follow. Each answer has an id of its own: receivers drop an activity whose id they have seen,
  // and a second follow (after an unfollow, or a block) needs its answer heard.
  const answer = (kind: "Accept" | "Reject") => (e: { accountId: number; targetAccountId: number }) => {
    send(kind, e.accountId, e.targetAccountId, async () => {
      const p = await pair(e.accountId, e.targetAccountId);
      if (!p || p.account.domain === null || p.target.domain !== null) return;
      const followId = await kv.get<string>(followKey(p.account.id, p.target.id));
      const c = ctx();
      const actor = c.getActorUri(p.target.username);
      const follow = new Follow({ id: followId ? new URL(followId) : null, actor: new URL(p.account.uri!), object: actor });
      const values = { id: new URL(`${actor.href}#${kind === "Accept" ? "accepts" : "rejects"}/follows/${p.account.id}/${crypto.randomUUID()}`), actor, object: follow };
      await c.sendActivity({ identifier: p.target.username }, recipientOf(p.account), kind === "Accept" ? new Accept(values) : new Reject(values));
      // An accepted Follow's IRI stays: a Reject when blocking the follower quotes it.
      if (kind === "Reject") await kv.delete(followKey(p.account.id, p.target.id));
    });
  };
  events.afterCommit("follow_request.authorized", answer("Accept"));
  events.afterCommit("follow_request.rejected", answer("Reject"));
  // A local account blocked the remote follower's domain (Mastodon's reject_existing_followers!).
  events.afterCommit("follow.rejected", answer("Reject"));

  // A local account blocks a remote one, as Mastodon does: a follower it had is rejected (the
  // follow it had of the remote is undone by follow.removed), then Block is sent.
  events.afterCommit("block.created", (e) => {
    // The Reject is checked as its own send (it answers only a remote follower of a local account).
    if (e.severedFollower) answer("Reject")({ accountId: e.targetAccountId, targetAccountId: e.accountId });
    send("Block", e.accountId, e.targetAccountId, async () => {
      const p = await pair(e.accountId, e.targetAccountId);
      if (!p || p.account.domain !== null || p.target.domain === null) return;
      const c = ctx();
      const actor = c.getActorUri(p.account.username);
      const id = `${actor.href}#blocks/${p.target.id}/${crypto.randomUUID()}`;
      const block = new Block({ id: new URL(id), actor, object: new URL(p.target.uri!) });
      await kv.set(blockKey(p.account.id, p.target.id), id);
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), block, { orderingKey: `${actor.href}#relationship/${p.target.id}` });
    });
  });

  // An unblock is Undo of the Block it quotes (Mastodon's UnblockService).
  events.afterCommit("block.removed", (e) => {
    send("Undo Block", e.accountId, e.targetAccountId, async () => {
      const p = await pair(e.accountId, e.targetAccountId);
      if (!p || p.account.domain !== null || p.target.domain === null) return;
      const c = ctx();
      const actor = c.getActorUri(p.account.username);
      const id = (await kv.get<string>(blockKey(p.account.id, p.target.id))) ?? `${actor.href}#blocks/${p.target.id}`;
      const block = new Block({ id: new URL(id), actor, object: new URL(p.target.uri!) });
      const undo = new Undo({ id: new URL(`${id}/undo`), actor, object: block });
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), undo, { orderingKey: `${actor.href}#relationship/${p.target.id}` });
      await kv.delete(blockKey(p.account.id, p.target.id));
    });
  });
}

/**
 * The answer to a remote Follow as it arrives: Accept when it is a follow at once, Reject when
 * it is refused (a block either way), sent from the inbox that received it. Answers get ids of
 * their own: a receiver drops an id it has seen before.
 */
export async function answerFollow(ctx: Context<void>, kind: "Accept" | "Reject", target: AccountRow, followerId: number, follower: Actor, follow: Follow): Promise<void> {
  const actor = ctx.getActorUri(target.username);
  const values = { id: new URL(`${actor.href}#${kind === "Accept" ? "accepts" : "rejects"}/follows/${followerId}/${crypto.randomUUID()}`), actor, object: follow };
  await ctx.sendActivity({ identifier: target.username }, follower, kind === "Accept" ? new Accept(values) : new Reject(values));
}
