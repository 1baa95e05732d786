import { describe, expect, test } from "bun:test";
import { OutgoingHttp, OutgoingRefused } from "../../src/net/outgoing.ts";
import { postToPushService } from "../../src/net/push-post.ts";

const limits = { firstByteMs: 2000, totalMs: 2000, maxPerHost: 4, maxTotal: 8 };
const outgoing = (allowPrivateAddresses: boolean) =>
  // Federation's domain rules refuse everything here: push services are not peers, so they are not asked.
  new OutgoingHttp({ allowPrivateAddresses, refusesHost: () => true, resolve: async (name) => (name === "push.test" || name === "localhost" ? ["127.0.0.1"] : Promise.reject(new Error(`ENOTFOUND ${name}`))), userAgent: "test", limits });

// Push endpoints are URLs a client chose: without ALLOW_PRIVATE_ADDRESSES, one that points
// into the server's own network is refused before any request (SSRF).
describe("postToPushService", () => {
  const init = { headers: { ttl: "60" }, body: new Uint8Array([1, 2, 3]) };

  test("refuses loopback, private, link-local and non-http endpoints, and names that resolve to them", async () => {
    let hits = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response(null, { status: 201 })) });
    try {
      const strict = outgoing(false);
      for (const url of [`http://127.0.0.1:${server.port}/push`, `http://push.test:${server.port}/push`, `https://localhost:${server.port}/push`, "https://10.1.2.3/push", "https://192.168.0.1/push", "https://169.254.169.254/latest", "https://[::1]/push", "https://[::ffff:127.0.0.1]/push"]) {
        await expect(postToPushService(strict, url, init)).rejects.toBeInstanceOf(OutgoingRefused);
      }
      await expect(postToPushService(outgoing(true), "ftp://push.example/x", init)).rejects.toThrow("not an http(s) URL");
      // A name that does not resolve is not refused for good: the push is tried again later.
      const dns = await postToPushService(strict, "https://no-such-host.invalid/push", init).catch((e) => e);
      expect(dns).not.toBeInstanceOf(OutgoingRefused);
      expect(hits).toBe(0);
      // Allowed (tests, loopback set-ups): it is sent, with the headers and body given; a redirect is not followed.
      const res = await postToPushService(outgoing(true), `http://push.test:${server.port}/push`, init);
      expect([res.status, hits]).toEqual([201, 1]);
    } finally {
      await server.stop(true);
    }
  });
});
