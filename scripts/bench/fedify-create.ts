/**
 * What Fedify 2.3.6 does to every Create it sends, step by step, on this process's one thread:
 * the same steps as Context.sendActivity for an actor with an RSA and an Ed25519 key (the Object
 * Integrity Proof, the compaction of the activity, the Linked Data signature), timed one after
 * another for a Create of a short public Note with a hashtag, as src/federation/vocab.ts makes
 * them. Wall time is the thread's; CPU includes the threads WebCrypto signs on. The last line is
 * the whole of Context.sendActivity to one remote inbox (a queue that keeps the message), which
 * also normalizes the public audience twice (each a pair of canonicalizations) and compacts the
 * activity with its proof; the RSA key is 2048 bits, as Rookery's (src/federation/keys.ts).
 *
 *   bun scripts/bench/fedify-create.ts [rounds=100]
 */
import { createFederation, generateCryptoKeyPair, MemoryKvStore, signJsonLd, signObject, type MessageQueue } from "@fedify/fedify";
import { Create, Hashtag, Note, Person, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { fmt } from "./lib.ts";

const rounds = Number(process.argv[2] ?? 100);
// Fedify's generateCryptoKeyPair makes 4096-bit RSA keys (5 ms a signature here); Rookery's are 2048.
const rsa = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
const ed = await generateCryptoKeyPair("Ed25519");
const base = "https://rookery.example";
const actor = new URL(`${base}/users/author`);
const followers = new URL(`${base}/users/author/followers`);
const create = (i: number) => {
  const published = Temporal.Instant.fromEpochMilliseconds(Date.now());
  const note = new Note({
    id: new URL(`${base}/users/author/statuses/${i}`),
    attribution: actor,
    content: `<p>Benchmark post ${i} with <a href="${base}/tags/tag" class="mention hashtag" rel="tag">#<span>tag</span></a></p>`,
    tos: [PUBLIC_COLLECTION],
    ccs: [followers],
    published,
    url: new URL(`${base}/@author/${i}`),
    tags: [new Hashtag({ href: new URL(`${base}/tags/tag`), name: "#tag" })],
  });
  return new Create({ id: new URL(`${note.id!.href}/activity`), actor, tos: [PUBLIC_COLLECTION], ccs: [followers], published, object: note });
};

async function time(label: string, step: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 5; i++) await step(i);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < rounds; i++) await step(i);
  const used = process.cpuUsage(cpu);
  console.log(`${label.padEnd(64)} ${fmt(((performance.now() - start) * 1000) / rounds).padStart(6)} µs wall ${fmt((used.user + used.system) / rounds).padStart(6)} µs CPU`);
}

const compacted = (await create(0).toJsonLd({ format: "compact" })) as Record<string, unknown>;
console.log(`${rounds} rounds each\n`);
await time("Object Integrity Proof (signObject: compact, JCS, Ed25519)", (i) => signObject(create(i), ed.privateKey, new URL(`${actor.href}#ed25519-key`)));
await time("the activity compacted (toJsonLd, format compact)", (i) => create(i).toJsonLd({ format: "compact" }));
await time("Linked Data signature (signJsonLd: URDNA2015, RSA)", () => signJsonLd(compacted, rsa.privateKey, new URL(`${actor.href}#main-key`), {}));
await time("the same Create without JSON-LD (toJsonLd's own compact form)", (i) => create(i).toJsonLd());

// The whole: a federation whose actor has both keys, sending to one remote inbox into a queue
// that only keeps the message.
const queued: unknown[] = [];
const queue: MessageQueue = { enqueue: async (message) => void queued.push(message), listen: async () => {} };
const federation = createFederation<void>({ kv: new MemoryKvStore(), queue, manuallyStartQueue: true });
federation
  .setActorDispatcher("/users/{identifier}", (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }))
  .setKeyPairsDispatcher(() => [rsa, ed]);
const ctx = federation.createContext(new URL(base), undefined);
const peer = { id: new URL("https://peer.example/users/bob"), inboxId: new URL("https://peer.example/users/bob/inbox"), endpoints: { sharedInbox: new URL("https://peer.example/inbox") } };
await time("Context.sendActivity, all of it, to one shared inbox", (i) => ctx.sendActivity({ identifier: "author" }, peer, create(i), { preferSharedInbox: true }));
if (queued.length !== rounds + 5) throw new Error(`expected ${rounds + 5} queued deliveries, got ${queued.length}`);
