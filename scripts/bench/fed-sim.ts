/**
 * Simulated remote servers for the federation benchmarks, run as a process of their own so
 * that their work does not count against the server measured. SIM_SERVERS servers, each on a
 * loopback address of its own (127.0.1.1, 127.0.1.2, ...), each with SIM_ACTORS actors of two
 * kinds: `s<n>` with a shared inbox (as Mastodon's) and `p<n>` with a personal inbox only.
 * One Fedify federation serves them all (actor documents, key, signed Follow and Accept), all
 * actors sharing one RSA key pair (generating thousands would only slow the set-up).
 *
 * Deliveries of Create, Update and Delete are answered 202 at once without checking their
 * signatures (a real receiver does that on its own cores, not the sender's) and recorded: what
 * the benchmark reads is when each inbox got its copy. Everything else goes through Fedify;
 * a Follow from the server measured is accepted, as an open account would.
 *
 * Control, on 127.0.0.1:SIM_CONTROL_PORT:
 *   POST /follow?target=<actor IRI>&kind=s|p   every actor of that kind follows the target
 *   GET  /stats                                 deliveries seen since the last reset
 *   POST /reset
 *   POST /blast?inbox=<url>&n=<count>&concurrency=<c>&authors=<actor IRIs, comma separated>
 *        signs n Creates of public Notes by those authors (not timed), then posts them all
 *        (timed) and answers with the statuses and times
 */
import { createFederation, MemoryKvStore, signRequest } from "@fedify/fedify";
import { Accept, Create, Endpoints, Follow, Note, Person, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";

const SERVERS = Number(process.env.SIM_SERVERS ?? 100);
const ACTORS = Number(process.env.SIM_ACTORS ?? 10);
const CONTROL_PORT = Number(process.env.SIM_CONTROL_PORT ?? 3999);

// RSA-2048, as Mastodon's actor keys (Fedify's generateCryptoKeyPair makes 4096-bit ones,
// which cost the verifier more than the keys it meets in practice).
const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
const actorPattern = /^[sp]\d+$/;
federation
  .setActorDispatcher("/actors/{identifier}", async (ctx, identifier) => {
    if (!actorPattern.test(identifier) || Number(identifier.slice(1)) >= ACTORS) return null;
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
      followers: new URL(`${ctx.getActorUri(identifier).href}/followers`),
      endpoints: identifier.startsWith("s") ? new Endpoints({ sharedInbox: ctx.getInboxUri() }) : null,
      publicKey: (await ctx.getActorKeyPairs(identifier))[0]!.cryptographicKey,
    });
  })
  .setKeyPairsDispatcher(() => [pair]);

const stats = { accepts: 0, deliveries: 0, first: 0, last: 0, inboxes: new Set<string>() };
federation
  .setInboxListeners("/actors/{identifier}/inbox", "/inbox")
  .on(Accept, () => {
    stats.accepts++;
  })
  .on(Follow, async (ctx, follow) => {
    const parsed = follow.objectId ? ctx.parseUri(follow.objectId) : null;
    if (parsed?.type !== "actor" || follow.actorId === null) return;
    const follower = await follow.getActor(ctx);
    if (!follower) return;
    await ctx.sendActivity({ identifier: parsed.identifier }, follower, new Accept({ id: new URL(`${follow.id?.href ?? ctx.getActorUri(parsed.identifier).href}#accept`), actor: ctx.getActorUri(parsed.identifier), object: follow }));
  });

const DELIVERIES = new Set(["Create", "Update", "Delete"]);
const bases: string[] = [];
for (let i = 0; i < SERVERS; i++) {
  const hostname = `127.0.1.${i + 1}`;
  const server = Bun.serve({
    hostname,
    port: 0,
    async fetch(request) {
      if (request.method === "POST") {
        const text = await request.text();
        const type = /"type"\s*:\s*"(\w+)"/.exec(text)?.[1] ?? "";
        if (DELIVERIES.has(type)) {
          const now = Date.now();
          stats.deliveries++;
          stats.first ||= now;
          stats.last = now;
          stats.inboxes.add(request.url);
          return new Response(null, { status: 202 });
        }
        request = new Request(request.url, { method: "POST", headers: request.headers, body: text });
      }
      return federation.fetch(request, { contextData: undefined });
    },
  });
  bases.push(`http://${hostname}:${server.port}`);
}

/** Runs the tasks with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

async function followAll(target: string, kind: string): Promise<number> {
  const c0 = federation.createContext(new URL(bases[0]!), undefined);
  const targetActor = await c0.lookupObject(target);
  if (!targetActor || !("inboxId" in targetActor) || !targetActor.inboxId) throw new Error(`no actor at ${target}`);
  const recipient = { id: new URL(target), inboxId: targetActor.inboxId as URL };
  const senders = bases.flatMap((base) => Array.from({ length: ACTORS }, (_, n) => ({ base, identifier: `${kind}${n}` })));
  await pool(senders, 16, async ({ base, identifier }) => {
    const c = federation.createContext(new URL(base), undefined);
    const actor = c.getActorUri(identifier);
    await c.sendActivity({ identifier }, recipient, new Follow({ id: new URL(`${actor.href}#follows/${crypto.randomUUID()}`), actor, object: new URL(target) }));
  });
  return senders.length;
}

async function blast(inbox: string, n: number, concurrency: number, authors: string[]) {
  const keyIdOf = (author: string) => new URL(`${author}#main-key`);
  const signStarted = performance.now();
  const requests: Request[] = [];
  for (let i = 0; i < n; i++) {
    const author = authors[i % authors.length]!;
    const id = `${author}/notes/${crypto.randomUUID()}`;
    const note = new Note({
      id: new URL(id),
      attribution: new URL(author),
      to: PUBLIC_COLLECTION,
      cc: new URL(`${author}/followers`),
      content: `<p>Benchmark note ${i}: a few words, a <a href="https://example.com/${i}">link</a> and some more text.</p>`,
      published: Temporal.Now.instant(),
    });
    const create = new Create({ id: new URL(`${id}/activity`), actor: new URL(author), to: PUBLIC_COLLECTION, cc: new URL(`${author}/followers`), object: note });
    const body = JSON.stringify(await create.toJsonLd({ format: "compact" }));
    const request = new Request(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
    requests.push(await signRequest(request, pair.privateKey, keyIdOf(author)));
  }
  const signMs = performance.now() - signStarted;
  const statuses: Record<string, number> = {};
  const started = Date.now();
  await pool(requests, concurrency, async (request) => {
    const res = await fetch(request).catch(() => null);
    await res?.arrayBuffer();
    const key = String(res?.status ?? "error");
    statuses[key] = (statuses[key] ?? 0) + 1;
  });
  return { signMs, started, sendMs: Date.now() - started, statuses };
}

Bun.serve({
  hostname: "127.0.0.1",
  port: CONTROL_PORT,
  idleTimeout: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const q = (k: string) => url.searchParams.get(k) ?? "";
    if (url.pathname === "/stats") return Response.json({ accepts: stats.accepts, deliveries: stats.deliveries, inboxes: stats.inboxes.size, first: stats.first, last: stats.last });
    if (url.pathname === "/reset") {
      Object.assign(stats, { deliveries: 0, first: 0, last: 0, inboxes: new Set() });
      return Response.json({ ok: true });
    }
    if (url.pathname === "/follow") return Response.json({ sent: await followAll(q("target"), q("kind")) });
    if (url.pathname === "/actors") return Response.json(bases.flatMap((base) => Array.from({ length: ACTORS }, (_, n) => `${base}/actors/${q("kind")}${n}`)));
    if (url.pathname === "/blast") return Response.json(await blast(q("inbox"), Number(q("n")), Number(q("concurrency") || 32), q("authors").split(",")));
    return new Response("not found", { status: 404 });
  },
});
console.log(`simulated servers ready: ${SERVERS} x ${ACTORS} actors of each kind`);
