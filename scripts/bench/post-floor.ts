/**
 * The floors of a post with one remote follower: what no code of Rookery's can remove while
 * Fedify signs as it does, each step alone on this process, CPU per operation (all threads of
 * this process, so WebCrypto's worker threads count).
 *
 * Per post Fedify makes one Object Integrity Proof (eddsa-jcs-2022: the JCS of the compact
 * activity, two SHA-256, one Ed25519 signature) and one Linked Data signature (RsaSignature2017:
 * URDNA2015 canonicalization of the signature options and of the activity with its proof, two
 * SHA-256, one RSA signature); per inbox it signs the request (draft-cavage or RFC 9421: a
 * SHA-256 digest of the body, one RSA signature) and POSTs it. The lines below time each of
 * those, then the JSON-LD work above the floor (the compactions and the public-audience check's
 * canonicalizations) for comparison.
 *
 *   bun scripts/bench/post-floor.ts [rounds=200]
 *   bun scripts/bench/post-floor.ts --profile <file.cpuprofile>
 *
 * With --profile it instead sorts the samples of a server's CPU profile by part of a post
 * (BENCH_PROFILE=dir BENCH_PROFILE_JSON=1 bun scripts/bench/posting.ts 3 writes one per server;
 * the author's is the first). Each sample is put in the first part whose rule matches a frame of
 * its stack; an async function's stack starts at its last await, so a canonicalization resumed
 * after an await is counted as canonicalization, not as the step that started it.
 */
import { spawn } from "bun";
import jsonld from "@fedify/vocab-runtime/jsonld";
import { getDocumentLoader } from "@fedify/vocab-runtime";
import { createProof, exportJwk, signJsonLd, signObject, signRequest } from "@fedify/fedify";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { createOf, outgoingCreate } from "../../test/support/outgoing-create.ts";
import { fmt } from "./lib.ts";
import { printParts } from "./post-parts.ts";

if (process.argv[2] === "--profile") {
  printParts(process.argv[3]!);
  process.exit(0);
}
const rounds = Number(process.argv[2] ?? 200);
const results: Record<string, number> = {};

async function time(label: string, step: (i: number) => Promise<unknown>, n = rounds) {
  for (let i = 0; i < Math.min(20, n); i++) await step(i);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < n; i++) await step(i);
  const used = process.cpuUsage(cpu);
  const perOp = (used.user + used.system) / n;
  results[label] = perOp;
  console.log(`${label.padEnd(72)} ${fmt(((performance.now() - start) * 1000) / n).padStart(6)} µs wall ${fmt(perOp).padStart(6)} µs CPU`);
}

const rsa = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
const ed = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
const { compacted, proofed, signed } = (await outgoingCreate()) as { compacted: Record<string, unknown>; proofed: Record<string, unknown>; signed: Record<string, unknown> };
const body = new TextEncoder().encode(JSON.stringify(signed));
// What an LD signature hashes: the canonical N-Quads of both documents, 64 hex digits each.
const signingString = new TextEncoder().encode(`(request-target): post /inbox\nhost: peer.example\ndate: ${new Date().toUTCString()}\ndigest: SHA-256=${"x".repeat(44)}\ncontent-type: application/activity+json`);
const loader = getDocumentLoader();
const canonize = (doc: unknown) => jsonld.canonize(doc, { format: "application/n-quads", documentLoader: loader });
const expanded = await jsonld.expand(compacted, { documentLoader: loader });
const options = { "@context": "https://w3id.org/identity/v1", creator: "https://rookery.example/users/author#main-key", created: new Date().toISOString() };

console.log(`${rounds} rounds each; a Create of ${body.length} bytes as sent (test/support/outgoing-create.ts)\n`);
console.log("Floors (per signature, per canonicalization, per request):");
await time("RSA-2048 PKCS#1 v1.5 SHA-256 signature (WebCrypto)", () => crypto.subtle.sign("RSASSA-PKCS1-v1_5", rsa.privateKey, signingString));
await time("Ed25519 signature of 64 bytes (WebCrypto)", () => crypto.subtle.sign("Ed25519", ed.privateKey, new Uint8Array(64)));
await time("SHA-256 of the body (WebCrypto)", () => crypto.subtle.digest("SHA-256", body));
await time("URDNA2015 canonicalization of the Create with its proof (jsonld.js)", () => canonize(proofed));
await time("URDNA2015 canonicalization of the signature options (jsonld.js)", () => canonize(options));

// The receiver is another process, so that only the sender's CPU is counted.
const receiver = spawn([process.execPath, "-e", `const s = Bun.serve({ hostname: "127.0.0.1", port: 0, async fetch(r) { await r.arrayBuffer(); return new Response(null, { status: 202 }); } }); console.log(s.port);`], { stdout: "pipe", stderr: "inherit" });
const firstLine = async () => {
  const reader = receiver.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.trim();
};
const inbox = `http://127.0.0.1:${await firstLine()}/inbox`;
try {
  await time("HTTP POST of the Create over loopback (Bun fetch, kept connection; sender's CPU)", () => fetch(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body }).then((r) => r.arrayBuffer()));
} finally {
  receiver.kill();
}

// Fedify's normalization of outgoing JSON-LD is internal: it is taken from the dist chunk that
// defines it (its name carries a hash), to time it as sendActivity calls it.
const fedifyDist = join(dirname(Bun.resolveSync("@fedify/fedify", import.meta.dir)));
const proofChunk = readdirSync(fedifyDist).find((f) => /^proof-.*\.js$/.test(f))!;
const { o: normalizeOutgoing, compactKeptSignedObject } = (await import(join(fedifyDist, proofChunk))) as {
  o: (json: unknown, loader?: unknown) => Promise<unknown>;
  // Only in the patched dist (patches/README.md, "compacted once").
  compactKeptSignedObject?: (signed: unknown, loader?: unknown) => Promise<unknown>;
};
const keyId = new URL("https://rookery.example/users/author#main-key");
const edKeyId = new URL("https://rookery.example/users/author#ed25519-key");
const withProof = await signObject(createOf(), ed.privateKey, edKeyId, { contextLoader: loader });

console.log("\nFedify's steps for one Create, in the order Context.sendActivity runs them (each alone):");
await time("signObject: the Object Integrity Proof, all of it", () => signObject(createOf(), ed.privateKey, edKeyId, { contextLoader: loader }), Math.ceil(rounds / 2));
await time("  its compaction of the activity (toJsonLd, compact)", () => createOf().toJsonLd({ format: "compact", contextLoader: loader }), Math.ceil(rounds / 2));
await time("  its public-audience and attachment check (normalizeOutgoingActivityJsonLd)", () => normalizeOutgoing(compacted, loader), Math.ceil(rounds / 2));
await time("  createProof alone (compaction, check, JCS, SHA-256, Ed25519)", () => createProof(createOf(), ed.privateKey, edKeyId, { contextLoader: loader }), Math.ceil(rounds / 2));
await time("getProofs of the signed activity", async () => {
  for await (const _ of withProof.getProofs({ contextLoader: loader })) break;
}, Math.ceil(rounds / 2));
await time("the activity compacted again, with its proof", () => withProof.toJsonLd({ format: "compact", contextLoader: loader }), Math.ceil(rounds / 2));
if (compactKeptSignedObject) await time("  what sendActivity does instead: the kept compaction, the proof put in", () => compactKeptSignedObject(withProof, loader), Math.ceil(rounds / 2));
await time("the check again, on the document with the proof", () => normalizeOutgoing(proofed, loader), Math.ceil(rounds / 2));
await time("signJsonLd: the LD signature (two canonicalizations, two SHA-256, RSA)", () => signJsonLd(proofed, rsa.privateKey, keyId, { contextLoader: loader }), Math.ceil(rounds / 2));
await time("both keys exported as JWK for the queue", () => Promise.all([exportJwk(rsa.privateKey), exportJwk(ed.privateKey)]), Math.ceil(rounds / 2));
await time("per inbox: the request signed (draft-cavage: digest, RSA)", () => signRequest(new Request("https://peer.example/inbox", { method: "POST", headers: { "content-type": "application/activity+json" }, body }), rsa.privateKey, keyId), Math.ceil(rounds / 2));
await time("per inbox: the request signed (RFC 9421: digest, RSA)", () => signRequest(new Request("https://peer.example/inbox", { method: "POST", headers: { "content-type": "application/activity+json" }, body }), rsa.privateKey, keyId, { spec: "rfc9421" }), Math.ceil(rounds / 2));

console.log("\nJSON-LD above the floor, for comparison:");
await time("two canonicalizations of the Create without its proof (what the check does)", () => Promise.all([canonize(compacted), canonize(compacted)]), Math.ceil(rounds / 2));
await time("jsonld.compact of the Create (expanded) with its own context", async () => {
  await jsonld.compact(expanded, compacted["@context"] as never, { documentLoader: loader });
}, Math.ceil(rounds / 2));

const floorPerPost = results["Ed25519 signature of 64 bytes (WebCrypto)"]! + results["RSA-2048 PKCS#1 v1.5 SHA-256 signature (WebCrypto)"]! + results["URDNA2015 canonicalization of the Create with its proof (jsonld.js)"]! + results["URDNA2015 canonicalization of the signature options (jsonld.js)"]!;
const floorPerInbox = results["RSA-2048 PKCS#1 v1.5 SHA-256 signature (WebCrypto)"]! + results["SHA-256 of the body (WebCrypto)"]! + results["HTTP POST of the Create over loopback (Bun fetch, kept connection; sender's CPU)"]!;
console.log(`\nFloor of a post (one Ed25519, one RSA, two canonicalizations):   ${fmt(floorPerPost).padStart(6)} µs CPU`);
console.log(`Floor of each inbox (digest, one RSA, one POST):                  ${fmt(floorPerInbox).padStart(6)} µs CPU`);
console.log(`A post with one remote follower, at least:                        ${fmt(floorPerPost + floorPerInbox).padStart(6)} µs CPU = at most ${fmt(2e6 / (floorPerPost + floorPerInbox))} posts/s on 2 cores, ${fmt(1e6 / (floorPerPost + floorPerInbox))} on one`);
