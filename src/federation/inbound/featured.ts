import type { Add, Remove } from "@fedify/fedify/vocab";
import type { Inbound, Listener } from "./index.ts";
import { isStatusObject, noteInput } from "./note.ts";
import { refOf } from "./refs.ts";

/** A remote account pins (Add) or unpins (Remove) one of its statuses in its featured collection. */
export const onFeatured =
  ({ services, loader }: Inbound, kind: "Add" | "Remove"): Listener<Add | Remove> =>
  async (ctx, activity) => {
    if (activity.actorId === null || activity.objectId === null || activity.targetId === null) return;
    await services.remoteInteractions.feature(kind, {
      actorUri: activity.actorId.href,
      object: refOf(ctx, activity.objectId),
      target: activity.targetId.href,
      fetchObject: async () => {
        const object = await activity.getObject({ ...ctx, suppressError: true });
        return isStatusObject(object) ? noteInput(ctx, object, loader) : null;
      },
    });
  };
