import type { Accept } from "@fedify/fedify/vocab";
import { answeredFollower } from "./answers.ts";
import type { Inbound, Listener } from "./index.ts";
import { quoteAnswerOf } from "./quote-answers.ts";

/**
 * A remote account accepts a local account's Follow (the request becomes a follow) or its
 * QuoteRequest (the quote is accepted, with the stamp given as `result`).
 */
export const onAccept =
  ({ services }: Inbound): Listener<Accept> =>
  async (ctx, accept) => {
    if (accept.actorId === null) return;
    // A relay's answer to the instance actor's Follow, which it names by its IRI.
    if (accept.objectId !== null && (await services.relays.answered(accept.objectId.href, accept.actorId.href, true))) return;
    const quote = await quoteAnswerOf(ctx, accept);
    if (quote && (await services.remoteQuotes.accepted(accept.actorId.href, quote.answer, quote.result))) return;
    const follower = await answeredFollower(ctx, accept);
    if (follower !== null) await services.federationInbox.accepted(accept.actorId.href, follower);
  };
