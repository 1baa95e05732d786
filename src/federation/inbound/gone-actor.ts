import type { RequestContext, UnverifiedActivityReason } from "@fedify/fedify";
import { Delete, type Activity } from "@fedify/fedify/vocab";
import type { AccountRow } from "../../db/schema.ts";
import { log } from "../../log.ts";
import type { OutgoingHttp } from "../../net/outgoing.ts";

export interface GoneActorDeps {
  outgoing: OutgoingHttp;
  /** The stored remote account of an actor IRI. */
  accountByUri(uri: string): AccountRow | undefined | Promise<AccountRow | undefined>;
  /** Removes an account that deleted itself (statuses, follows, notifications). */
  remove(accountId: number): Promise<void>;
}

/**
 * An actor deleting itself signs with a key that is gone by the time its Delete arrives, so
 * Fedify cannot verify it. Such a Delete is believed only when (a) the key it names is one the
 * stored account's actor document named, and (b) the actor's own IRI, fetched afresh from its
 * origin, answers 410 Gone: the origin itself says the account is gone (Mastodon acts on the
 * actor's own 410). The keyId alone proves nothing: the sender picks it, and
 * `<actor>/no-such-key` answers 404 on almost every server. Any other unverifiable self-Delete
 * is answered 202 and changes nothing (the sender has nothing to retry); every other
 * unverifiable activity keeps Fedify's 401.
 */
export function goneActorHandler(deps: GoneActorDeps) {
  return async (_ctx: RequestContext<void>, activity: Activity, reason: UnverifiedActivityReason): Promise<Response | void> => {
    if (!(activity instanceof Delete) || activity.actorId === null || activity.objectId?.href !== activity.actorId.href) return;
    const accepted = new Response(null, { status: 202 });
    if (reason.type !== "keyFetchError") return accepted;
    const actor = activity.actorId.href;
    const account = await deps.accountByUri(actor);
    if (!account || !(JSON.parse(account.keyIds) as string[]).includes(reason.keyId.href)) return accepted;
    if ((await originStatus(deps.outgoing, actor)) === 410) {
      log("info", "federation: an account deleted on its server is removed", { actor });
      await deps.remove(account.id);
    }
    return accepted;
  };
}

/** The status the actor's own IRI answers now (never from a cache); 0 when it cannot be asked. */
async function originStatus(outgoing: OutgoingHttp, actor: string): Promise<number> {
  try {
    const response = await outgoing.fetch(actor, { headers: { accept: "application/activity+json" }, redirect: "manual" });
    await response.body?.cancel().catch(() => {});
    return response.status;
  } catch {
    return 0;
  }
}
