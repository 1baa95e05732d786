import type { Create } from "@fedify/fedify/vocab";
import type { Inbound, Listener } from "./index.ts";
import { isStatusObject, noteInput } from "./note.ts";

/**
 * A Note (or a Question) by the actor who sends it; stored when it concerns someone here
 * (RemoteNotes), or when an accepted relay forwarded it: Fedify believed it through its
 * embedded signature or proof, and the relay is the request's signer (delivered-by.ts).
 */
export const onCreate =
  ({ services, loader, deliveredBy }: Inbound): Listener<Create> =>
  async (ctx, create) => {
    if (create.actorId === null) return;
    const note = await create.getObject(ctx);
    if (!isStatusObject(note) || note.id === null) return;
    // The Note as it arrived, for what Fedify's vocabulary leaves out (attachments' blurhash).
    const raw = async () => ((await create.toJsonLd()) as { object?: unknown } | null)?.object;
    const input = noteInput(ctx, note, loader, raw);
    // The actor must be the author; a relay may have carried it (who signed the request).
    if (input) await services.federationInbox.create(create.actorId.href, input, deliveredBy());
  };
