import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { AP } from "./federation.ts";

/** The contexts Mastodon's actor documents and notes are written in (for PropertyValue, Emoji, blurhash...). */
export const MASTODON_CONTEXT = [
  "https://www.w3.org/ns/activitystreams",
  "https://w3id.org/security/v1",
  {
    toot: "http://joinmastodon.org/ns#",
    schema: "http://schema.org#",
    PropertyValue: "schema:PropertyValue",
    value: "schema:value",
    Emoji: "toot:Emoji",
    discoverable: "toot:discoverable",
  },
];

/**
 * A hostile server: it serves the JSON documents a test writes, exactly as written (what a
 * Fedify or Rookery server would never say: a `javascript:` url, a username with invisible
 * characters), and posts activities to inboxes signed by its actors' key. Every actor it
 * serves has the same key pair, under its own key id.
 */
export async function startRawServer(host: string) {
  const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
  const publicKeyPem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
  const documents = new Map<string, unknown>();
  // What was posted to it (deliveries to its inboxes), as JSON, in the order they came.
  const received: { path: string; body: any }[] = [];
  // The paths asked for (GET), in order; and those answering 503 for now (a server that is down).
  const asked: string[] = [];
  const down = new Set<string>();
  // Paths whose answer waits until the test lets it go.
  const held = new Map<string, Promise<void>>();
  const server = Bun.serve({
    hostname: host,
    port: 0,
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      if (request.method === "POST") {
        received.push({ path, body: await request.json().catch(() => null) });
        return new Response(null, { status: 202 });
      }
      asked.push(path);
      await held.get(path);
      if (down.has(path)) return new Response("down for maintenance", { status: 503 });
      const document = documents.get(path);
      return document === undefined ? new Response("not found", { status: 404 }) : new Response(JSON.stringify(document), { headers: { "content-type": AP } });
    },
  });
  const base = `http://${host}:${server.port}`;
  return {
    base,
    /** The activities posted to it so far (its inboxes accept everything). */
    received,
    /** The paths fetched from it so far (GET), in order. */
    asked,
    /** Stops serving the document at `path` (404 from then on). */
    forget(path: string) {
      documents.delete(path);
      down.delete(path);
    },
    /** Answers 503 at `path` until it is served (or forgotten); answers its URL. */
    unavailable(path: string): string {
      down.add(path);
      return `${base}${path}`;
    },
    /** Holds the answers at `path` until the function returned is called. */
    hold(path: string): () => void {
      let release!: () => void;
      held.set(path, new Promise<void>((resolve) => (release = resolve)));
      return () => {
        held.delete(path);
        release();
      };
    },
    /** Serves a document at `path`; answers its URL. */
    serve(path: string, document: Record<string, unknown>): string {
      documents.set(path, document);
      down.delete(path);
      return `${base}${path}`;
    },
    /**
     * Serves an actor at /actors/{path}: a Person with an inbox, this server's key, and
     * whatever `extra` says (over those); answers its IRI.
     */
    actor(path: string, preferredUsername: string, extra: Record<string, unknown> = {}): string {
      const id = `${base}/actors/${path}`;
      documents.set(`/actors/${path}`, {
        "@context": MASTODON_CONTEXT,
        id,
        type: "Person",
        preferredUsername,
        inbox: `${id}/inbox`,
        publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem },
        ...extra,
      });
      return id;
    },
    /** Posts an activity (written in full by the test) to an inbox, signed by `actor`'s key; answers the response. */
    async post(inbox: string, actor: string, activity: Record<string, unknown>): Promise<Response> {
      const body = JSON.stringify({ "@context": MASTODON_CONTEXT, actor, ...activity });
      const request = new Request(inbox, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
      return fetch(await signRequest(request, pair.privateKey, new URL(`${actor}#main-key`)));
    },
    /** Posts a JSON body to an inbox, signed (draft-cavage) with this server's key under any key id the test names. */
    async postSignedAs(inbox: string, keyId: string, body: Record<string, unknown>): Promise<Response> {
      const request = new Request(inbox, { method: "POST", headers: { "content-type": AP, accept: AP }, body: JSON.stringify(body) });
      return fetch(await signRequest(request, pair.privateKey, new URL(keyId)));
    },
    /** This server's key pair (the same for every actor and key document it serves). */
    privateKey: pair.privateKey,
    publicKeyPem,
    stop: () => server.stop(true),
  };
}
