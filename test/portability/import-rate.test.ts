import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateCryptoKeyPair } from "@fedify/fedify";
import { createUser } from "../support/fixtures.ts";
import { eventually } from "../support/federation.ts";
import { Client } from "../support/http.ts";
import { loopbackOverHttp, upload } from "../support/imports.ts";
import { MASTODON_CONTEXT } from "../support/raw-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * A following import of 300 lines against two servers that answer WebFinger for anyone and
 * note every request: the entries are started at most IMPORT_RATE_PER_HOST to one server (one
 * at a time there) and IMPORT_RATE in all; the server answers other requests meanwhile; a
 * restart in the middle loses nothing and redoes next to nothing.
 */
const PER_HOST = 20;
const TOTAL = 30;

interface Seen {
  host: string;
  user: string;
  at: number;
}

/** A server (on one or more addresses) with an actor for every name but ghost*, and inboxes that keep what they get. */
async function startCountingServer(hosts: string[]) {
  const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
  const publicKeyPem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
  const webfingers: Seen[] = [];
  const follows = new Set<string>();
  const open = new Map<string, number>();
  let mostOpenAtOnce = 0;
  const servers = hosts.map((hostname) =>
    Bun.serve({
      hostname,
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        const origin = url.origin;
        if (url.pathname === "/.well-known/webfinger") {
          const resource = url.searchParams.get("resource") ?? "";
          const user = /^acct:([^@]+)@/.exec(resource)?.[1] ?? "";
          webfingers.push({ host: url.host, user, at: Date.now() });
          open.set(url.host, (open.get(url.host) ?? 0) + 1);
          mostOpenAtOnce = Math.max(mostOpenAtOnce, open.get(url.host)!);
          // Long enough that two lookups at once would overlap.
          await Bun.sleep(15);
          open.set(url.host, open.get(url.host)! - 1);
          if (user === "" || user.startsWith("ghost")) return new Response("not found", { status: 404 });
          return Response.json({ subject: resource, links: [{ rel: "self", type: "application/activity+json", href: `${origin}/users/${user}` }] }, { headers: { "content-type": "application/jrd+json" } });
        }
        const actor = /^\/users\/([a-z0-9]+)$/.exec(url.pathname);
        if (actor && request.method === "GET") {
          const id = `${origin}${url.pathname}`;
          return Response.json(
            { "@context": MASTODON_CONTEXT, id, type: "Person", preferredUsername: actor[1], inbox: `${id}/inbox`, publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem } },
            { headers: { "content-type": "application/activity+json" } },
          );
        }
        if (request.method === "POST" && url.pathname.endsWith("/inbox")) {
          const activity = (await request.json()) as { type?: string; object?: string };
          if (activity.type === "Follow" && typeof activity.object === "string") follows.add(activity.object);
          return new Response(null, { status: 202 });
        }
        return new Response("not found", { status: 404 });
      },
    }),
  );
  return {
    hosts: servers.map((s) => `${s.hostname}:${s.port}`),
    webfingers,
    follows,
    mostOpenAtOnce: () => mostOpenAtOnce,
    stop: () => servers.forEach((s) => s.stop(true)),
  };
}

/** The most of `times` (sorted) that fall within any `windowMs`. */
function mostWithin(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

let counting: Awaited<ReturnType<typeof startCountingServer>>;
let server: TestServer;

beforeAll(async () => {
  counting = await startCountingServer(["127.0.0.4", "127.0.0.6"]);
  server = await startTestServer(
    { HOST: "127.0.0.5", ALLOW_PRIVATE_ADDRESSES: "true", IMPORT_RATE_PER_HOST: `${PER_HOST}/1`, IMPORT_RATE: `${TOTAL}/1`, FETCH_TIMEOUT_SECONDS: "2" },
    { transport: loopbackOverHttp },
  );
});
afterAll(async () => {
  await server?.close();
  counting?.stop();
});

test(
  "300 follows to two servers: bounded per server and in all, the server answering meanwhile, resumed after a restart",
  async () => {
    const [one, two] = counting.hosts as [string, string];
    const user = await createUser(server, "mover");
    const lines = [
      "Account address,Show boosts,Notify on new posts,Languages",
      ...Array.from({ length: 248 }, (_, i) => `u${i}@${one},true,false,`),
      ...Array.from({ length: 50 }, (_, i) => `v${i}@${two},true,false,`),
      `ghost1@${one},true,false,`,
      `ghost2@${one},true,false,`,
      // Nothing listens there: its server is down, and after three tries its other entries are not tried.
      ...Array.from({ length: 5 }, (_, i) => `gone${i}@127.0.0.7:9,true,false,`),
    ];
    const started = Date.now();
    const res = await upload(user, "following", `${lines.join("\n")}\n`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: "accepted", id: expect.any(String) });
    // The request does not wait for the follows.
    expect(Date.now() - started).toBeLessThan(3000);

    // The import worker picks the file up on its own poll; on a loaded machine (both databases'
    // suites at once) that and the first 60 lookups can take longer than the default 10 s.
    await eventually(() => counting.webfingers.length >= 60, "60 lookups", 30_000);
    // Under way, other requests are answered as ever.
    const before = Date.now();
    expect((await user.client.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    expect(Date.now() - before).toBeLessThan(1000);
    const midway = (await user.client.get(`/api/v1/imports/${res.body.id}`)).body;
    expect(midway.state).toBe("running");
    expect(midway.processed_items).toBeGreaterThan(0);
    expect(midway.processed_items).toBeLessThan(303);

    await eventually(() => counting.webfingers.length >= 120, "120 lookups");
    server = await server.restart();
    const restartedAt = Date.now();
    const client = new Client(server.base, user.token);
    const report = await eventually(
      async () => {
        const r = (await client.get(`/api/v1/imports/${res.body.id}`)).body;
        return r.state === "finished" ? r : null;
      },
      () => `the import to finish after the restart (${counting.webfingers.length} lookups so far)`,
      60_000,
    );
    expect(report).toMatchObject({ total_items: 305, processed_items: 305, imported_items: 0, awaiting_items: 298, failed_items: 7 });
    expect(report.failures).toEqual({ unknown_account: 2, server_down: 5, refused: 0, not_found: 0, invalid: 0 });
    expect(report.failed_entries.map((e: any) => [e.line, e.reason, e.detail])).toEqual([
      [300, "unknown_account", `${one} knows no account ghost1`],
      [301, "unknown_account", `${one} knows no account ghost2`],
      ...[302, 303, 304].map((line) => [line, "server_down", "127.0.0.7:9 did not answer"]),
      ...[305, 306].map((line) => [line, "server_down", "not asked: 127.0.0.7:9 left 3 entries in a row unanswered"]),
    ]);

    // Every account was looked up, and none more than twice (the one under way at the restart).
    const perUser = new Map<string, number>();
    for (const w of counting.webfingers) perUser.set(`${w.user}@${w.host}`, (perUser.get(`${w.user}@${w.host}`) ?? 0) + 1);
    expect(perUser.size).toBe(300);
    expect(Math.max(...perUser.values())).toBeLessThanOrEqual(2);
    expect(counting.webfingers.length).toBeLessThanOrEqual(300 + 2);
    expect(counting.webfingers.filter((w) => w.at > restartedAt).length).toBeGreaterThan(100);
    // One lookup at a time to a server; at most PER_HOST a second to one, TOTAL in all (a few
    // milliseconds of jitter between starting a request and its arrival allowed for).
    expect(counting.mostOpenAtOnce()).toBe(1);
    const at = (host?: string) => counting.webfingers.filter((w) => !host || w.host === host).map((w) => w.at).sort((x, y) => x - y);
    expect(mostWithin(at(one), 1000)).toBeLessThanOrEqual(PER_HOST + 2);
    expect(mostWithin(at(two), 1000)).toBeLessThanOrEqual(PER_HOST + 2);
    expect(mostWithin(at(), 1000)).toBeLessThanOrEqual(TOTAL + 2);
    // The follows reached the servers, over federation's delivery queue.
    await eventually(() => counting.follows.size === 298, () => `298 Follows delivered (${counting.follows.size} so far)`, 30_000);
  },
  120_000,
);

test("a 5,000-line file is taken at once and worked off at the default rate: the server goes on answering, the other server is not flooded", async () => {
  const calm = await startTestServer({ HOST: "127.0.0.8", ALLOW_PRIVATE_ADDRESSES: "true" }, { transport: loopbackOverHttp });
  try {
    const [one] = counting.hosts as [string];
    const user = await createUser(calm, "many");
    const file = `${Array.from({ length: 5000 }, (_, i) => `w${i}@${one}`).join("\n")}\n`;
    const started = Date.now();
    const res = await upload(user, "following", file);
    expect(res.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(3000);
    // The first lookups come a second apart (60/60 to one server), and meanwhile the server answers at once.
    const mine = () => counting.webfingers.filter((w) => w.user.startsWith("w"));
    await eventually(() => mine().length >= 3, () => `three lookups (${mine().length} so far)`);
    const asked = Date.now();
    const report = (await user.client.get(`/api/v1/imports/${res.body.id}`)).body;
    expect(Date.now() - asked).toBeLessThan(1000);
    expect(report).toMatchObject({ state: "running", total_items: 5000 });
    expect(report.processed_items).toBeLessThan(10);
    // Two seconds between the starts of the first and the third, less the jitter of when a
    // request is seen arriving: a few milliseconds on a quiet machine, up to a quarter of a
    // second measured under a load of 14 on 2 cores, and 0.73 s once in a CI run (the first seen
    // late). Unlimited, the three would come within milliseconds of each other.
    const [first, , third] = mine().map((w) => w.at);
    expect(third! - first!).toBeGreaterThanOrEqual(1000);
  } finally {
    await calm.close();
  }
});
