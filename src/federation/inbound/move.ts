import type { Move } from "@fedify/fedify/vocab";
import type { Inbound, Listener } from "./index.ts";

/** A remote account says it moved: only itself, to another actor (AccountMoves checks the new one names it). */
export const onMove =
  ({ services }: Inbound): Listener<Move> =>
  async (_ctx, move) => {
    if (move.actorId === null || move.objectId?.href !== move.actorId.href || move.targetId === null) return;
    await services.accountMoves.move(move.actorId.href, move.targetId.href);
  };
