import { createFederation, generateCryptoKeyPair, MemoryKvStore, type Context, type RequestContext } from "@fedify/fedify";
import { Accept, Announce, Block, Create, Delete, Endpoints, Flag, Follow, Like, Note, Person, PUBLIC_COLLECTION, Reject, Undo, Update, type Activity } from "@fedify/fedify/vocab";

/** What carol's actor document says about her beyond her identity and endpoints (a test changes it). */
export type Profile = Omit<NonNullable<ConstructorParameters<typeof Person>[0]>, "id" | "preferredUsername" | "inbox" | "endpoints" | "publicKey">;

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
  const state = { down: false, inboxStatus: null as number | null, authorizedFetch: false };
  // The keys that signed GETs of carol and her notes, while authorized fetch is on.
  const signers: string[] = [];
  // Authorized fetch, as GoToSocial always does and Mastodon with AUTHORIZED_FETCH: carol's
  // actor document and her notes answer 401 to a GET without a valid signature.
  const authorized = async (ctx: RequestContext<void>) => {
    if (!state.authorizedFetch) return true;
    const key = await ctx.getSignedKey();
    if (key?.id) signers.push(key.id.href);
    return key !== null;
  };
  // carol's actor document: how often it was asked for, and switches that hold those requests
  // until released or answer them with an error status.
  const actorDocument = { gets: 0, status: null as number | null, gate: null as Promise<void> | null };
  let profile: Profile = {};
  const server = Bun.serve({
    hostname: host,
    port: 0,
    fetch: async (request) => {
      if (request.method !== "POST" && new URL(request.url).pathname === "/actors/carol") {
        actorDocument.gets++;
        await actorDocument.gate;
        if (actorDocument.status !== null) return new Response(null, { status: actorDocument.status });
      }
      if (request.method !== "POST") return handler!(request);
      const body = await request.clone().json().catch(() => ({}));
      const answered = state.down ? 503 : (state.inboxStatus ?? (await handler!(request)).status);
      posts.push({ id: String(body.id), type: String(body.type), answered, inbox: new URL(request.url).pathname });
      return new Response(null, { status: answered });
    },
  });
  const base = `http://${host}:${server.port}`;
  const federation = createFederation<void>({ kv: new MemoryKvStore(), origin: base, allowPrivateAddress: true });
  const carol = async (ctx: Context<void>) =>
    new Person({
      ...profile,
      id: ctx.getActorUri("carol"),
      preferredUsername: "carol",
      inbox: ctx.getInboxUri("carol"),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      publicKey: (await ctx.getActorKeyPairs("carol"))[0]!.cryptographicKey,
    });
  federation
    .setActorDispatcher("/actors/{identifier}", async (ctx, identifier) => (identifier === "carol" ? carol(ctx) : null))
    .setKeyPairsDispatcher((_ctx, identifier) => (identifier === "carol" ? [pair] : []))
    .authorize(authorized);
  // Notes it serves at /notes/{id}, as the test sets them (for fetches: search with resolve).
  const notes = new Map<string, (id: URL) => Note>();
  federation.setObjectDispatcher(Note, "/notes/{id}", (ctx, { id }) => notes.get(id)?.(ctx.getObjectUri(Note, { id })) ?? null).authorize(authorized);
  const record = async (_ctx: unknown, activity: Activity) => {
    received.push(activity);
  };
  federation.setInboxListeners("/actors/{identifier}/inbox", "/inbox").on(Accept, record).on(Reject, record).on(Block, record).on(Create, record).on(Delete, record).on(Undo, record).on(Announce, record).on(Like, record).on(Flag, record);
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
    /** Set: the inboxes answer with that status (410: gone for good); null: as Fedify does. */
    set inboxStatus(status: number | null) {
      state.inboxStatus = status;
    },
    /** While true, carol's actor document and notes answer 401 to unsigned GETs. */
    set authorizedFetch(value: boolean) {
      state.authorizedFetch = value;
    },
    /** The key ids that signed GETs of carol or her notes (while authorized fetch is on). */
    signers,
    /** While true, the inboxes answer 503 Service Unavailable. */
    set down(value: boolean) {
      state.down = value;
    },
    /** carol's profile as her actor document shows it from now on. */
    set profile(value: Profile) {
      profile = value;
    },
    /** Requests for carol's actor document so far. */
    get actorGets() {
      return actorDocument.gets;
    },
    /** Set: carol's actor document answers with that status (a server in trouble); null: normally. */
    set actorStatus(status: number | null) {
      actorDocument.status = status;
    },
    /** Requests for carol's actor document wait from now until the returned function is called. */
    holdActor(): () => void {
      let release!: () => void;
      actorDocument.gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        actorDocument.gate = null;
        release();
      };
    },
    /** carol's own key: a test signs requests with it by hand (Fedify names the first key #main-key). */
    keyId: new URL(`${base}/actors/carol#main-key`),
    privateKey: pair.privateKey,
    /** carol sends an activity to a remote actor's inbox (signed by carol's key). */
    async send(recipient: { id: string; inbox: string }, activity: Activity) {
      await ctx().sendActivity({ identifier: "carol" }, { id: new URL(recipient.id), inboxId: new URL(recipient.inbox) }, activity);
    },
    /** carol follows a remote actor (signed by carol's key); answers the Follow's IRI. */
    async follow(actorUri: string, inbox: string): Promise<string> {
      const c = ctx();
      const id = new URL(`${base}/follows/${crypto.randomUUID()}`);
      await c.sendActivity({ identifier: "carol" }, { id: new URL(actorUri), inboxId: new URL(inbox) }, new Follow({ id, actor: c.getActorUri("carol"), object: new URL(actorUri) }));
      return id.href;
    },
    /** carol tells a remote inbox that her profile changed: Update of her actor, as it is now. */
    async updateProfile(actorUri: string, inbox: string) {
      const c = ctx();
      const update = new Update({ id: new URL(`${base}/updates/${crypto.randomUUID()}`), actor: c.getActorUri("carol"), tos: [PUBLIC_COLLECTION], object: await carol(c) });
      await c.sendActivity({ identifier: "carol" }, { id: new URL(actorUri), inboxId: new URL(inbox) }, update);
    },
    stop: () => server.stop(true),
  };
}
