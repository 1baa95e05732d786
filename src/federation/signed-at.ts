/**
 * The request as its sender signed it, when the edge hands Fedify the same GET at another path.
 *
 * A server asking `/@alice/123` for ActivityPub (the status's `url`, Mastodon's) is served the
 * Note that lives at `/users/alice/statuses/123`: the edge gives Fedify the request at that
 * path, where its dispatcher is. The sender signed `/@alice/123`, so under AUTHORIZED_FETCH
 * the signature is checked against the request as sent (src/federation/readers.ts), not the
 * one Fedify routes. Keyed by the request object, in process: nothing a sender can set.
 */
const signedRequests = new WeakMap<Request, Request>();

/** Records that `routed` is `asSent` at another path. */
export function routedFrom(routed: Request, asSent: Request): void {
  signedRequests.set(routed, asSent);
}

/** The request whose signature to check: as sent, when the edge moved it. */
export function asSigned(request: Request): Request {
  return signedRequests.get(request) ?? request;
}
