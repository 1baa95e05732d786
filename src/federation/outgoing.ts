import type { Context } from "@fedify/fedify";
import { Accept, Block, Delete, Follow, Reject, Update, Tombstone, Undo, type Recipient } from "@fedify/fedify/vocab";
import type { AppContext } from "../context.ts";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { log } from "../log.ts";
import type { SqliteKvStore } from "./kv.ts";
import { createOf, mentionedAccounts, noteOf, type NoteLookups } from "./vocab.ts";

/** The IRI of a Follow between a follower and its target: a remote actor's, waiting for the local account's answer, or a local account's, for its Undo to quote. */
export const followKey = (followerId: number, targetId: number) => ["rookery", "follow", String(followerId), String(targetId)] as const;

/** The IRI of a local account's Block of a remote one, for its Undo to quote. */
const blockKey = (accountId: number, targetId: number) => ["rookery", "block", String(accountId), String(targetId)] as const;

export const recipientOf = (account: AccountRow): Recipient => ({
  id: new URL(account.uri!),
  inboxId: new URL(account.inboxUrl!),
  endpoints: account.sharedInboxUrl ? { sharedInbox: new URL(account.sharedInboxUrl) } : null,
});

/**
 * Relationship changes told to remote servers, once committed: a local account's follow
 * request to a remote one sends Follow, its unfollow Undo, and a local account approving a
 * remote follower's request sends Accept. Deliveries go through Fedify's queue (retries,
 * restarts).
 */
export function wireOutgoing(app: AppContext, ctx: () => Context<void>, kv: SqliteKvStore, lookups: NoteLookups): { idle(): Promise<void> } {
  const { services } = app;
  const pair = (accountId: number, targetId: number) => {
    const [account, target] = [services.accounts.findById(accountId), services.accounts.findById(targetId)];
    return account && target ? { account, target } : null;
  };
  // Sends being prepared (keys, rendering) until their deliveries are queued: what idle() awaits.
  const preparing = new Set<Promise<void>>();
  const send = (what: string, work: () => Promise<void>) => {
    const p = work().catch((e) => log("warn", `federation: sending ${what} failed`, { error: String(e).split("\n")[0] }));
    preparing.add(p);
    void p.finally(() => preparing.delete(p));
  };
  // Each Follow has an id of its own (receivers drop an id they have seen, so a second follow
  // after an unfollow or a block would go unheard); it is kept for the Undo to quote.
  const followOf = (c: Context<void>, local: AccountRow, remote: AccountRow, id: string) =>
    new Follow({ id: new URL(id), actor: c.getActorUri(local.username), object: new URL(remote.uri!) });

  services.events.afterCommit("follow_request.created", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain !== null || p.target.domain === null) return;
    const c = ctx();
    const id = `${c.getActorUri(p.account.username).href}#follows/${p.target.id}/${crypto.randomUUID()}`;
    send("Follow", async () => {
      await kv.set(followKey(p.account.id, p.target.id), id);
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), followOf(c, p.account, p.target, id));
    });
  });

  services.events.afterCommit("follow.removed", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain !== null || p.target.domain === null) return;
    const c = ctx();
    const actor = c.getActorUri(p.account.username);
    send("Undo", async () => {
      const id = (await kv.get<string>(followKey(p.account.id, p.target.id))) ?? `${actor.href}#follows/${p.target.id}`;
      const undo = new Undo({ id: new URL(`${id}/undo`), actor, object: followOf(c, p.account, p.target, id) });
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), undo);
      await kv.delete(followKey(p.account.id, p.target.id));
    });
  });

  // Statuses go to the author's remote followers (one delivery per shared inbox) and to the
  // remote accounts they mention; direct ones to the mentioned alone, each at its own inbox,
  // never a shared one. A status's activities share an ordering key, so a Delete never
  // overtakes its Create. Not yet: boosts (Announce).
  const DISTRIBUTABLE = new Set(["public", "unlisted"]);
  /** A local original as a Note, with who should get it; null when nobody elsewhere should. */
  const outgoingNote = (status: StatusRow) => {
    if (status.reblogOfId !== null || status.uri !== null) return null;
    const author = services.accounts.findById(status.accountId);
    if (!author || author.domain !== null) return null;
    const c = ctx();
    const mentioned = mentionedAccounts(lookups, status).filter((a) => a.domain !== null);
    const direct = status.visibility === "direct";
    const followers = direct ? [] : services.federationActors.remoteFollowers(status.accountId);
    // A public or unlisted reply also goes to the author it answers (Mastodon's StatusReachFinder).
    const answered = status.inReplyToAccountId !== null && DISTRIBUTABLE.has(status.visibility) ? services.accounts.findById(status.inReplyToAccountId) : undefined;
    const recipients = [...followers, ...mentioned, ...(answered && answered.domain !== null ? [answered] : [])].map(recipientOf);
    if (recipients.length === 0) return null;
    const note = noteOf(c, app.urls, author, status, lookups);
    const options = { preferSharedInbox: !direct, orderingKey: note.id!.href };
    return { c, author, note, recipients, options };
  };

  services.events.afterCommit("status.created", (e) => {
    const out = outgoingNote(e.status);
    if (!out) return;
    const { c, author, note, recipients, options } = out;
    send("Create", () => c.sendActivity({ identifier: author.username }, recipients, createOf(c, note, author, e.status), options));
  });

  services.events.afterCommit("status.updated", (e) => {
    const out = outgoingNote(e.status);
    if (!out) return;
    const { c, author, note, recipients, options } = out;
    const update = new Update({ id: new URL(`${note.id!.href}#updates/${e.status.editedAt ?? 0}`), actor: c.getActorUri(author.username), tos: note.toIds, ccs: note.ccIds, object: note });
    send("Update", () => c.sendActivity({ identifier: author.username }, recipients, update, options));
  });

  services.events.afterCommit("status.deleted", (e) => {
    const out = outgoingNote(e.status);
    if (!out) return;
    const { c, author, note, recipients, options } = out;
    const del = new Delete({ id: new URL(`${note.id!.href}#delete`), actor: c.getActorUri(author.username), tos: note.toIds, ccs: note.ccIds, object: new Tombstone({ id: note.id! }) });
    send("Delete", () => c.sendActivity({ identifier: author.username }, recipients, del, options));
  });

  // A local account answers a remote account's follow request: Accept or Reject, quoting the
  // Follow. Each answer has an id of its own: receivers drop an activity whose id they have seen,
  // and a second follow (after an unfollow, or a block) needs its answer heard.
  const answer = (kind: "Accept" | "Reject") => (e: { accountId: number; targetAccountId: number }) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain === null || p.target.domain !== null) return;
    send(kind, async () => {
      const followId = await kv.get<string>(followKey(p.account.id, p.target.id));
      const c = ctx();
      const actor = c.getActorUri(p.target.username);
      const follow = new Follow({ id: followId ? new URL(followId) : null, actor: new URL(p.account.uri!), object: actor });
      const values = { id: new URL(`${actor.href}#${kind === "Accept" ? "accepts" : "rejects"}/follows/${p.account.id}/${crypto.randomUUID()}`), actor, object: follow };
      await c.sendActivity({ identifier: p.target.username }, recipientOf(p.account), kind === "Accept" ? new Accept(values) : new Reject(values));
      await kv.delete(followKey(p.account.id, p.target.id));
    });
  };
  services.events.afterCommit("follow_request.authorized", answer("Accept"));
  services.events.afterCommit("follow_request.rejected", answer("Reject"));

  // A local account blocks a remote one, as Mastodon does: a follower it had is rejected (the
  // follow it had of the remote is undone by follow.removed), then Block is sent.
  services.events.afterCommit("block.created", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain !== null || p.target.domain === null) return;
    if (e.severedFollower) answer("Reject")({ accountId: p.target.id, targetAccountId: p.account.id });
    const c = ctx();
    const actor = c.getActorUri(p.account.username);
    const id = `${actor.href}#blocks/${p.target.id}/${crypto.randomUUID()}`;
    const block = new Block({ id: new URL(id), actor, object: new URL(p.target.uri!) });
    send("Block", async () => {
      await kv.set(blockKey(p.account.id, p.target.id), id);
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), block, { orderingKey: `${actor.href}#relationship/${p.target.id}` });
    });
  });

  // An unblock is Undo of the Block it quotes (Mastodon's UnblockService).
  services.events.afterCommit("block.removed", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain !== null || p.target.domain === null) return;
    const c = ctx();
    const actor = c.getActorUri(p.account.username);
    send("Undo Block", async () => {
      const id = (await kv.get<string>(blockKey(p.account.id, p.target.id))) ?? `${actor.href}#blocks/${p.target.id}`;
      const block = new Block({ id: new URL(id), actor, object: new URL(p.target.uri!) });
      const undo = new Undo({ id: new URL(`${id}/undo`), actor, object: block });
      await c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), undo, { orderingKey: `${actor.href}#relationship/${p.target.id}` });
      await kv.delete(blockKey(p.account.id, p.target.id));
    });
  });

  return {
    /** Resolves once every send set in motion so far has put its deliveries in the queue. */
    async idle() {
      while (preparing.size > 0) await Promise.all([...preparing]);
    },
  };
}
