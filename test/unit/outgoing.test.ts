import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseIp } from "../../src/net/ip.ts";
import { OutgoingHttp, OutgoingRefused, OutgoingTimeout, OutgoingTooLarge, type OutgoingDeps } from "../../src/net/outgoing.ts";
import { isPublicAddress } from "../../src/net/public-address.ts";
import { endlessBody, tricklingBody } from "../support/hostile-bodies.ts";

// The one module every request to another server goes through, against a hostile server on
// loopback: huge, endless, slow and redirecting answers; names are resolved by a resolver the
// test controls (a name that maps to 127.0.0.1 is how a hostile DNS reaches the server's own network).
let hostile: ReturnType<typeof Bun.serve>;
let port: number;
/** A server that announces 200 MB and sends ten bytes (Bun.serve would correct the length). */
let liar: { port: number; stop(closeActive?: boolean): void };
/** Requests the hostile server has seen, by path. */
const seen: string[] = [];
/** Bytes the hostile server managed to hand over for /endless. */
let endlessSent = 0;
/** Requests open at the hostile server now, and the most at once. */
let open = 0;
let mostOpen = 0;

beforeAll(() => {
  hostile = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    fetch(request) {
      const url = new URL(request.url);
      seen.push(url.pathname);
      const hops = Number(url.searchParams.get("hops") ?? "0");
      switch (url.pathname) {
        case "/ok":
          return Response.json({ host: request.headers.get("host") });
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: hops > 1 ? `/redirect?hops=${hops - 1}` : "/ok" } });
        case "/to-private":
          return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${port}/ok` } });
        case "/endless":
          return new Response(endlessBody((n) => (endlessSent += n)));
        case "/trickle":
          // Headers at once, then a byte every 300 ms, forever.
          return new Response(tricklingBody(300));
        case "/silent":
          // Never answers: the first byte does not come.
          return new Promise<Response>(() => {});
        case "/held": {
          open++;
          mostOpen = Math.max(mostOpen, open);
          return new Promise<Response>((resolve) => setTimeout(() => (open--, resolve(new Response("done"))), 200));
        }
        case "/error":
          return new Response("e".repeat(1024 * 1024), { status: 500 });
        default:
          return new Response("missing", { status: 404 });
      }
    },
  });
  port = hostile.port as number;
  liar = Bun.listen<undefined>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/activity+json\r\ncontent-length: ${200 * 1024 * 1024}\r\n\r\n{"id":"x"}`);
      },
    },
  });
});
afterAll(() => {
  hostile.stop(true);
  liar.stop(true);
});

const limits = { firstByteMs: 1500, totalMs: 3000, maxPerHost: 2, maxTotal: 8 };
function outgoing(over: Partial<OutgoingDeps> = {}): OutgoingHttp {
  const names: Record<string, string[]> = { "hostile.test": ["127.0.0.1"], "ssrf.example.com": ["127.0.0.1"], "mixed.test": ["127.0.0.1", "::1"] };
  return new OutgoingHttp({
    allowPrivateAddresses: true,
    refusesHost: (host) => host === "blocked.test" || host.endsWith(".blocked.test"),
    resolve: async (name) => names[name] ?? Promise.reject(new Error(`ENOTFOUND ${name}`)),
    userAgent: "test",
    limits,
    ...over,
  });
}
const at = (path: string, host = "hostile.test") => `http://${host}:${port}${path}`;

describe("addresses", () => {
  test("private, loopback, link-local, CGNAT, multicast, unspecified and reserved addresses are not public, in every spelling", () => {
    for (const text of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::127.0.0.1"]) {
      expect([text, isPublicAddress(parseIp(text)!)]).toEqual([text, false]);
    }
    for (const text of ["93.184.216.34", "2606:4700::1111", "::ffff:93.184.216.34", "64:ff9b::5db8:d822"]) expect([text, isPublicAddress(parseIp(text)!)]).toEqual([text, true]);
  });

  test("a name that resolves to a private address is refused by the address, before any request; so is a literal and a redirect to one", async () => {
    const strict = outgoing({ allowPrivateAddresses: false });
    const before = seen.length;
    for (const url of [at("/ok", "ssrf.example.com"), at("/ok", "mixed.test"), at("/ok", "127.0.0.1"), at("/ok", "[::ffff:7f00:1]"), "http://[::1]/", "http://169.254.169.254/latest/meta-data"]) {
      expect(await strict.fetch(url).catch((e) => e)).toBeInstanceOf(OutgoingRefused);
    }
    expect(seen.length).toBe(before);
    expect(await strict.refusal(at("/ok", "ssrf.example.com"))).toContain("not a public address");
    // A redirect's target is checked as the first URL is: the allowed hop is made, the private one is not.
    const pinnedPublic = outgoing({ allowPrivateAddresses: false, resolve: async () => ["93.184.216.34"], transport: (async () => new Response(null, { status: 302, headers: { location: at("/ok", "127.0.0.1") } })) as unknown as typeof fetch });
    expect(await pinnedPublic.fetch("http://public.test/start").catch((e) => e)).toBeInstanceOf(OutgoingRefused);
  });

  test("the request goes to the address that was checked: a name is resolved once, a second answer (rebinding) is never used", async () => {
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    let lookups = 0;
    const sent: { url: string; host: string | null; tls: unknown }[] = [];
    const watched = outgoing({
      allowPrivateAddresses: false,
      resolve: async () => answers[lookups++]!,
      // The platform's fetch, watched: no packet leaves this machine.
      transport: (async (url: URL, init: RequestInit & { tls?: unknown }) => {
        sent.push({ url: String(url), host: new Headers(init.headers).get("host"), tls: init.tls });
        return new Response("{}");
      }) as unknown as typeof fetch,
    });
    await (await watched.fetch("https://rebind.test/users/a")).text();
    expect(lookups).toBe(1);
    expect(sent).toEqual([{ url: "https://93.184.216.34/users/a", host: "rebind.test", tls: { serverName: "rebind.test" } }]);
  });

  test("only http(s); a refused domain is never asked, whatever the spelling", async () => {
    const client = outgoing();
    for (const url of ["file:///etc/passwd", "data:text/plain,x", "ftp://hostile.test/x", at("/ok", "blocked.test"), at("/ok", "sub.blocked.test"), at("/ok", "blocked.test.")]) {
      expect(await client.fetch(url).catch((e) => e)).toBeInstanceOf(OutgoingRefused);
    }
  });
});

describe("caps and deadlines", () => {
  test("a body is read under its cap: an announced length past it is refused unread, a streamed one is cut off there", async () => {
    const client = outgoing();
    expect(await client.fetch(`http://hostile.test:${liar.port}/key`).catch((e) => e)).toBeInstanceOf(OutgoingTooLarge);
    endlessSent = 0;
    const response = await client.fetch(at("/endless"), {}, { maxBytes: 1024 * 1024 });
    expect(await response.arrayBuffer().catch((e) => e)).toBeInstanceOf(OutgoingTooLarge);
    // What the server pushed before the cut: the cap and the socket's buffers, not the endless body.
    expect(endlessSent).toBeLessThan(16 * 1024 * 1024);
    expect(client.inFlight()).toBe(0);
    // An error's body is kept short and the slot freed at once, whether it is read or not.
    const error = await client.fetch(at("/error"));
    expect(client.inFlight()).toBe(0);
    expect((await error.text()).length).toBeLessThanOrEqual(16 * 1024);
  });

  test("redirects: each hop checked, five at most, or none when the caller follows them itself", async () => {
    const client = outgoing();
    expect(await (await client.fetch(at("/redirect?hops=5"))).json()).toEqual({ host: `hostile.test:${port}` });
    expect(await client.fetch(at("/redirect?hops=6")).catch((e) => e)).toBeInstanceOf(OutgoingRefused);
    const manual = await client.fetch(at("/redirect?hops=1"), { redirect: "manual" });
    expect([manual.status, manual.headers.get("location"), manual.url]).toEqual([302, "/ok", at("/redirect?hops=1")]);
  });

  test("no first byte within the deadline, or no whole body within the total: cut off, slot freed", async () => {
    const client = outgoing();
    const started = performance.now();
    expect(await client.fetch(at("/silent")).catch((e) => e)).toBeInstanceOf(OutgoingTimeout);
    const trickle = await client.fetch(at("/trickle"));
    expect(await trickle.arrayBuffer().catch((e) => e)).toBeInstanceOf(OutgoingTimeout);
    // 1.5 s for the silent one, 3 s for the trickle: nowhere near what the hostile server would take (forever).
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(client.inFlight()).toBe(0);
  });

  test("one host gets so many requests at once; the others wait for a slot", async () => {
    const client = outgoing();
    mostOpen = 0;
    const answers = await Promise.all(Array.from({ length: 6 }, () => client.fetch(at("/held")).then((r) => r.text())));
    expect(answers).toEqual(Array(6).fill("done"));
    expect(mostOpen).toBe(limits.maxPerHost);
    expect(client.inFlight()).toBe(0);
  });

  test("a caller's own signal still ends the request", async () => {
    const client = outgoing();
    const controller = new AbortController();
    const pending = client.fetch(at("/silent"), { signal: controller.signal }).catch((e) => e);
    controller.abort(new Error("gave up"));
    expect(String(await pending)).toContain("gave up");
    expect(client.inFlight()).toBe(0);
  });
});
