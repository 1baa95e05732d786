import type { Delete } from "@fedify/fedify/vocab";
import type { Inbound, Listener } from "./index.ts";

/** A remote status deleted by its author, or an actor deleting itself (its account goes here too). */
export const onDelete =
  ({ services }: Inbound): Listener<Delete> =>
  async (_ctx, del) => {
    if (del.actorId === null || del.objectId === null) return;
    services.federationInbox.delete(del.actorId.href, del.objectId.href);
  };
