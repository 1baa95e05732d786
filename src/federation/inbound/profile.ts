import { Link, PropertyValue, type Actor, type Image } from "@fedify/fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab-runtime";
import type { ProfileField } from "../../models/views.ts";
import type { RemoteProfile } from "../../services/remote/inputs.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import { sanitizeRemoteHtml } from "../../text/sanitize.ts";

/** Mastodon's hard limit on a federated note (Account::NOTE_LENGTH_HARD_LIMIT), cut before cleaning. */
const NOTE_MAX = 20 * 1024;
/** Ours: Mastodon keeps every PropertyValue, a limit nobody showing a profile will miss. */
const FIELDS_MAX = 16;
const FIELD_NAME_MAX = 255;
const FIELD_VALUE_MAX = 2048;

/**
 * A remote actor's note, fields, avatar and header, as Mastodon's
 * ActivityPub::ProcessAccountService reads them: `summary` is HTML, cleaned as Mastodon
 * cleans it (sanitizeRemoteHtml); `attachment` PropertyValues are fields (the name is text,
 * the value cleaned HTML, its links http(s) only); `icon` and `image` are the avatar and
 * header, kept as their remote URLs (http or https) and shown as such, never downloaded.
 *
 * Images given only by reference are fetched through `loader` (Mastodon fetches them too);
 * attachments only when embedded, as Mastodon takes them.
 */
export async function readProfile(actor: Actor, loader: DocumentLoader): Promise<Omit<RemoteProfile, "emojis">> {
  const fields: ProfileField[] = [];
  for await (const item of actor.getAttachments({ documentLoader: refuse, contextLoader: loader, suppressError: true })) {
    if (!(item instanceof PropertyValue)) continue;
    const name = (item.name?.toString() ?? "").slice(0, FIELD_NAME_MAX);
    const valueHtml = sanitizeRemoteHtml((item.value?.toString() ?? "").slice(0, FIELD_VALUE_MAX), { httpLinksOnly: true });
    if (name.trim() === "" && valueHtml.trim() === "") continue;
    fields.push({ name, value: valueHtml, valueHtml, verifiedAt: null });
    if (fields.length === FIELDS_MAX) break;
  }
  const options = { documentLoader: loader, contextLoader: loader, suppressError: true };
  const [icon, image] = await Promise.all([actor.getIcon(options).catch(() => null), actor.getImage(options).catch(() => null)]);
  return {
    noteHtml: sanitizeRemoteHtml((actor.summary?.toString() ?? "").slice(0, NOTE_MAX)),
    fields,
    avatarRemoteUrl: imageUrl(icon),
    headerRemoteUrl: imageUrl(image),
  };
}

/** Only what is embedded: references are not followed. */
const refuse: DocumentLoader = async (url) => {
  throw new Error(`not fetched: ${url}`);
};

/** The address of an image, when it is one a client can load (http or https). */
function imageUrl(image: Image | null): string | null {
  const url = image?.url;
  return httpUrlOrNull(url instanceof URL ? url : url instanceof Link ? url.href : null);
}
