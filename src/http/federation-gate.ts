/**
 * What the edge decides about a request for Fedify before Fedify reads it.
 */

/**
 * The key a request is signed with (draft-cavage `Signature: keyId="..."`, or RFC 9421
 * `Signature-Input: sig1=(...);keyid="..."`), as written; null when it carries none.
 */
export function signatureKeyId(request: Request): string | null {
  const cavage = request.headers.get("signature");
  const fromCavage = cavage ? /(?:^|,)\s*keyId="([^"]*)"/i.exec(cavage)?.[1] : undefined;
  if (fromCavage) return fromCavage;
  const input = request.headers.get("signature-input");
  return (input ? /;\s*keyid="([^"]*)"/i.exec(input)?.[1] : undefined) ?? null;
}

/** The host a key id names (a URL, or Mastodon's old `acct:user@host`). */
export function keyHost(keyId: string): string | null {
  if (keyId.startsWith("acct:")) return keyId.slice(keyId.lastIndexOf("@") + 1) || null;
  try {
    return new URL(keyId).hostname;
  } catch {
    return null;
  }
}

/**
 * A request signed by a key on a domain this server does not federate with (blocked, or off
 * the allow list) is refused before its key is fetched or its body read: 403, as Mastodon's
 * SignatureVerification answers such a key (`domain_not_allowed?`), with its words. Whatever
 * it carried, nothing is stored.
 */
export function refusedSigner(request: Request, refuses: (host: string) => boolean): Response | null {
  const keyId = signatureKeyId(request);
  if (keyId === null) return null;
  const host = keyHost(keyId);
  if (host !== null && !refuses(host)) return null;
  return new Response(JSON.stringify({ error: `Public key not found for key ${keyId}` }), {
    status: 403,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

/**
 * Fedify's answer when a collection or status needs a signed request (AUTHORIZED_FETCH) and
 * this one has none that verifies: Mastodon's 401 and words.
 */
export function unauthorizedFetch(request: Request): Response {
  const signed = request.headers.has("signature") || request.headers.has("signature-input");
  return new Response(JSON.stringify({ error: signed ? "Verification failed" : "Request not signed" }), {
    status: 401,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}
