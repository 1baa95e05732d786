import { generateCryptoKeyPair, signRequest } from "@fedify/fedify";
import { AP } from "./federation.ts";

const AS = "https://www.w3.org/ns/activitystreams";
const PUBLIC = `${AS}#Public`;

export type RelayKind = "mastodon" | "litepub";

/** What a relay does with a Follow: accept it, refuse it, or leave it unanswered. */
export type RelayAnswer = "accept" | "reject" | "none";

/**
 * A relay on a loopback address, as relays in use behave (activityrelay, pub-relay,
 * Pleroma's): an actor (`/actor`, an Application with a key) and an inbox (`/inbox`) taking
 * Follows from servers' instance actors (answered as `answer` says) and their Undo. What a
 * subscriber sends it (Create, Update, Delete) goes to every other subscriber: a Mastodon
 * relay forwards the activity as it came (its embedded signatures intact), signing the request
 * with its own key; a LitePub relay Announces the object, which subscribers fetch from its
 * origin, and follows each subscriber back. A test can also make it forward or announce what
 * it likes, and take it down (503) or away (stopped).
 */
export async function startRelay(host: string, kind: RelayKind) {
  const pair = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
  const publicKeyPem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join("\n")}\n-----END PUBLIC KEY-----\n`;
  /** Every activity posted to the relay's inbox, in order. */
  const received: Record<string, any>[] = [];
  /** Subscribers (the actor that followed) and the inbox they are delivered to. */
  const subscribers = new Map<string, string>();
  /** What subscribers answered to the relay's own deliveries (status per activity id). */
  const answers: { id: string; status: number }[] = [];
  const state = { answer: "accept" as RelayAnswer, down: false };
  let base = "";
  const actor = () => `${base}/actor`;

  const post = async (inbox: string, body: Record<string, unknown>): Promise<Response> => {
    const request = new Request(inbox, { method: "POST", headers: { "content-type": AP, accept: AP }, body: JSON.stringify(body) });
    const response = await fetch(await signRequest(request, pair.privateKey, new URL(`${actor()}#main-key`)));
    answers.push({ id: String(body.id), status: response.status });
    return response;
  };
  /** An activity of the relay's own, with its id. */
  const own = (type: string, extra: Record<string, unknown>) => ({ "@context": AS, id: `${base}/activities/${crypto.randomUUID()}`, type, actor: actor(), ...extra });

  const inboxOf = async (actorUri: string): Promise<string> => {
    const document = (await (await fetch(actorUri, { headers: { accept: AP } })).json()) as { inbox: string; endpoints?: { sharedInbox?: string } };
    return document.endpoints?.sharedInbox ?? document.inbox;
  };

  const relay = {
    base: "",
    actor: "",
    inbox: "",
    kind,
    received,
    subscribers,
    answers,
    /** How Follows are answered from now on. */
    set answer(value: RelayAnswer) {
      state.answer = value;
    },
    /** While true, the inbox and the actor answer 503, as a relay that is down. */
    set down(value: boolean) {
      state.down = value;
    },
    /** What the relay's inbox received of a type. */
    of(type: string): Record<string, any>[] {
      return received.filter((a) => a.type === type);
    },
    /** Posts an activity (as written) to an inbox, signed by the relay's key. */
    post,
    /** Forwards a body exactly as given to every subscriber but `except`, as a Mastodon relay does; answers their statuses. */
    async forward(body: Record<string, unknown>, except?: string): Promise<number[]> {
      const targets = [...subscribers].filter(([who]) => who !== except).map(([, inbox]) => inbox);
      return Promise.all(targets.map(async (inbox) => (await post(inbox, body)).status));
    },
    /** Announces an object (its IRI) to every subscriber but `except`, as a LitePub relay does. */
    async announce(objectId: string, except?: string): Promise<number[]> {
      const announce = own("Announce", { object: objectId, to: [`${actor()}/followers`], cc: [PUBLIC] });
      const targets = [...subscribers].filter(([who]) => who !== except).map(([, inbox]) => inbox);
      return Promise.all(targets.map(async (inbox) => (await post(inbox, announce)).status));
    },
    stop: () => server.stop(true),
  };

  const server = Bun.serve({
    hostname: host,
    port: 0,
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      if (state.down) return new Response("down", { status: 503 });
      if (request.method === "GET" && path === "/actor") {
        return Response.json(
          {
            "@context": [AS, "https://w3id.org/security/v1"],
            id: actor(),
            type: "Application",
            preferredUsername: "relay",
            inbox: `${base}/inbox`,
            followers: `${actor()}/followers`,
            publicKey: { id: `${actor()}#main-key`, owner: actor(), publicKeyPem },
          },
          { headers: { "content-type": AP } },
        );
      }
      if (request.method !== "POST" || path !== "/inbox") return new Response("not found", { status: 404 });
      const body = (await request.json()) as Record<string, any>;
      received.push(body);
      // Answered after the 202, as relays work their inbox off a queue.
      queueMicrotask(() => void handle(body).catch(() => {}));
      return new Response(null, { status: 202 });
    },
  });

  const handle = async (body: Record<string, any>) => {
    const sender = typeof body.actor === "string" ? body.actor : body.actor?.id;
    if (body.type === "Follow") {
      const inbox = await inboxOf(sender);
      if (state.answer === "none") return;
      await post(inbox, own(state.answer === "accept" ? "Accept" : "Reject", { object: body }));
      if (state.answer !== "accept") return;
      subscribers.set(sender, inbox);
      // A LitePub relay follows its subscriber back, to hear from it.
      if (kind === "litepub") await post(inbox, own("Follow", { object: sender }));
      return;
    }
    if (body.type === "Undo" && body.object?.type === "Follow") {
      subscribers.delete(sender);
      return;
    }
    // A subscriber's server sends as its accounts: it is known by its origin.
    const from = [...subscribers.keys()].find((who) => new URL(who).origin === new URL(sender).origin);
    if (from === undefined || !["Create", "Update", "Delete"].includes(body.type)) return;
    if (kind === "mastodon") await relay.forward(body, from);
    else if (body.type === "Create") await relay.announce(typeof body.object === "string" ? body.object : body.object.id, from);
  };

  base = `http://${host}:${server.port}`;
  relay.base = base;
  relay.actor = actor();
  relay.inbox = `${base}/inbox`;
  return relay;
}

export type Relay = Awaited<ReturnType<typeof startRelay>>;
