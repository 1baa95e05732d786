import type { Reject } from "@fedify/fedify/vocab";
import { answeredFollower } from "./answers.ts";
import type { Inbound, Listener } from "./index.ts";

/** A remote account refuses (or removes) a local follower. */
export const onReject =
  ({ services }: Inbound): Listener<Reject> =>
  async (ctx, reject) => {
    const follower = await answeredFollower(ctx, reject);
    if (follower !== null) services.federationInbox.rejected(reject.actorId!.href, follower);
  };
