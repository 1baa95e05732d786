import type { Context } from "@fedify/fedify";
import { Accept, Follow, Undo, type Recipient } from "@fedify/fedify/vocab";
import type { AppContext } from "../context.ts";
import type { AccountRow } from "../db/schema.ts";
import { log } from "../log.ts";
import type { SqliteKvStore } from "./kv.ts";

/** Where the IRI of a remote actor's Follow waits for the local account's answer. */
export const followKey = (followerId: number, targetId: number) => ["rookery", "follow", String(followerId), String(targetId)] as const;

const recipientOf = (account: AccountRow): Recipient => ({
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
export function wireOutgoing(app: AppContext, ctx: () => Context<void>, kv: SqliteKvStore) {
  const { services } = app;
  const pair = (accountId: number, targetId: number) => {
    const [account, target] = [services.accounts.findById(accountId), services.accounts.findById(targetId)];
    return account && target ? { account, target } : null;
  };
  const send = (what: string, work: () => Promise<void>) => {
    work().catch((e) => log("warn", `federation: sending ${what} failed`, { error: String(e).split("\n")[0] }));
  };
  const followOf = (c: Context<void>, local: AccountRow, remote: AccountRow) =>
    new Follow({ id: new URL(`${c.getActorUri(local.username).href}#follows/${remote.id}`), actor: c.getActorUri(local.username), object: new URL(remote.uri!) });

  services.events.afterCommit("follow_request.created", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain !== null || p.target.domain === null) return;
    const c = ctx();
    send("Follow", () => c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), followOf(c, p.account, p.target)));
  });

  services.events.afterCommit("follow.removed", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain !== null || p.target.domain === null) return;
    const c = ctx();
    const actor = c.getActorUri(p.account.username);
    const undo = new Undo({ id: new URL(`${actor.href}#follows/${p.target.id}/undo`), actor, object: followOf(c, p.account, p.target) });
    send("Undo", () => c.sendActivity({ identifier: p.account.username }, recipientOf(p.target), undo));
  });

  services.events.afterCommit("follow_request.authorized", (e) => {
    const p = pair(e.accountId, e.targetAccountId);
    if (!p || p.account.domain === null || p.target.domain !== null) return;
    send("Accept", async () => {
      const followId = await kv.get<string>(followKey(p.account.id, p.target.id));
      const c = ctx();
      const actor = c.getActorUri(p.target.username);
      const follow = new Follow({ id: followId ? new URL(followId) : null, actor: new URL(p.account.uri!), object: actor });
      await c.sendActivity({ identifier: p.target.username }, recipientOf(p.account), new Accept({ id: new URL(`${actor.href}#accepts/follows/${p.account.id}`), actor, object: follow }));
      await kv.delete(followKey(p.account.id, p.target.id));
    });
  });
}
