import type { startRawServer } from "./raw-server.ts";

/**
 * Quote posts as a server speaking Mastodon 4.5 writes them (ActivityPub::NoteSerializer,
 * QuoteRequestSerializer, AcceptQuoteRequestSerializer, QuoteAuthorizationSerializer, with
 * ContextHelper's @context): `quote` without "@type": "@id", a stamp whose interactingObject
 * and interactionTarget are plain strings. For tests that play such a server on a raw one.
 */
export const NOTE_CONTEXT = [
  "https://www.w3.org/ns/activitystreams",
  {
    ostatus: "http://ostatus.org#",
    atomUri: "ostatus:atomUri",
    sensitive: "as:sensitive",
    toot: "http://joinmastodon.org/ns#",
    quote: "https://w3id.org/fep/044f#quote",
    quoteUri: "http://fedibird.com/ns#quoteUri",
    _misskey_quote: "https://misskey-hub.net/ns#_misskey_quote",
    quoteAuthorization: { "@id": "https://w3id.org/fep/044f#quoteAuthorization", "@type": "@id" },
    gts: "https://gotosocial.org/ns#",
    interactionPolicy: { "@id": "gts:interactionPolicy", "@type": "@id" },
    canQuote: { "@id": "gts:canQuote", "@type": "@id" },
    automaticApproval: { "@id": "gts:automaticApproval", "@type": "@id" },
    manualApproval: { "@id": "gts:manualApproval", "@type": "@id" },
    QuoteRequest: "https://w3id.org/fep/044f#QuoteRequest",
  },
];
export const STAMP_CONTEXT = [
  "https://www.w3.org/ns/activitystreams",
  {
    gts: "https://gotosocial.org/ns#",
    quoteAuthorization: { "@id": "https://w3id.org/fep/044f#quoteAuthorization", "@type": "@id" },
    interactingObject: { "@id": "gts:interactingObject" },
    interactionTarget: { "@id": "gts:interactionTarget" },
  },
];
export const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

type RawServer = Awaited<ReturnType<typeof startRawServer>>;

/** A public Note of an actor on `server`, as Mastodon serializes one; served at its IRI. */
export function mastodonNote(server: RawServer, actor: string, path: string, extra: Record<string, unknown> = {}) {
  const document = {
    "@context": NOTE_CONTEXT,
    id: `${server.base}${path}`,
    type: "Note",
    attributedTo: actor,
    content: `<p>${path}</p>`,
    published: new Date().toISOString(),
    to: [PUBLIC],
    cc: [`${actor}/followers`],
    interactionPolicy: { canQuote: { automaticApproval: PUBLIC } },
    ...extra,
  };
  server.serve(path, document);
  return document;
}

/** A stamp as Mastodon's QuoteAuthorizationsController serves one, at `path` on `server`; its IRI. */
export function mastodonStamp(server: RawServer, path: string, fields: { attributedTo: string; interactingObject: string; interactionTarget: string }) {
  return server.serve(path, { "@context": STAMP_CONTEXT, type: "QuoteAuthorization", id: `${server.base}${path}`, ...fields });
}
