import type { Context } from "@fedify/fedify";
import { Application, isActor, Service, type Activity, type Actor } from "@fedify/fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab-runtime";
import type { ActorSource, RemoteActorInput } from "../../services/remote/inputs.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import { aliasesOf } from "./aliases.ts";
import { customEmojisOf } from "./emojis.ts";
import { readProfile } from "./profile.ts";

/**
 * A remote actor document as the services take it (RemoteAccounts decides what is stored);
 * null for what is no actor. Its profile is read through `loader` when asked for: images and
 * emojis it only links to are fetched then. `document`: the JSON it was read from, when at
 * hand, for its aliases as Mastodon reads them (aliases.ts).
 */
export function actorInput(actor: Actor | unknown, loader: DocumentLoader, document?: unknown): RemoteActorInput | null {
  if (!isActor(actor) || actor.id === null) return null;
  return {
    uri: actor.id.href,
    inboxUrl: actor.inboxId?.href ?? null,
    sharedInboxUrl: actor.endpoints?.sharedInbox?.href ?? null,
    followersUrl: actor.followersId?.href ?? null,
    featuredUrl: actor.featuredId?.href ?? null,
    outboxUrl: actor.outboxId?.href ?? null,
    aliases: aliasesOf(actor, document),
    // Mastodon's movedTo: where it says it went (a Move to it is still checked on its own).
    movedTo: httpUrlOrNull(actor.successorId?.href),
    username: actor.preferredUsername?.toString() ?? "",
    displayName: actor.name?.toString() ?? "",
    url: actor.url instanceof URL ? actor.url.href : (actor.url?.href?.href ?? null),
    locked: actor.manuallyApprovesFollowers ?? false,
    bot: actor instanceof Service || actor instanceof Application,
    // Absent means no, as Mastodon reads them.
    discoverable: actor.discoverable ?? false,
    indexable: actor.indexable ?? false,
    publishedAt: actor.published?.epochMilliseconds ?? null,
    keyIds: [...actor.publicKeyIds, ...actor.assertionMethodIds].map((id) => id.href),
    profile: async () => ({ ...(await readProfile(actor, loader)), emojis: await customEmojisOf(actor, { documentLoader: loader }) }),
  };
}

/**
 * An activity's actor for the services: its IRI, and, when it is not stored here, its
 * document (embedded, or fetched through the inbox's context), which must be the actor at that IRI.
 */
export function actorSource(ctx: Context<void>, activity: Activity, loader: DocumentLoader): ActorSource {
  const uri = activity.actorId!.href;
  return {
    uri,
    load: async () => {
      const actor = await activity.getActor({ ...ctx, suppressError: true });
      return actor && actor.id?.href === uri ? actorInput(actor, loader) : null;
    },
  };
}
