import type { Move } from "@fedify/fedify/vocab";
import { log } from "../../log.ts";
import type { Inbound, Listener } from "./index.ts";

/**
 * A remote account says it moved: only itself (Mastodon: the object is the actor), to another
 * actor; AccountMoves checks the new one names it. What is refused is logged with the reason.
 */
export const onMove =
  ({ services }: Inbound): Listener<Move> =>
  async (_ctx, move) => {
    const refuse = (reason: string) => log("info", "Move refused", { id: move.id?.href, actor: move.actorId?.href, target: move.targetId?.href, reason });
    if (move.actorId === null) return refuse("it names no actor");
    if (move.objectId?.href !== move.actorId.href) return refuse(`an actor moves only itself (its object is ${move.objectId?.href ?? "none"})`);
    if (move.targetId === null) return refuse("it names no new account (target)");
    await services.accountMoves.move(move.actorId.href, move.targetId.href);
  };
