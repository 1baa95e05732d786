import type { InboxContext } from "@fedify/fedify";
import type { Block } from "@fedify/fedify/vocab";
import type { Inbound, Listener } from "./index.ts";
import { localActorOf } from "./refs.ts";

/**
 * A remote account blocks a local one, as Mastodon's ActivityPub::Activity::Block: follows
 * both ways end and the block is kept (the local account sees `blocked_by`, cannot follow it).
 */
export const onBlock =
  ({ services }: Inbound): Listener<Block> =>
  async (ctx, block) => {
    const blocked = blockedBy(ctx, block);
    if (blocked) await services.federationInbox.block(blocked.actorUri, blocked.target);
  };

/** Who blocks which local account (by its identifier), for a Block and its Undo. */
export function blockedBy(ctx: InboxContext<void>, block: Block): { actorUri: string; target: string } | null {
  if (block.actorId === null || block.objectId === null) return null;
  const target = localActorOf(ctx, block.objectId);
  return target === null ? null : { actorUri: block.actorId.href, target };
}
