import { validatePublicUrl } from "@fedify/vocab-runtime";

const TIMEOUT_MS = 15_000;

/** The endpoint is one this server will never send to (not http(s), or a private address). */
export class PushRefused extends Error {}

/**
 * POSTs one push message to a subscription's endpoint: http(s) only, the address checked
 * against SSRF unless private addresses are allowed (Fedify's validatePublicUrl, as for every
 * other fetch of ours), no redirects followed (a push service answers, it does not send us
 * elsewhere: a 3xx is a failure), and a time limit.
 */
export async function postToPushService(
  endpoint: string,
  init: { headers: Record<string, string>; body: Uint8Array },
  options: { allowPrivateAddresses: boolean; userAgent: string },
): Promise<Response> {
  const url = new URL(endpoint);
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new PushRefused(`not an http(s) URL: ${url.protocol}`);
  if (!options.allowPrivateAddresses) {
    // A failed DNS lookup may pass (tried again later); an address that is private never will.
    await validatePublicUrl(url.href).catch((e) => Promise.reject(e instanceof Error && e.message === "DNS lookup failed" ? e : new PushRefused(String(e))));
  }
  return fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { ...init.headers, "user-agent": options.userAgent },
    body: init.body as Uint8Array<ArrayBuffer>,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
}
