import type { OutgoingHttp } from "./outgoing.ts";

const TIMEOUT_MS = 15_000;

/**
 * POSTs one push message to a subscription's endpoint through the outgoing-HTTP module (http(s)
 * only, the address checked and pinned unless private addresses are allowed: a push endpoint is
 * a URL a client chose), no redirects followed (a push service answers, it does not send us
 * elsewhere: a 3xx is a failure), and a time limit. Push services are not peers: the domain
 * rules of federation do not apply to them.
 */
export function postToPushService(outgoing: OutgoingHttp, endpoint: string, init: { headers: Record<string, string>; body: Uint8Array }): Promise<Response> {
  return outgoing.fetch(endpoint, { method: "POST", redirect: "manual", headers: init.headers, body: init.body as Uint8Array<ArrayBuffer> }, { totalMs: TIMEOUT_MS, anyDomain: true });
}
