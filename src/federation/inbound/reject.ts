import type { Reject } from "@fedify/fedify/vocab";
import { answeredFollower } from "./answers.ts";
import type { Inbound, Listener } from "./index.ts";

/** A remote account refuses (or removes) a local follower. */
export const onReject =
  ({ services }: Inbound): Listener<Reject> =>
  async (ctx, reject) => {
    // A relay's answer to the instance actor's Follow, which it names by its IRI.
    if (reject.actorId !== null && reject.objectId !== null && services.relays.answered(reject.objectId.href, reject.actorId.href, false)) return;
    const follower = await answeredFollower(ctx, reject);
    if (follower !== null) services.federationInbox.rejected(reject.actorId!.href, follower);
  };
