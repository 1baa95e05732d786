import type { InboxContext } from "@fedify/fedify";
import type { Accept, Reject } from "@fedify/fedify/vocab";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { QuoteAnswerInput } from "../../services/remote/quotes.ts";
import { hasType, idOf } from "./quote-fields.ts";
import { refOf } from "./refs.ts";

/**
 * What an Accept or Reject answers, when it may answer a QuoteRequest sent from here: the
 * request's IRI, and (embedded) the quoting post it names; with an Accept's `result`, the
 * stamp. Read from the activity as it came, as Mastodon reads it (quote_request_from_object,
 * quote_from_request_json): a request this server sent is its own to recognize by those IRIs,
 * and a server that does not map the QuoteRequest type in its @context still answers it.
 * Null for an answer to a Follow.
 */
export async function quoteAnswerOf(ctx: InboxContext<void>, answer: Accept | Reject): Promise<{ answer: QuoteAnswerInput; result: string | null } | null> {
  const raw = (await answer.toJsonLd()) as Record<string, unknown> | null;
  if (raw === null || typeof raw !== "object") return null;
  const object = Array.isArray(raw.object) ? raw.object[0] : raw.object;
  if (typeof object === "object" && object !== null && hasType(object as Record<string, unknown>, "Follow")) return null;
  const requestId = httpUrlOrNull(idOf(object));
  const instrument = typeof object === "object" && object !== null ? httpUrlOrNull(idOf((object as Record<string, unknown>).instrument)) : null;
  if (requestId === null && instrument === null) return null;
  return {
    answer: { requestId, instrument: instrument === null ? null : refOf(ctx, new URL(instrument)) },
    result: idOf(raw.result),
  };
}
