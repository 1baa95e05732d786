import type { Reject } from "@fedify/fedify/vocab";
import { answeredFollower } from "./answers.ts";
import type { Inbound, Listener } from "./index.ts";
import { quoteAnswerOf } from "./quote-answers.ts";

/** A remote account refuses (or removes) a local follower, or refuses (or takes back) a local quote of its post. */
export const onReject =
  ({ services }: Inbound): Listener<Reject> =>
  async (ctx, reject) => {
    if (reject.actorId === null) return;
    // A relay's answer to the instance actor's Follow, which it names by its IRI.
    if (reject.objectId !== null && (await services.relays.answered(reject.objectId.href, reject.actorId.href, false))) return;
    const quote = await quoteAnswerOf(ctx, reject);
    if (quote && (await services.remoteQuotes.rejected(reject.actorId.href, quote.answer))) return;
    const follower = await answeredFollower(ctx, reject);
    if (follower !== null) await services.federationInbox.rejected(reject.actorId.href, follower);
  };
