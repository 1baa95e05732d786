import type { Accept } from "@fedify/fedify/vocab";
import { answeredFollower } from "./answers.ts";
import type { Inbound, Listener } from "./index.ts";

/** A remote account accepts a local account's Follow: the request becomes a follow. */
export const onAccept =
  ({ services }: Inbound): Listener<Accept> =>
  async (ctx, accept) => {
    // A relay's answer to the instance actor's Follow, which it names by its IRI.
    if (accept.actorId !== null && accept.objectId !== null && services.relays.answered(accept.objectId.href, accept.actorId.href, true)) return;
    const follower = await answeredFollower(ctx, accept);
    if (follower !== null) services.federationInbox.accepted(accept.actorId!.href, follower);
  };
