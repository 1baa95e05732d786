import { describe, expect, test } from "bun:test";
import { postToPushService, PushRefused } from "../../src/net/push-post.ts";

// Push endpoints are URLs a client chose: without ALLOW_PRIVATE_ADDRESSES, one that points
// into the server's own network is refused before any request (SSRF).
describe("postToPushService", () => {
  const init = { headers: { ttl: "60" }, body: new Uint8Array([1, 2, 3]) };
  const refused = { allowPrivateAddresses: false, userAgent: "test" };

  test("refuses loopback, private, link-local and non-http endpoints", async () => {
    let hits = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response(null, { status: 201 })) });
    try {
      for (const url of [`http://127.0.0.1:${server.port}/push`, `https://localhost:${server.port}/push`, "https://10.1.2.3/push", "https://192.168.0.1/push", "https://169.254.169.254/latest", "https://[::1]/push"]) {
        await expect(postToPushService(url, init, refused)).rejects.toBeInstanceOf(PushRefused);
      }
      await expect(postToPushService("ftp://push.example/x", init, { ...refused, allowPrivateAddresses: true })).rejects.toThrow("not an http(s) URL");
      // A name that does not resolve is not refused for good: the push is tried again later.
      const dns = await postToPushService("https://no-such-host.invalid/push", init, refused).catch((e) => e);
      expect(dns).not.toBeInstanceOf(PushRefused);
      expect(hits).toBe(0);
      // Allowed (tests, loopback set-ups): it is sent, with the headers and body given; a redirect is not followed.
      const res = await postToPushService(`http://127.0.0.1:${server.port}/push`, init, { allowPrivateAddresses: true, userAgent: "test" });
      expect([res.status, hits]).toEqual([201, 1]);
    } finally {
      await server.stop(true);
    }
  });
});
