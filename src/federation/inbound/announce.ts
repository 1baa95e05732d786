import type { Announce } from "@fedify/fedify/vocab";
import { actorSource } from "./actor.ts";
import type { Inbound, Listener } from "./index.ts";
import { isStatusObject, noteInput } from "./note.ts";
import { refOf } from "./refs.ts";

/** A boost by a remote account: kept when it boosts a status here, or someone here follows the booster. */
export const onAnnounce =
  ({ services, loader }: Inbound): Listener<Announce> =>
  async (ctx, announce) => {
    if (announce.id === null || announce.actorId === null || announce.objectId === null) return;
    await services.remoteInteractions.announce({
      uri: announce.id.href,
      actor: actorSource(ctx, announce, loader),
      object: refOf(ctx, announce.objectId),
      fetchObject: async () => {
        const object = await announce.getObject({ ...ctx, suppressError: true });
        return isStatusObject(object) ? noteInput(ctx, object, loader) : null;
      },
      to: announce.toIds.map((u) => u.href),
      cc: announce.ccIds.map((u) => u.href),
      publishedAt: announce.published?.epochMilliseconds ?? null,
    });
  };
