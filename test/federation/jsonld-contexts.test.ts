import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { verifyJsonLd } from "@fedify/fedify";
import { getDocumentLoader } from "@fedify/vocab-runtime";
import jsonld from "@fedify/vocab-runtime/jsonld";
import { outgoingCreate, RSA_PUBLIC_JWK, sentCreate } from "../support/outgoing-create.ts";
import golden from "./outgoing-create.golden.json";
import sentGolden from "./sent-create.golden.json";

// jsonld.js keeps a processed context across calls when the loader answers it `static`: Fedify's
// loaders and ours now answer so for the preloaded contexts (fixed documents), and jsonld.js
// reuses the clone a type-scoped context is processed on (patches/README.md). What goes out
// must be what went out before, byte for byte, and a context from another server must still be
// read anew.

describe("outgoing activities with processed contexts kept", () => {
  test("a Create, its proof, its compaction with the proof and its LD signature are byte for byte what unpatched Fedify and jsonld.js wrote, the first time and every time after", async () => {
    // The golden file was written by the same code over node_modules without the patches.
    for (let round = 0; round < 3; round++) expect(JSON.stringify(await outgoingCreate(), null, 2)).toBe(JSON.stringify(golden, null, 2));
    const { signed } = await outgoingCreate();
    expect((signed as { signature: { type: string } }).signature.type).toBe("RsaSignature2017");
    expect((signed as { proof: { type: string } }).proof.type).toBe("DataIntegrityProof");
  });

  test("a Create as Context.sendActivity queues it (proof, public audience written out in full, compacted with the proof, LD signature) is byte for byte what Fedify wrote before its public-audience check was skipped for its own contexts", async () => {
    // The golden file was written by the same code before patches/README.md's "public audience
    // of Fedify's own contexts": the check then canonicalized each document twice to decide.
    setSystemTime(new Date("2026-11-26T12:00:00Z"));
    try {
      for (let round = 0; round < 3; round++) expect(JSON.stringify(await sentCreate(), null, 2)).toBe(JSON.stringify(sentGolden, null, 2));
    } finally {
      setSystemTime();
    }
    expect(JSON.stringify(sentGolden)).not.toContain('"as:Public"');
  });

  test("the LD signature verifies, and no longer does once the content changes", async () => {
    const { signed } = (await outgoingCreate()) as { signed: Record<string, any> };
    const rsaPublic = await crypto.subtle.importKey("jwk", RSA_PUBLIC_JWK, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["verify"]);
    const actorDocument = { "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"], id: "https://rookery.example/users/author", type: "Person", publicKey: { id: "https://rookery.example/users/author#main-key", owner: "https://rookery.example/users/author", publicKeyPem: await pemOf(rsaPublic) } };
    const base = getDocumentLoader();
    const loader = async (url: string) => (url.startsWith("https://rookery.example/users/author") ? { contextUrl: null, documentUrl: url, document: actorDocument } : base(url));
    expect(await verifyJsonLd(signed, { documentLoader: loader, contextLoader: loader })).toBe(true);
    const changed = structuredClone(signed);
    changed.object.content = "<p>changed on the way</p>";
    expect(await verifyJsonLd(changed, { documentLoader: loader, contextLoader: loader })).toBe(false);
  });
});

describe("a context from another server is not kept", () => {
  let server: ReturnType<typeof Bun.serve>;
  let term = "http://example.org/ns#first";
  beforeAll(() => {
    server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ "@context": { name: term } }, { headers: { "content-type": "application/ld+json" } }) });
  });
  afterAll(() => server.stop(true));

  test("the same context URL read twice, changed in between: the second expansion reads the change", async () => {
    const url = `http://127.0.0.1:${server.port}/context.jsonld`;
    const loader = getDocumentLoader({ allowPrivateAddress: true });
    const expand = () => jsonld.expand({ "@context": url, "@id": "http://example.org/thing", name: "x" }, { documentLoader: loader });
    expect(await expand()).toEqual([{ "@id": "http://example.org/thing", "http://example.org/ns#first": [{ "@value": "x" }] }]);
    term = "http://example.org/ns#second";
    expect(await expand()).toEqual([{ "@id": "http://example.org/thing", "http://example.org/ns#second": [{ "@value": "x" }] }]);
  });
});

async function pemOf(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey("spki", key)).toString("base64");
  return `-----BEGIN PUBLIC KEY-----\n${der.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
}
