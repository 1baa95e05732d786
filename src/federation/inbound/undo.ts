import { Activity, Announce, Block, Follow, Like, type Undo } from "@fedify/fedify/vocab";
import { actorSource } from "./actor.ts";
import { blockedBy } from "./block.ts";
import type { Inbound, Listener } from "./index.ts";
import { localActorOf, refOf } from "./refs.ts";

/** Undo of a Follow (the follow or the request goes), a Block, a Like or an Announce, by the actor who sent it. */
export const onUndo =
  ({ services, loader }: Inbound): Listener<Undo> =>
  async (ctx, undo) => {
    if (undo.actorId === null) return;
    const object = await undo.getObject(ctx);
    // Only the actor of the undone activity can take it back.
    if (!(object instanceof Activity) || object.actorId?.href !== undo.actorId.href) return;
    if (object instanceof Like) {
      if (object.objectId === null) return;
      return services.remoteInteractions.unlike(actorSource(ctx, object, loader), refOf(ctx, object.objectId));
    }
    if (object instanceof Announce) return services.remoteInteractions.unannounce(undo.actorId.href, object.id?.href ?? null);
    if (object instanceof Block) {
      const blocked = blockedBy(ctx, object);
      if (blocked) await services.federationInbox.unblock(blocked.actorUri, blocked.target);
      return;
    }
    if (!(object instanceof Follow) || object.objectId === null) return;
    const target = localActorOf(ctx, object.objectId);
    if (target !== null) await services.federationInbox.unfollow(undo.actorId.href, target);
  };
