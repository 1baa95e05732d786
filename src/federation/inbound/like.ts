import type { Like } from "@fedify/fedify/vocab";
import { actorSource } from "./actor.ts";
import type { Inbound, Listener } from "./index.ts";
import { refOf } from "./refs.ts";

/** A favourite of a local status by a remote account (RemoteInteractions counts it). */
export const onLike =
  ({ services, loader }: Inbound): Listener<Like> =>
  async (ctx, like) => {
    if (like.actorId === null || like.objectId === null) return;
    await services.remoteInteractions.like(actorSource(ctx, like, loader), refOf(ctx, like.objectId));
  };
