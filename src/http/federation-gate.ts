/**
 * What the edge decides about a request for Fedify before Fedify reads it.
 */

/**
 * Every key id a request names, in `Signature` (draft-cavage `keyId="..."`) and in
 * `Signature-Input` (RFC 9421 `;keyid="..."`), wherever it stands: which of them Fedify will
 * verify is Fedify's to decide (RFC 9421 when `Signature-Input` is there), so none is
 * trusted over another. Empty when the request names none.
 */
export function signatureKeyIds(request: Request): string[] {
  const named = [request.headers.get("signature"), request.headers.get("signature-input")].join("\n");
  // Quoted as structured-field strings are (RFC 8941: \" and \\ escaped), as Fedify reads them.
  return [...named.matchAll(/keyid\s*=\s*"((?:[^"\\]|\\.)*)"/gi)].map((m) => m[1]!.replace(/\\(.)/g, "$1"));
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
 * A request that names a key on a domain this server does not federate with (blocked, or off
 * the allow list) is refused before its key is fetched or its body read: 403, as Mastodon's
 * SignatureVerification answers such a key (`domain_not_allowed?`), with its words. Any key
 * id it names counts, not the first one: a decoy `keyId` of an allowed server beside an
 * RFC 9421 signature by a refused one is refused too. This only ever refuses early; what is
 * taken is decided on what Fedify verified, and a refused domain's keys never verify
 * (src/federation/refusals.ts).
 */
export function refusedSigner(request: Request, refuses: (host: string) => boolean): Response | null {
  for (const keyId of signatureKeyIds(request)) {
    const host = keyHost(keyId);
    if (host !== null && !refuses(host)) continue;
    return new Response(JSON.stringify({ error: `Public key not found for key ${keyId}` }), {
      status: 403,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  }
  return null;
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
