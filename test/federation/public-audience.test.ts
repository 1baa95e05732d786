import { describe, expect, test } from "bun:test";
import { verifyProof } from "@fedify/fedify";
import { DataIntegrityProof, Multikey } from "@fedify/fedify/vocab";
import { getDocumentLoader } from "@fedify/vocab-runtime";
import jsonld from "@fedify/vocab-runtime/jsonld";
import { Temporal } from "@js-temporal/polyfill";
import { sentCreate } from "../support/outgoing-create.ts";
import golden from "./outgoing-create.golden.json";

// Fedify rewrites `as:Public` in the addressing of what it signs and sends to the full IRI
// (Lemmy and others match it as a plain string), and checks that the rewrite keeps the
// meaning: without canonicalizing when the context is known safe, else by comparing two
// URDNA2015 canonicalizations. Patched (patches/README.md, "public audience"): an inline
// context object that defines none of the terms the rewrite depends on counts as known safe,
// so Fedify's own contexts no longer cost four canonicalizations per Create. The check is
// public through verifyProof: a proof made over the rewritten form verifies a document that
// still says `as:Public` only when Fedify takes the rewrite to keep its meaning.

const AS = "https://www.w3.org/ns/activitystreams";
const keyId = "https://remote.example/users/carol#ed25519-key";
const keys = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
const keyDocument = await new Multikey({ id: new URL(keyId), controller: new URL("https://remote.example/users/carol"), publicKey: keys.publicKey }).toJsonLd();
const preloaded = getDocumentLoader();
const documentLoader = async (url: string) => (url === keyId ? { contextUrl: null, documentUrl: url, document: keyDocument } : preloaded(url));

// JCS (RFC 8785) of documents made of objects, arrays and strings only: keys sorted by code unit,
// strings as JSON.stringify writes them.
const jcs = (value: unknown): string =>
  typeof value === "string" ? JSON.stringify(value) : Array.isArray(value) ? `[${value.map(jcs).join(",")}]` : `{${Object.keys(value as object).sort().map((k) => `${JSON.stringify(k)}:${jcs((value as Record<string, unknown>)[k])}`).join(",")}}`;

/** A proof as Fedify's createProof makes it (eddsa-jcs-2022), over `signed`. */
async function proofOver(signed: Record<string, unknown>): Promise<DataIntegrityProof> {
  const created = Temporal.Instant.from("2026-11-26T12:00:00Z");
  const digest = async (value: unknown) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(jcs(value))));
  const config = { "@context": signed["@context"], type: "DataIntegrityProof", cryptosuite: "eddsa-jcs-2022", verificationMethod: keyId, proofPurpose: "assertionMethod", created: created.toString() };
  const data = new Uint8Array([...(await digest(config)), ...(await digest(signed))]);
  const proofValue = new Uint8Array(await crypto.subtle.sign("Ed25519", keys.privateKey, data));
  return new DataIntegrityProof({ cryptosuite: "eddsa-jcs-2022", verificationMethod: new URL(keyId), proofPurpose: "assertionMethod", created, proofValue });
}

/** A Create addressed `as:Public`, under the given context, and the same with the IRI written out. */
function create(context: unknown, object: Record<string, unknown> = {}) {
  const sent = { "@context": context, id: "https://remote.example/activities/1", type: "Create", actor: "https://remote.example/users/carol", to: "as:Public", object: { id: "https://remote.example/notes/1", type: "Note", content: "hi", to: "as:Public", ...object } };
  const rewritten = { ...sent, to: `${AS}#Public`, object: { ...sent.object, to: `${AS}#Public` } };
  return { sent, rewritten };
}

const verified = async (sent: Record<string, unknown>, signed: Record<string, unknown>) => (await verifyProof(sent, await proofOver(signed), { documentLoader, contextLoader: documentLoader })) !== null;

describe("the public audience rewritten only where it keeps its meaning", () => {
  test("Fedify's own context of a Create (an inline object after the URLs): the rewrite is taken", async () => {
    const { sent, rewritten } = create(golden.compacted["@context"]);
    expect(await verified(sent, rewritten)).toBe(true);
    expect(await verified(sent, sent)).toBe(true);
  });

  test("with a nested @context of the same kind on an embedded object (as a proof has): taken", async () => {
    const { sent, rewritten } = create(golden.compacted["@context"], { "@context": golden.compacted["@context"] });
    expect(await verified(sent, rewritten)).toBe(true);
  });

  test("an inline object that redefines `as`: the rewrite would change the meaning, so it is not taken", async () => {
    const { sent, rewritten } = create([AS, { as: "https://elsewhere.example/ns#" }]);
    expect(await verified(sent, rewritten)).toBe(false);
    expect(await verified(sent, sent)).toBe(true);
  });

  test("an inline object that redefines `to` as a plain string: not taken", async () => {
    const { sent, rewritten } = create([AS, { to: "https://www.w3.org/ns/activitystreams#to" }]);
    expect(await verified(sent, rewritten)).toBe(false);
  });

  test("a nested @context that redefines `as` on the embedded object: not taken", async () => {
    const { sent, rewritten } = create([AS], { "@context": { as: "https://elsewhere.example/ns#" } });
    expect(await verified(sent, rewritten)).toBe(false);
  });

  test("an inline object the fast path does not judge (a keyword, a scoped context) is still checked by canonicalization: harmless, so taken", async () => {
    const { sent, rewritten } = create([AS, { "@language": "en", Emoji: { "@id": "http://joinmastodon.org/ns#Emoji", "@context": { name: "as:name" } } }]);
    expect(await verified(sent, rewritten)).toBe(true);
  });

  test("sending a Create canonicalizes only for its LD signature (the options and the document), no longer for the check (eight more before)", async () => {
    await sentCreate();
    const canonize = jsonld.canonize;
    let calls = 0;
    jsonld.canonize = ((...args: Parameters<typeof canonize>) => (calls++, canonize.apply(jsonld, args))) as typeof canonize;
    try {
      await sentCreate();
    } finally {
      jsonld.canonize = canonize;
    }
    expect(calls).toBe(2);
  });
});
