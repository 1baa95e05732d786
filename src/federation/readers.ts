import type { RequestContext } from "@fedify/fedify";
import type { Actor } from "@fedify/fedify/vocab";
import type { Config } from "../config.ts";
import type { AccountRow } from "../db/schema.ts";
import { hostOf } from "../net/domains.ts";
import { signerOf } from "./access.ts";
import type { FederationServices } from "./port.ts";
import { asSigned } from "./signed-at.ts";

/**
 * Who reads a local account's actor, collections and statuses: the actor whose key signed the
 * GET, as Fedify verified it (null for an unsigned or badly signed request), and its account
 * here when we know it.
 */
export interface Reader {
  signer: Actor | null;
  viewer: AccountRow | undefined;
}

const ANONYMOUS: Reader = { signer: null, viewer: undefined };

/**
 * The rules every federation read applies. In secure mode (AUTHORIZED_FETCH, and
 * WHITELIST_MODE, which implies it as Mastodon's LIMITED_FEDERATION_MODE does), only a signed
 * request reads collections and statuses, and an unsigned one gets the bare actor; a signed
 * one from a domain not federated with never gets this far (the edge, src/federation/refusals.ts).
 * Whatever the mode, a reader the account blocks, or whose domain it blocks, sees what an
 * unsigned request sees of the actor, and no status: collections are empty to it (Mastodon's
 * permitted_for and for_signed_account), as single statuses are not found.
 */
export function federationReaders(
  config: Pick<Config, "authorizedFetch" | "whitelistMode">,
  services: Pick<FederationServices, "remoteAccounts" | "federationActors">,
  signerAt: (request: Request) => Promise<Actor | null>,
) {
  const secure = config.authorizedFetch || config.whitelistMode;
  // One verification per request, however many callbacks ask (authorize, then the dispatcher).
  const known = new WeakMap<Request, Promise<Reader>>();

  const readerOf = (ctx: RequestContext<void>): Promise<Reader> => {
    const { request } = ctx;
    // Unsigned: nothing to verify (most fetches outside secure mode).
    if (!request.headers.has("signature") && !request.headers.has("signature-input")) return Promise.resolve(ANONYMOUS);
    let reader = known.get(request);
    if (!reader) {
      // Checked against the request as its sender signed it (src/federation/signed-at.ts).
      const asSent = asSigned(request);
      reader = (asSent === request ? signerOf(ctx) : signerAt(asSent)).then(async (signer) => ({ signer, viewer: signer?.id ? await services.remoteAccounts.byUri(signer.id.href) : undefined }));
      known.set(request, reader);
    }
    return reader;
  };

  return {
    secure,
    readerOf,
    /** Under secure mode, collections and statuses are for signed requests only (401 otherwise). */
    authorized: async (ctx: RequestContext<void>) => !secure || (await readerOf(ctx)).signer !== null,
    /** The account hides itself from this reader: it blocks it, or its domain. */
    async hides(accountId: number, reader: Reader): Promise<boolean> {
      if (reader.signer?.id == null) return false;
      return services.federationActors.hidesFrom(accountId, { accountId: reader.viewer?.id ?? null, host: hostOf(reader.signer.id) });
    },
    /** Whether this GET sees only the bare actor: unsigned in secure mode, or a reader the account hides from. */
    async seesBareActor(ctx: RequestContext<void>, account: AccountRow): Promise<boolean> {
      const reader = await readerOf(ctx);
      return (secure && reader.signer === null) || (await this.hides(account.id, reader));
    },
  };
}
