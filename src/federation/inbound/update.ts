import { isActor, type Update } from "@fedify/fedify/vocab";
import { actorInput } from "./actor.ts";
import type { Inbound, Listener } from "./index.ts";
import { isStatusObject, noteInput } from "./note.ts";

/**
 * Update of an actor (its own profile only) or of a Note (by its author only): anything
 * else, an Update of someone else's actor or status, changes nothing.
 */
export const onUpdate =
  ({ services, loader }: Inbound): Listener<Update> =>
  async (ctx, update) => {
    if (update.actorId === null) return;
    // An object of another origin than the actor's is no update of the actor's own.
    const object = await update.getObject({ ...ctx, crossOrigin: "ignore" });
    if (object === null || object.id === null) return;
    if (isActor(object)) {
      const input = actorInput(object, loader);
      if (input) await services.federationInbox.updateActor(update.actorId.href, input);
      return;
    }
    // The Note as it arrived, for what Fedify's vocabulary leaves out (blurhash, Mastodon's `quote`).
    const raw = async () => ((await update.toJsonLd()) as { object?: unknown } | null)?.object;
    const input = isStatusObject(object) ? noteInput(ctx, object, loader, raw) : null;
    if (input) await services.federationInbox.updateNote(update.actorId.href, input);
  };
