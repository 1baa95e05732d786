import { validatePublicUrl } from "@fedify/vocab-runtime";

export class PublicFetchError extends Error {}

/** Redirects followed at most, each checked like the first URL. */
const MAX_REDIRECTS = 3;
const TIMEOUT_MS = 30_000;

/**
 * The bytes at a URL on another server, for the media cache and link previews: http(s) only, every hop's address
 * checked against SSRF unless private addresses are allowed (the same check Fedify makes of the
 * documents it fetches, @fedify/vocab-runtime's validatePublicUrl), redirects followed by hand so
 * that each target is checked too, and the body read under a cap: a server that announces or
 * sends more is cut off, never held in memory whole.
 */
export async function fetchPublicBytes(
  url: string,
  options: { maxBytes: number; allowPrivateAddresses: boolean; userAgent: string; accept?: string; timeoutMs?: number },
): Promise<Uint8Array> {
  let target = new URL(url);
  for (let hop = 0; ; hop++) {
    if (target.protocol !== "https:" && target.protocol !== "http:") throw new PublicFetchError(`not an http(s) URL: ${target.protocol}`);
    if (!options.allowPrivateAddresses) await validatePublicUrl(target.href).catch((e) => Promise.reject(new PublicFetchError(String(e))));
    const response = await fetch(target, { redirect: "manual", headers: { "user-agent": options.userAgent, accept: options.accept ?? "image/*" }, signal: AbortSignal.timeout(options.timeoutMs ?? TIMEOUT_MS) });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new PublicFetchError("too many redirects");
      target = new URL(location, target);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new PublicFetchError(`answered ${response.status}`);
    }
    return readCapped(response, options.maxBytes);
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new PublicFetchError(`larger than ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new PublicFetchError(`larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
}
