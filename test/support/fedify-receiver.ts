import { createFederation, generateCryptoKeyPair, MemoryKvStore } from "@fedify/fedify";
import { Accept, Block, Create, Delete, Endpoints, Follow, Note, Person, Reject, Undo, type Activity } from "@fedify/fedify/vocab";

/**
 * A remote server that is not Rookery: a bare Fedify federation in the test process with one
 * actor, `carol`, that verifies signatures as any Fedify server does and records what its
 * inboxes receive. Stands in for "another server" where the test needs to see deliveries.
 */
export async function startReceiver(host = "127.0.0.5") {
  const received: Activity[] = [];
  const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  let handler: ((request: Request) => Promise<Response>) | null = null;
  // Every POST to an inbox as it arrived (before Fedify's own dedup by activity id), and a
  // switch that makes the inboxes answer 503, as a server that is down.
  const posts: { id: string; type: string; answered: number; inbox: string }[] = [];
  const state = { down: false };
  const server = Bun.serve({
    hostname: host,
    port: 0,
    fetch: async (request) => {
      if (request.method !== "POST") return handler!(request);
      const body = await request.clone().json().catch(() => ({}));
      const answered = state.down ? 503 : (await handler!(request)).status;
      posts.push({ id: String(body.id), type: String(body.type), answered, inbox: new URL(request.url).pathname });
      return new Response(null, { status: answered });
    },
  });
  const base = `http://${host}:${server.port}`;
  const federation = createFederation<void>({ kv: new MemoryKvStore(), origin: base, allowPrivateAddress: true });
  federation
    .setActorDispatcher("/actors/{identifier}", async (ctx, identifier) =>
      identifier === "carol"
        ? new Person({
            id: ctx.getActorUri(identifier),
            preferredUsername: identifier,
            inbox: ctx.getInboxUri(identifier),
            endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
            publicKey: (await ctx.getActorKeyPairs(identifier))[0]!.cryptographicKey,
          })
        : null,
    )
    .setKeyPairsDispatcher((_ctx, identifier) => (identifier === "carol" ? [pair] : []));
  // Notes it serves at /notes/{id}, as the test sets them (for fetches: search with resolve).
  const notes = new Map<string, (id: URL) => Note>();
  federation.setObjectDispatcher(Note, "/notes/{id}", (ctx, { id }) => notes.get(id)?.(ctx.getObjectUri(Note, { id })) ?? null);
  const record = async (_ctx: unknown, activity: Activity) => {
    received.push(activity);
  };
  federation.setInboxListeners("/actors/{identifier}/inbox", "/inbox").on(Accept, record).on(Reject, record).on(Block, record).on(Create, record).on(Delete, record).on(Undo, record);
  handler = (request) => federation.fetch(request, { contextData: undefined });
  const ctx = () => federation.createContext(new URL(base), undefined);
  return {
    base,
    actor: `${base}/actors/carol`,
    received,
    posts,
    /** Serves a Note at /notes/{id}; `make` gets its IRI. Answers with that IRI. */
    serveNote(id: string, make: (iri: URL) => Note): string {
      notes.set(id, make);
      return `${base}/notes/${id}`;
    },
    /** While true, the inboxes answer 503 Service Unavailable. */
    set down(value: boolean) {
      state.down = value;
    },
    /** carol's own key: a test signs requests with it by hand (Fedify names the first key #main-key). */
    keyId: new URL(`${base}/actors/carol#main-key`),
    privateKey: pair.privateKey,
    /** carol sends an activity to a remote actor's inbox (signed by carol's key). */
    async send(recipient: { id: string; inbox: string }, activity: Activity) {
      await ctx().sendActivity({ identifier: "carol" }, { id: new URL(recipient.id), inboxId: new URL(recipient.inbox) }, activity);
    },
    /** carol follows a remote actor (signed by carol's key). */
    async follow(actorUri: string, inbox: string) {
      const c = ctx();
      await c.sendActivity({ identifier: "carol" }, { id: new URL(actorUri), inboxId: new URL(inbox) }, new Follow({ id: new URL(`${base}/follows/${Date.now()}`), actor: c.getActorUri("carol"), object: new URL(actorUri) }));
    },
    stop: () => server.stop(true),
  };
}
