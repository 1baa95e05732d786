import { CryptographicKey, isActor, Multikey, Object as ApObject } from "@fedify/fedify/vocab";
import { FetchError, type DocumentLoader, type RemoteDocument } from "@fedify/vocab-runtime";

/**
 * A key belongs to whom its owner says, not to whom the key says.
 *
 * Fedify 2.3.6 takes a key's `owner` (draft-cavage HTTP signatures, Linked Data Signatures) or
 * `controller` (Object Integrity Proofs) as it reads it in the key's document: a server could
 * publish a key of its own whose `owner` is an actor of another server, sign an activity of
 * that actor with it, and have it taken as that actor's (`doesActorOwnKey` compares the claimed
 * owner with the activity's actor; `verifyJsonLd` and `verifyProof` do the same with the
 * signature's attribution). Mastodon believes a key's owner only once the owner confirms it
 * (ActivityPub::FetchRemoteKeyService: the owner's actor document names the key).
 *
 * Every document Fedify fetches through our loaders passes here, before it is cached, so that
 * no verification path can meet a key whose claim was not confirmed:
 * - an actor naming, as one of its own keys (`publicKey`, `assertionMethod`), a key whose
 *   `owner` or `controller` is someone else is refused;
 * - a key document (`CryptographicKey`, `Multikey`) stands only when the actor it names as its
 *   owner or controller, fetched through the same loader, names this key among its own.
 * A refused document is a failed fetch: the signature does not verify, and nothing is taken.
 * What the documents say is read by Fedify's own vocabulary, so a context's aliases cannot hide
 * a key from this check.
 */
export function confirmingKeyOwners(loader: DocumentLoader, through: { owners: () => DocumentLoader; contextLoader: DocumentLoader }): DocumentLoader {
  const confirmed: DocumentLoader = async (url, options) => {
    const remote = await loader(url, options);
    const refusal = await refusalOf(remote, through.owners(), through.contextLoader);
    if (refusal !== null) throw new FetchError(url, `Refused ${url}: ${refusal}`);
    return remote;
  };
  return confirmed;
}

/** Keys embedded in an actor are read as they are, never fetched: a reference is its own document. */
const noFetch: DocumentLoader = (url) => Promise.reject(new FetchError(url, "not fetched while reading an actor's own keys"));

async function refusalOf(remote: RemoteDocument, loader: DocumentLoader, contextLoader: DocumentLoader): Promise<string | null> {
  const document = remote.document;
  if (document === null || typeof document !== "object" || Array.isArray(document)) return null;
  // Read as Fedify reads a fetched key (resolveFetchedKey): as an object (an actor), else as a key.
  const object = await readAs(document, contextLoader);
  // Not something Fedify can read: whatever asked for it will fail to read it too.
  if (object === null) return null;
  if (isActor(object)) {
    const actor = object.id?.href;
    const read = { documentLoader: noFetch, contextLoader, suppressError: true };
    for await (const key of object.getPublicKeys(read)) {
      if (key.ownerId !== null && key.ownerId.href !== actor) return `its key ${key.id?.href} claims another owner (${key.ownerId.href})`;
    }
    for await (const key of object.getAssertionMethods(read)) {
      if (key.controllerId !== null && key.controllerId.href !== actor) return `its key ${key.id?.href} claims another controller (${key.controllerId.href})`;
    }
    return null;
  }
  const claimed = object instanceof CryptographicKey ? object.ownerId : object instanceof Multikey ? object.controllerId : null;
  if (claimed === null || object.id === null) return null;
  const keyId = object.id.href;
  let owner: ApObject | CryptographicKey | Multikey | null = null;
  try {
    owner = await readAs((await loader(claimed.href)).document, contextLoader);
  } catch {
    // The owner's document failed to load (or was itself refused).
  }
  if (owner === null) return `its owner ${claimed.href} could not be read`;
  if (!isActor(owner) || owner.id?.href !== claimed.href) return `its owner ${claimed.href} is no actor`;
  const named = object instanceof CryptographicKey ? owner.publicKeyIds : owner.assertionMethodIds;
  return named.some((id) => id.href === keyId) ? null : `its owner ${claimed.href} does not name it`;
}

async function readAs(document: unknown, contextLoader: DocumentLoader): Promise<ApObject | CryptographicKey | Multikey | null> {
  const options = { documentLoader: noFetch, contextLoader };
  for (const cls of [ApObject, CryptographicKey, Multikey]) {
    try {
      return await cls.fromJsonLd(document, options);
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
    }
  }
  return null;
}
