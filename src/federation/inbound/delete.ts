import type { Delete } from "@fedify/fedify/vocab";
import type { Inbound, Listener } from "./index.ts";

/**
 * A remote status deleted by its author, or an actor deleting itself (its account goes here
 * too), or a stamp withdrawn by the author who issued it (FEP-044f: the quote it approved is
 * revoked). Mastodon embeds the stamp, typed QuoteAuthorization; its IRI is what counts.
 */
export const onDelete =
  ({ services }: Inbound): Listener<Delete> =>
  async (ctx, del) => {
    if (del.actorId === null || del.objectId === null) return;
    await services.federationInbox.delete(del.actorId.href, del.objectId.href);
    // A local post's quote revoked: its followers hear of it from here, the Delete as signed by its author.
    const quoter = await services.remoteQuotes.revoked(del.actorId.href, del.objectId.href);
    if (quoter !== null) await ctx.forwardActivity({ identifier: quoter }, "followers", { skipIfUnsigned: true, preferSharedInbox: true });
  };
