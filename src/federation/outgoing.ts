import type { Context } from "@fedify/fedify";
import { Accept, Block, Delete, Follow, Reject, Update, Note, Tombstone, Undo, type Recipient } from "@fedify/fedify/vocab";
import type { AppContext } from "../context.ts";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { log } from "../log.ts";
import type { SqliteKvStore } from "./kv.ts";
import { createOf, noteOf } from "./vocab.ts";

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
export function wireOutgoing(app: AppContext, ctx: () => Context<void>, kv: SqliteKvStore): { idle(): Promise<void> } {
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

  // Statuses go to the author's remote followers, one delivery per shared inbox; a status's
  // activities share an ordering key, so a Delete never overtakes its Create.
  // Not yet: direct messages and mentioned remote accounts, boosts (Announce).
  const FOLLOWER_VISIBILITIES = new Set(["public", "unlisted", "private"]);
  /** A local original its author's remote followers should get, as a Note; null otherwise. */
  const followersNote = (status: StatusRow) => {
    if (status.reblogOfId !== null || status.uri !== null || !FOLLOWER_VISIBILITIES.has(status.visibility)) return null;
    if (!services.federationActors.hasRemoteFollowers(status.accountId)) return null;
    const author = services.accounts.findById(status.accountId);
    if (!author || author.domain !== null) return null;
    const c = ctx();
    const parent = status.inReplyToId === null ? undefined : services.federationActors.statusAuthor(status.inReplyToId);
    const replyTarget = parent && status.inReplyToId !== null ? c.getObjectUri(Note, { identifier: parent, id: String(status.inReplyToId) }) : null;
    return { c, author, note: noteOf(c, app.urls, author, status, replyTarget) };
  };

  services.events.afterCommit("status.created", (e) => {
    const out = followersNote(e.status);
    if (!out) return;
    const { c, author, note } = out;
    send("Create", () => c.sendActivity({ identifier: author.username }, "followers", createOf(c, note, author, e.status), { preferSharedInbox: true, orderingKey: note.id!.href }));
  });

  services.events.afterCommit("status.updated", (e) => {
    const status = e.status;
    const out = followersNote(status);
    if (!out) return;
    const { c, author, note } = out;
    const update = new Update({ id: new URL(`${note.id!.href}#updates/${status.editedAt ?? 0}`), actor: c.getActorUri(author.username), tos: note.toIds, ccs: note.ccIds, object: note });
    send("Update", () => c.sendActivity({ identifier: author.username }, "followers", update, { preferSharedInbox: true, orderingKey: note.id!.href }));
  });

  services.events.afterCommit("status.deleted", (e) => {
    const status = e.status;
    if (status.reblogOfId !== null || !FOLLOWER_VISIBILITIES.has(status.visibility)) return;
    if (!services.federationActors.hasRemoteFollowers(status.accountId)) return;
    const author = services.accounts.findById(status.accountId);
    if (!author || author.domain !== null) return;
    const c = ctx();
    const id = c.getObjectUri(Note, { identifier: author.username, id: String(status.id) });
    const actor = c.getActorUri(author.username);
    const del = new Delete({ id: new URL(`${id.href}#delete`), actor, tos: [new URL("https://www.w3.org/ns/activitystreams#Public")], object: new Tombstone({ id }) });
    send("Delete", () => c.sendActivity({ identifier: author.username }, "followers", del, { preferSharedInbox: true, orderingKey: id.href }));
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
