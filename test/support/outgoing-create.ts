import { createFederation, MemoryKvStore, signJsonLd, signObject, type MessageQueue } from "@fedify/fedify";
import { type Activity, Create, Document, Hashtag, Note, Person, PUBLIC_COLLECTION } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";

/**
 * One Create as Fedify writes it on the way out, from fixed inputs and fixed keys, so that its
 * bytes can be compared with what Fedify wrote before jsonld.js and the loaders were patched to
 * keep processed contexts (patches/README.md): the activity compacted with Fedify's default
 * context (an inline object among the URLs), its Object Integrity Proof (which compacts again
 * and normalizes the public audience by two canonicalizations), the activity compacted with
 * that proof (a type-scoped context), and the Linked Data signature over it (URDNA2015). RSA
 * PKCS#1 v1.5 and Ed25519 signatures are deterministic, so every byte is fixed.
 *
 * The keys are test keys made for this file and nothing else.
 */
const RSA_JWK: JsonWebKey = {"alg": "RS256", "d": "D4Qgw_bYydOa75i775FyYormWjH1unVoNw1mFvDebFmSLEoR6vzOLLX1L5ja-qeRWj3ssePIollCrnz8uNsR1I3jWde-5Xhl7VIxsR8bNwf_r3lEpJHK-9HtiQQFQJU1qOxM5kY9LslidZHV_yPTEn93tD3RwUdrnPK6mS29FiLVMEe0CT-O34Owgs2kNMoSma2Yd1s4xnNCcq9vY4QOslkrM5J44b6ZeXEaON-8pP6kt1EaobHzIOYZ8kYo_syx-8G3lRVsoSrS2PzXOmqvsBo_sxX9bPYyPgxhiOvgjjCWW5OSQLyDQry1TLwlGtUVhxCugjuL1IvTPV1y1EHN4Q", "dp": "HGUB9jDsd5fHjDvgRYSs_IuYfjefJvwoamPSF8VQy__JOF11AuQDJvrjX0BqqCeF6nVYVgWV0eYcoNxlBCsENOLI8hmfmF0MIVUUugp_QFcOzafyD0ZmG88MuTSsqZvtpqS8hbCIut8bRlyY4-i52XfgSUOiVp6AH2iak_Y3jRU", "dq": "Id_ht44vPb5FWarCsr_t6bW40uSJpslye_dh7f1wOsSWEqUbJlW3nzTK171Utz4LHkSleZmWQIqgj78FNKpORlCaQPQriUKVCy1HHg5sHkQwW0hyh0I1nwxmu-cRo1nq8v9_FTJwooS3ar1_HZ244in7fwjcByK1al4NT1o73SE", "e": "AQAB", "ext": true, "key_ops": ["sign"], "kty": "RSA", "n": "q8jqZvQ_bdevAd3xyOuFQ81EUAUvsqMc-UIm-uqsZD79dsnBd6x_TEWJWsFhvQjB_1HtstMyfxkbK3huGYzG1Tz-4rRUCb5IKruxLK_bPv-Tr9yK5un9WF8HXwQOH-SXivjg0n0W_KExGtjzb4wxqVA1yVvKmCZxG0guW08LkCqbkexRG8AwtOiAM6jSS53YnDhirnhsWZti9vLozvvUqoy4TuaPHgEDmvxudRjscZvayudxcd-I_dHePiwURGcMKX6STV3G4Yvq_vsO7QQJNw48J5xyLdwQaa5CI_Q1z6l91pruB34N_emqNCBCtmNfSBwQS776-xyhljzlMVz2HQ", "p": "1wINKxAFdSq3FwZBhw2IPnyOJc3vVfax1z-E0u9OGJE0zTvvzSfX3K9KkitrD4iu7OZwM4XlbGcB1UKTuwZAiXMz0VehpRhqq6Ykl4lAec__qop6Ip7CCiZoiYVseNCutMs8vJ9SLjJJkzUSJX5wo8vgNR7He8AxKAp4ZnuQSq0", "q": "zIlCc5FmyPyI_BZeMKYPOle0WfDq_iOY6pS6vMQAwnXat2I00aab4GejFafk7-Ke4ZGczdWi7v3nPmXpukTYcA2ZTAzvwnGkt6V8F7doN9u9YZ3tB7TUTThpe5W2L7olYafWmYg6O3fQcDILrXg0c7tzpDZp8nqotfmr4QtxtzE", "qi": "c8e_RFZ4fOR5sPKH0FoIbTsKfBCiX7vaeLa3sQRtcsZe1yA4-SoP2DmIeL8Md4_PH_03UkHX6grh1czhYaKy_NVF5ly-wrG9qo7_VHHgr7Mweky_VGbKQPyTWkMGRbnFCT6SxHXYVPxvv2Mg-mg6FsR47ez3wrp10poWgOfROm8"};
const ED25519_JWK: JsonWebKey = {"alg": "Ed25519", "crv": "Ed25519", "d": "HTmETAvw2-dbrv8NJMkEasy_uoz8_cepLnmwkdRG7Tk", "ext": true, "key_ops": ["sign"], "kty": "OKP", "x": "fBajKVYEqvJLV7fWtC9ER45lK5tfDSJwkvO4jo855eI"};

/** The public half of the RSA key, to verify the LD signature with. */
export const RSA_PUBLIC_JWK: JsonWebKey = { kty: RSA_JWK.kty, n: RSA_JWK.n, e: RSA_JWK.e };

const base = "https://rookery.example";
const actor = new URL(`${base}/users/author`);
const created = Temporal.Instant.from("2026-11-26T12:00:00Z");

/** The fixed Create: a public Note with a hashtag and an image. */
export function createOf(): Create {
  const note = new Note({
    id: new URL(`${base}/users/author/statuses/1`),
    attribution: actor,
    content: `<p>Fixed post with <a href="${base}/tags/tag" class="mention hashtag" rel="tag">#<span>tag</span></a></p>`,
    tos: [PUBLIC_COLLECTION],
    ccs: [new URL(`${base}/users/author/followers`)],
    published: created,
    url: new URL(`${base}/@author/1`),
    sensitive: false,
    tags: [new Hashtag({ href: new URL(`${base}/tags/tag`), name: "#tag" })],
    attachments: [new Document({ mediaType: "image/png", url: new URL(`${base}/media/1.png`), name: "a picture", width: 640, height: 480 })],
  });
  return new Create({ id: new URL(`${note.id!.href}/activity`), actor, tos: [PUBLIC_COLLECTION], ccs: [new URL(`${base}/users/author/followers`)], published: created, object: note });
}

export async function outgoingCreate(): Promise<{ compacted: unknown; proofed: unknown; signed: unknown }> {
  const rsa = await crypto.subtle.importKey("jwk", RSA_JWK, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["sign"]);
  const ed25519 = await crypto.subtle.importKey("jwk", ED25519_JWK, "Ed25519", true, ["sign"]);
  const create = createOf();
  const compacted = await create.toJsonLd({ format: "compact" });
  const withProof = await signObject(create, ed25519, new URL(`${actor.href}#ed25519-key`), { created });
  const proofed = await withProof.toJsonLd({ format: "compact" });
  const signed = await signJsonLd(proofed, rsa, new URL(`${actor.href}#main-key`), { created });
  return { compacted, proofed, signed };
}

/**
 * The same Create as Context.sendActivity queues it for a remote shared inbox: signed with an
 * Object Integrity Proof, compacted with it, its public audience normalized (`as:Public` written
 * out in full, twice: in the message the proof signs and in the document sent) and signed with
 * a Linked Data signature. The proof and the signature take their time from the clock: the
 * LD signature's from `Date`, which the caller fixes (bun:test's setSystemTime); the proof's from
 * the Temporal polyfill's `Now.instant()`, which adds the sub-millisecond part of a monotonic
 * clock, so it is pinned here for the call to `created`.
 */
export async function sentCreate(): Promise<unknown> {
  return await sentActivity(createOf());
}

/** Any activity as Context.sendActivity queues it for the remote shared inbox, as sentCreate. */
export async function sentActivity(activity: Activity): Promise<unknown> {
  const [message] = await queuedFor(activity, 1);
  return message!.activity;
}

/**
 * The activity of the one fan-out message Context.sendActivity queues when it goes to five
 * servers or more (Fedify's FANOUT_THRESHOLD): compacted with its proof, not yet normalized.
 */
export async function fannedOutActivity(activity: Activity): Promise<unknown> {
  const messages = await queuedFor(activity, 5);
  if (messages.length !== 1 || messages[0]!.type !== "fanout") throw new Error(`expected one fan-out message, got ${messages.map((m) => m.type).join(", ")}`);
  return messages[0]!.activity;
}

async function queuedFor(activity: Activity, servers: number): Promise<{ type: string; activity: unknown }[]> {
  const rsa = await crypto.subtle.importKey("jwk", RSA_JWK, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["sign"]);
  const rsaPublic = await crypto.subtle.importKey("jwk", RSA_PUBLIC_JWK, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["verify"]);
  const ed25519 = await crypto.subtle.importKey("jwk", ED25519_JWK, "Ed25519", true, ["sign"]);
  const ed25519Public = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: ED25519_JWK.x }, "Ed25519", true, ["verify"]);
  const queued: { type: string; activity: unknown }[] = [];
  const queue: MessageQueue = { enqueue: async (message) => void queued.push(message as { type: string; activity: unknown }), listen: async () => {} };
  const federation = createFederation<void>({ kv: new MemoryKvStore(), queue, manuallyStartQueue: true });
  federation
    .setActorDispatcher("/users/{identifier}", (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }))
    .setKeyPairsDispatcher(() => [
      { privateKey: rsa, publicKey: rsaPublic },
      { privateKey: ed25519, publicKey: ed25519Public },
    ]);
  const ctx = federation.createContext(new URL(base), undefined);
  const peers = Array.from({ length: servers }, (_, i) => {
    const host = i === 0 ? "peer.example" : `peer${i}.example`;
    return { id: new URL(`https://${host}/users/bob`), inboxId: new URL(`https://${host}/users/bob/inbox`), endpoints: { sharedInbox: new URL(`https://${host}/inbox`) } };
  });
  const now = Temporal.Now.instant;
  Temporal.Now.instant = () => created;
  try {
    await ctx.sendActivity({ identifier: "author" }, peers, activity, { preferSharedInbox: true });
  } finally {
    Temporal.Now.instant = now;
  }
  if (servers === 1 && queued.length !== 1) throw new Error(`expected one queued delivery, got ${queued.length}`);
  return queued;
}

/**
 * The reference for sentActivity: the activity signed with the same Ed25519 key and time, then
 * compacted whole with its proof by Fedify's `toJsonLd` (the compaction sendActivity made before
 * it was patched to reuse the proof's own; patches/README.md).
 */
export async function signedAndCompacted(activity: Activity, verificationMethod: URL): Promise<Record<string, unknown>> {
  const ed25519 = await crypto.subtle.importKey("jwk", ED25519_JWK, "Ed25519", true, ["sign"]);
  const signed = await signObject(activity, ed25519, verificationMethod, { created });
  return (await signed.toJsonLd({ format: "compact" })) as Record<string, unknown>;
}
