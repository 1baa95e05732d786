import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { AP } from "./federation.ts";
import { MASTODON_CONTEXT } from "./raw-server.ts";

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

/** Mastodon's context, with the term of its featured collection. */
const CONTEXT = [...MASTODON_CONTEXT, { featured: { "@id": "toot:featured", "@type": "@id" } }];

/** A document the server answers a GET with, made when asked (null: 404); it may take its time. */
type Route = (url: URL) => Record<string, unknown> | null | Promise<Record<string, unknown> | null>;

/**
 * Another server as the thread tests need one: Mastodon-shaped JSON (notes whose `replies`
 * is a Collection with its first page embedded, pages linked by `next`, `context`
 * collections, outboxes of Creates, featured collections), served from routes a test writes,
 * some made on the fly (a page of 10,000 replies, a chain of pages without end). It counts
 * every GET by path and keeps what is posted to its inboxes; its actors share one key.
 */
export async function startThreadServer(host: string) {
  const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
  const publicKeyPem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
  const exact = new Map<string, Route>();
  const prefixes: [string, Route][] = [];
  const gets: string[] = [];
  const posted: Record<string, any>[] = [];
  const unsigned: string[] = [];
  const server = Bun.serve({
    hostname: host,
    port: 0,
    fetch: async (request) => {
      const url = new URL(request.url);
      if (request.method === "POST") {
        posted.push(await request.json().catch(() => ({})));
        return new Response(null, { status: 202 });
      }
      gets.push(url.pathname + url.search);
      if (!request.headers.has("signature") && !request.headers.has("signature-input")) unsigned.push(url.pathname + url.search);
      const route = exact.get(url.pathname + url.search) ?? exact.get(url.pathname) ?? prefixes.find(([p]) => url.pathname.startsWith(p))?.[1];
      const document = (await route?.(url)) ?? null;
      if (document === null) return new Response("not found", { status: 404 });
      return new Response(JSON.stringify({ "@context": CONTEXT, ...document }), { headers: { "content-type": AP } });
    },
  });
  const base = `http://${host}:${server.port}`;

  const self = {
    base,
    /** Paths (with their query) of every GET so far, in order. */
    gets,
    /** GETs that came without an HTTP signature. */
    unsigned,
    /** Bodies posted to any inbox. */
    posted,
    /** GETs so far whose path starts with `prefix`. */
    count: (prefix: string) => gets.filter((g) => g.startsWith(prefix)).length,
    /** Answers GETs of `path` (with its query, if given one) with what `route` makes. */
    route(path: string, route: Route | Record<string, unknown>) {
      exact.set(path, typeof route === "function" ? route : () => route);
      return `${base}${path}`;
    },
    /** The document served at `path` (to embed it elsewhere, as Mastodon embeds its own replies in a page). */
    documentAt(path: string): Record<string, unknown> {
      return exact.get(path)!(new URL(`${base}${path}`)) as Record<string, unknown>;
    },
    /** Answers GETs of every path under `prefix` (those no exact route takes). */
    routePrefix(prefix: string, route: Route) {
      prefixes.push([prefix, route]);
    },
    /** An actor at /actors/{name} with an inbox, this server's key and `extra`; answers its IRI. */
    actor(name: string, extra: Record<string, unknown> = {}): string {
      const id = `${base}/actors/${name}`;
      self.route(`/actors/${name}`, { id, type: "Person", preferredUsername: name, inbox: `${id}/inbox`, followers: `${id}/followers`, publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem }, ...extra });
      return id;
    },
    /** A public Note of `author` as Mastodon writes one (its `replies` and `context` as given). */
    note(id: string, author: string, content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
      return { id, type: "Note", attributedTo: author, content: `<p>${content}</p>`, to: [PUBLIC], cc: [`${author}/followers`], published: "2025-01-01T00:00:00Z", ...extra };
    },
    /**
     * Serves a Note at `path` whose replies are `replies` (IRIs or embedded Notes), `perPage` a
     * page: the first page embedded in the Note's `replies` (as Mastodon embeds it), the others
     * at `path/replies?page=N`, each linked to the next. Answers the Note's IRI.
     */
    thread(path: string, author: string, content: string, replies: (string | Record<string, unknown>)[], options: { perPage?: number; inReplyTo?: string; extra?: Record<string, unknown> } = {}): string {
      const id = `${base}${path}`;
      const perPage = options.perPage ?? 10;
      const pages = Math.max(1, Math.ceil(replies.length / perPage));
      const pageUrl = (n: number) => `${id}/replies?page=${n}`;
      const page = (n: number) => ({
        id: pageUrl(n),
        type: "CollectionPage",
        partOf: `${id}/replies`,
        items: replies.slice(n * perPage, (n + 1) * perPage),
        ...(n + 1 < pages ? { next: pageUrl(n + 1) } : {}),
      });
      for (let n = 1; n < pages; n++) self.route(`${path}/replies?page=${n}`, page(n));
      self.route(`${path}/replies`, { id: `${id}/replies`, type: "Collection", first: page(0) });
      self.route(path, self.note(id, author, content, { inReplyTo: options.inReplyTo ?? null, replies: { id: `${id}/replies`, type: "Collection", first: page(0) }, ...options.extra }));
      return id;
    },
    /** Posts an activity to an inbox, signed by `actor`'s key (draft-cavage); answers the response. */
    async post(inbox: string, actor: string, activity: Record<string, unknown>): Promise<Response> {
      const body = JSON.stringify({ "@context": CONTEXT, actor, ...activity });
      const request = new Request(inbox, { method: "POST", headers: { "content-type": AP, accept: AP }, body });
      return fetch(await signRequest(request, pair.privateKey, new URL(`${actor}#main-key`)));
    },
    stop: () => server.stop(true),
  };
  return self;
}
