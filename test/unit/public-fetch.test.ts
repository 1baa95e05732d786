import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fetchPublicBytes, PublicFetchError } from "../../src/media/public-fetch.ts";

// The media cache's downloads, against a real HTTP server on loopback.
let server: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      const hops = Number(url.searchParams.get("hops") ?? "0");
      switch (url.pathname) {
        case "/ok":
          return new Response(new Uint8Array(100));
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: hops > 1 ? `/redirect?hops=${hops - 1}` : "/ok" } });
        case "/big":
          return new Response(new Uint8Array(5000));
        case "/endless":
          return new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1024)) }));
        default:
          return new Response("missing", { status: 404 });
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.stop(true));

const allowed = { maxBytes: 1000, allowPrivateAddresses: true, userAgent: "test" };

describe("fetchPublicBytes", () => {
  test("reads a body within the cap, through up to 3 redirects", async () => {
    expect((await fetchPublicBytes(`${base}/ok`, allowed)).byteLength).toBe(100);
    expect((await fetchPublicBytes(`${base}/redirect?hops=3`, allowed)).byteLength).toBe(100);
  });

  test("refuses a 4th redirect, an error status, a body past the cap (announced or streamed), and schemes other than http(s)", async () => {
    for (const url of [`${base}/redirect?hops=4`, `${base}/missing`, `${base}/big`, `${base}/endless`, "file:///etc/passwd", "data:image/png;base64,AAAA"]) {
      expect(await fetchPublicBytes(url, allowed).catch((e) => e)).toBeInstanceOf(PublicFetchError);
    }
  });

  test("loopback, private and link-local addresses are refused unless allowed", async () => {
    const strict = { ...allowed, allowPrivateAddresses: false };
    for (const url of [`${base}/ok`, "http://10.0.0.1/x.png", "http://[::1]/x.png", "http://169.254.169.254/latest/meta-data"]) {
      expect(await fetchPublicBytes(url, strict).catch((e) => e)).toBeInstanceOf(PublicFetchError);
    }
  });
});
