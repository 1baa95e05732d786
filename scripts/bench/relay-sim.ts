/**
 * Simulated relays for the relay benchmark (relay-stream.ts), in a process of their own so that
 * their work does not count against the server measured. SIM_SERVERS origin servers, each on a
 * loopback address of its own (127.0.2.1, ...), with SIM_ACTORS authors each (one Fedify
 * federation, one RSA-2048 key pair for all), serving the notes they publish; and two relays
 * on 127.0.2.250, as relays in use behave: a Mastodon relay (/m/actor, /m/inbox) that forwards
 * its authors' Creates as they are, Linked-Data-signed by the author, in requests it signs
 * itself, and a LitePub relay (/l/actor, /l/inbox) that Announces the notes, which subscribers
 * fetch from their origin. Both accept every Follow.
 *
 * Control, on 127.0.0.1:SIM_CONTROL_PORT:
 *   POST /prepare?relay=m|l&n=<count>   makes n activities ready (the signing is not timed)
 *   POST /stream?relay=m|l&n=<count>&rate=<per second, 0: as fast as they go>&concurrency=<c>
 *        sends n of them to every subscriber of that relay; answers with the statuses and times
 *   GET  /stats                          subscribers of each relay
 */
import { createFederation, MemoryKvStore, signJsonLd, signRequest } from "@fedify/fedify";
import { Create, Note, Person, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";

const SERVERS = Number(process.env.SIM_SERVERS ?? 20);
const ACTORS = Number(process.env.SIM_ACTORS ?? 5);
const CONTROL_PORT = Number(process.env.SIM_CONTROL_PORT ?? 3998);
const AP = "application/activity+json";
const AS = "https://www.w3.org/ns/activitystreams";

const newPair = async () =>
  (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
const [pair, relayPair] = await Promise.all([newPair(), newPair()]);

const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
federation
  .setActorDispatcher("/actors/{identifier}", async (ctx, identifier) => {
    if (!/^a\d+$/.test(identifier) || Number(identifier.slice(1)) >= ACTORS) return null;
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
      followers: new URL(`${ctx.getActorUri(identifier).href}/followers`),
      publicKey: (await ctx.getActorKeyPairs(identifier))[0]!.cryptographicKey,
    });
  })
  .setKeyPairsDispatcher(() => [pair]);
federation.setInboxListeners("/actors/{identifier}/inbox", "/inbox");

/** The notes the origin servers publish, by their IRI (what a LitePub relay's subscribers fetch). */
const notes = new Map<string, string>();
const bases: string[] = [];
for (let i = 0; i < SERVERS; i++) {
  const server = Bun.serve({
    hostname: `127.0.2.${i + 1}`,
    port: 0,
    fetch: (request) => {
      const note = request.method === "GET" ? notes.get(request.url) : undefined;
      return note ? new Response(note, { headers: { "content-type": AP } }) : federation.fetch(request, { contextData: undefined });
    },
  });
  bases.push(`http://127.0.2.${i + 1}:${server.port}`);
}
const authors = bases.flatMap((base) => Array.from({ length: ACTORS }, (_, n) => `${base}/actors/a${n}`));

// The relays: their actors, subscribers, and what they have ready to send.
const spki = Buffer.from(await crypto.subtle.exportKey("spki", relayPair.publicKey)).toString("base64");
const publicKeyPem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
type RelayName = "m" | "l";
const relays = { m: { subscribers: new Set<string>(), ready: [] as string[] }, l: { subscribers: new Set<string>(), ready: [] as string[] } };
let relayBase = "";
const relayActor = (name: RelayName) => `${relayBase}/${name}/actor`;

const post = async (name: RelayName, inbox: string, body: string): Promise<number> => {
  const request = new Request(inbox, { method: "POST", headers: { "content-type": AP }, body });
  const res = await fetch(await signRequest(request, relayPair.privateKey, new URL(`${relayActor(name)}#main-key`))).catch(() => null);
  await res?.arrayBuffer();
  return res?.status ?? 0;
};

const relayServer = Bun.serve({
  hostname: "127.0.2.250",
  port: 0,
  async fetch(request) {
    const [, name, what] = new URL(request.url).pathname.split("/") as [string, RelayName, string];
    if (name !== "m" && name !== "l") return new Response("not found", { status: 404 });
    if (request.method === "GET" && what === "actor") {
      return Response.json(
        { "@context": [AS, "https://w3id.org/security/v1"], id: relayActor(name), type: "Application", preferredUsername: "relay", inbox: `${relayBase}/${name}/inbox`, publicKey: { id: `${relayActor(name)}#main-key`, owner: relayActor(name), publicKeyPem } },
        { headers: { "content-type": AP } },
      );
    }
    if (request.method !== "POST" || what !== "inbox") return new Response("not found", { status: 404 });
    const body = (await request.json()) as { type: string; actor: string; id: string };
    if (body.type === "Follow") {
      queueMicrotask(async () => {
        const actor = (await (await fetch(body.actor, { headers: { accept: AP } })).json()) as { inbox: string; endpoints?: { sharedInbox?: string } };
        const inbox = actor.endpoints?.sharedInbox ?? actor.inbox;
        await post(name, actor.inbox, JSON.stringify({ "@context": AS, id: `${relayActor(name)}#accepts/${crypto.randomUUID()}`, type: "Accept", actor: relayActor(name), object: body }));
        relays[name].subscribers.add(inbox);
      });
    }
    return new Response(null, { status: 202 });
  },
});
relayBase = `http://127.0.2.250:${relayServer.port}`;

/** n activities of the relay made ready: Creates signed by their authors, or notes to announce. */
async function prepare(name: RelayName, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const author = authors[i % authors.length]!;
    const id = `${author}/notes/${crypto.randomUUID()}`;
    const note = new Note({
      id: new URL(id),
      attribution: new URL(author),
      to: PUBLIC_COLLECTION,
      cc: new URL(`${author}/followers`),
      content: `<p>Relayed note ${i}: a few words, a <a href="https://example.com/${i}">link</a> and some more text.</p>`,
      published: Temporal.Now.instant(),
    });
    if (name === "l") {
      notes.set(id, JSON.stringify(await note.toJsonLd({ format: "compact" })));
      relays.l.ready.push(JSON.stringify({ "@context": AS, id: `${relayActor("l")}#announces/${crypto.randomUUID()}`, type: "Announce", actor: relayActor("l"), object: id, to: [`${relayActor("l")}/followers`], cc: [`${AS}#Public`] }));
      continue;
    }
    const create = new Create({ id: new URL(`${id}/activity`), actor: new URL(author), to: PUBLIC_COLLECTION, cc: new URL(`${author}/followers`), object: note });
    const signed = await signJsonLd(await create.toJsonLd({ format: "compact" }), pair.privateKey, new URL(`${author}#main-key`), {});
    relays.m.ready.push(JSON.stringify(signed));
  }
  return performance.now() - started;
}

/** Sends n ready activities to every subscriber, paced at `rate` a second (0: unpaced), `concurrency` at a time. */
async function stream(name: RelayName, n: number, rate: number, concurrency: number) {
  const bodies = relays[name].ready.splice(0, n);
  const inboxes = [...relays[name].subscribers];
  const statuses: Record<string, number> = {};
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const i = next++;
        // Paced: item i leaves no earlier than i/rate seconds after the start.
        if (rate > 0) {
          const due = started + (i * 1000) / rate;
          if (due > Date.now()) await Bun.sleep(due - Date.now());
        }
        for (const inbox of inboxes) {
          const status = String(await post(name, inbox, bodies[i]!));
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }
    }),
  );
  return { started, sendMs: Date.now() - started, sent: bodies.length, statuses };
}

Bun.serve({
  hostname: "127.0.0.1",
  port: CONTROL_PORT,
  idleTimeout: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const q = (k: string) => url.searchParams.get(k) ?? "";
    const name = q("relay") === "l" ? "l" : "m";
    if (url.pathname === "/stats") return Response.json({ inboxes: { m: `${relayBase}/m/inbox`, l: `${relayBase}/l/inbox` }, actors: { m: relayActor("m"), l: relayActor("l") }, subscribers: { m: relays.m.subscribers.size, l: relays.l.subscribers.size } });
    if (url.pathname === "/prepare") return Response.json({ ms: await prepare(name, Number(q("n"))) });
    if (url.pathname === "/stream") return Response.json(await stream(name, Number(q("n")), Number(q("rate") || 0), Number(q("concurrency") || 16)));
    return new Response("not found", { status: 404 });
  },
});
console.log(`simulated relays ready: ${authors.length} authors on ${SERVERS} servers`);
