import type { AccountRow } from "../../db/schema.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { RemoteAccounts } from "../remote/accounts.ts";
import type { RemoteFetcher } from "../remote/fetcher.ts";
import type { AccountService } from "./accounts.ts";

/** An account named by a handle or an actor IRI, as it says it is now. */
export interface ActorRef {
  account: AccountRow;
  /** Its actor IRI. */
  uri: string;
  /** The accounts it says it also is (alsoKnownAs). */
  aliases: string[];
  /** Where it says it moved to, if it did. */
  movedTo: string | null;
}

/** What a person typed to name an account: `@user@domain` (or `user@domain`, `acct:user@domain`), or an http(s) IRI. */
export type TypedRef = { handle: { username: string; domain: string } } | { uri: string };

const HANDLE = /^(?:acct:)?@?([A-Za-z0-9_.-]+)@([A-Za-z0-9.-]+(?::\d+)?)$/;

/** Null for what is neither a handle nor an http(s) URL. */
export function parseRef(text: string): TypedRef | null {
  const trimmed = text.trim();
  const handle = HANDLE.exec(trimmed);
  if (handle) return { handle: { username: handle[1]!, domain: handle[2]!.toLowerCase() } };
  const uri = httpUrlOrNull(trimmed);
  return uri === null ? null : { uri };
}

/**
 * Resolves handles and IRIs to accounts, local or remote, with their aliases as they are: a
 * local account's from the database, a remote one's fetched (its document stored as an
 * account). Aliases and moves name accounts this way, in the API and on the command line.
 */
export class ActorRefs {
  private readonly domain: string;

  constructor(
    private accounts: Pick<AccountService, "getLocal" | "get">,
    private remote: Pick<RemoteAccounts, "upsert">,
    /** Null while federation is off: only local accounts can be named. */
    private fetcher: RemoteFetcher | null,
    private publicUrl: string,
  ) {
    this.domain = new URL(publicUrl).host.toLowerCase();
  }

  /** A local account's actor IRI (as src/federation routes /users/{username}). */
  localUri(account: AccountRow): string {
    return `${this.publicUrl}/users/${account.username}`;
  }

  /** An account's actor IRI, local or remote. */
  uriOf(account: AccountRow): string {
    return account.domain === null ? this.localUri(account) : account.uri!;
  }

  /** The local account an IRI or handle names, if it names one of this server's. */
  async local(ref: TypedRef): Promise<AccountRow | null> {
    if ("handle" in ref) return ref.handle.domain === this.domain ? ((await this.accounts.getLocal(ref.handle.username)) ?? null) : null;
    const prefix = `${this.publicUrl}/users/`;
    if (!ref.uri.startsWith(prefix)) return null;
    const username = decodeURIComponent(ref.uri.slice(prefix.length));
    return /^[A-Za-z0-9_]+$/.test(username) ? ((await this.accounts.getLocal(username)) ?? null) : null;
  }

  /**
   * The account a handle or IRI names, as it is now (a remote one's document asked of its
   * server this moment); null when there is none to be had.
   */
  async resolve(ref: TypedRef): Promise<ActorRef | null> {
    const own = await this.local(ref);
    if (own) return { account: own, uri: this.localUri(own), aliases: aliasesOf(own), movedTo: await this.movedToOf(own) };
    // Another IRI of this server's that names no account here is no account at all.
    if ("uri" in ref && new URL(ref.uri).origin === new URL(this.publicUrl).origin) return null;
    if ("handle" in ref && ref.handle.domain === this.domain) return null;
    if (!this.fetcher) return null;
    const id = "handle" in ref ? `acct:${ref.handle.username}@${ref.handle.domain}` : ref.uri;
    const actor = await this.fetcher.actor(id).catch(() => null);
    if (!actor) return null;
    const account = await this.remote.upsert(actor);
    if (!account) return null;
    return { account, uri: account.uri!, aliases: actor.aliases, movedTo: actor.movedTo };
  }

  private async movedToOf(account: AccountRow): Promise<string | null> {
    if (account.movedToAccountId === null) return null;
    const target = await this.accounts.get(account.movedToAccountId);
    return target ? this.uriOf(target) : null;
  }
}

/** A local account's aliases, as stored. */
export function aliasesOf(account: AccountRow): string[] {
  return JSON.parse(account.alsoKnownAs) as string[];
}
