import { QuoteRequest, Reject } from "@fedify/fedify/vocab";
import { actorSource } from "./actor.ts";
import type { Inbound, Listener } from "./index.ts";
import { isStatusObject, noteInput } from "./note.ts";
import { refOf } from "./refs.ts";

/**
 * A remote account asks to quote a local post (FEP-044f's QuoteRequest; the quoting post is
 * its `instrument`, embedded as Mastodon sends it, or named by its IRI). The author's policy
 * answers (RemoteQuotes): an Accept with a stamp follows the quote's acceptance (outbound/
 * quotes.ts); a refusal is told at once, quoting the request as Mastodon's
 * RejectQuoteRequestSerializer does.
 */
export const onQuoteRequest =
  ({ services, loader }: Inbound): Listener<QuoteRequest> =>
  async (ctx, request) => {
    if (request.id === null || request.actorId === null || request.objectId === null) return;
    const actorUri = request.actorId;
    const answer = await services.remoteQuotes.request({
      id: request.id.href,
      actor: actorSource(ctx, request, loader),
      object: refOf(ctx, request.objectId),
      instrument: request.instrumentId?.href ?? null,
      instrumentNote: async () => {
        // Embedded: taken as it came only from the requester's own server (Fedify refetches it otherwise).
        const object = await request.getInstrument({ ...ctx, suppressError: true });
        if (!isStatusObject(object) || object.id?.origin !== actorUri.origin) return null;
        const raw = async () => ((await request.toJsonLd()) as { instrument?: unknown } | null)?.instrument;
        return noteInput(ctx, object, loader, raw);
      },
    });
    if (answer !== "reject") return;
    const quoted = ctx.parseUri(request.objectId);
    const identifier = quoted?.type === "object" ? quoted.values.identifier : undefined;
    if (identifier === undefined) return;
    const actor = ctx.getActorUri(identifier);
    // The request as Mastodon quotes it back: the quoting post by its IRI.
    const echoed = new QuoteRequest({ id: request.id, actor: actorUri, object: request.objectId, instrument: request.instrumentId });
    const reject = new Reject({ id: new URL(`${actor.href}#rejects/quote_requests/${crypto.randomUUID()}`), actor, object: echoed });
    const requester = await request.getActor({ ...ctx, suppressError: true });
    if (requester) await ctx.sendActivity({ identifier }, requester, reject);
  };
