import { startTestServer, type TestServer } from "./server.ts";

// The suite's one poll lives in wait.ts; federation tests import it from here too.
export { eventually } from "./wait.ts";

export const AP = "application/activity+json";

/**
 * Two servers that federate on one machine: each on its own loopback address (127.0.0.2,
 * 127.0.0.3) with its own data directory, PUBLIC_URL its real address, and outgoing requests
 * allowed to private addresses, in this test process (their internals at hand). Plain http:
 * actor IRIs and inboxes work over http; acct: lookups through WebFinger (always https in
 * Fedify) need federation-tls.ts, whose servers run behind TLS proxies in processes of their own.
 */
export async function startFederatedPair(env: Record<string, string> = {}): Promise<[TestServer, TestServer]> {
  const common = { ALLOW_PRIVATE_ADDRESSES: "true", ...env };
  return Promise.all([startTestServer({ HOST: "127.0.0.2", ...common }), startTestServer({ HOST: "127.0.0.3", ...common })]) as Promise<[TestServer, TestServer]>;
}

/** GET as a federating server asks (no signature). */
export async function getAp(url: string, accept = AP): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers: { accept } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}
