/**
 * What the edge refuses at an inbox before Fedify reads a byte of JSON-LD: Fedify processes
 * the body (JSON-LD expansion, proofs) before it checks the HTTP signature, and jsonld.js
 * throws on what is not an activity (a bare string, a context that is not one, a nesting
 * deep enough to exhaust the stack), which came out as 500 and a sender retrying forever.
 * Mastodon checks the signature first; here the shape is checked first, then the presence of
 * a signature, and Fedify verifies it. Each refusal is a JSON `{error}`.
 */

/** Deeper than any activity is (a Create of a Note with its tags and attachments is ~6). */
export const MAX_INBOX_DEPTH = 32;

const json = (status: number, error: string) => new Response(JSON.stringify({ error }), { status, headers: { "content-type": "application/json; charset=utf-8" } });

/** The refusal for an inbox POST's body, or null when it may go on to Fedify. */
export function inboxBodyRefusal(headers: Headers, body: Uint8Array | null): Response | null {
  if (body === null || body.byteLength === 0) return json(400, "Error parsing JSON");
  if (nestingDepth(body) > MAX_INBOX_DEPTH) return json(400, "Error parsing JSON: nested too deeply");
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return json(400, "Error parsing JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return json(400, "Error parsing JSON: not an object");
  const context = (parsed as Record<string, unknown>)["@context"];
  if (context !== undefined && !isContext(context)) return json(400, "Error parsing JSON-LD: invalid @context");
  // Signed by HTTP signature (draft-cavage or RFC 9421), or carrying an object integrity proof (FEP-8b32).
  const signed = headers.has("signature") || headers.has("signature-input") || "proof" in (parsed as object);
  return signed ? null : json(401, "Request not signed");
}

function isContext(value: unknown): boolean {
  const one = (v: unknown) => typeof v === "string" || (typeof v === "object" && v !== null && !Array.isArray(v));
  return one(value) || (Array.isArray(value) && value.every(one));
}

/** The deepest nesting of arrays and objects in a JSON text, counted without parsing it. */
export function nestingDepth(bytes: Uint8Array): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
