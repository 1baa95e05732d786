import { eq, sql } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow } from "../../db/schema.ts";
import { badRequest, notFound, unprocessable } from "../../errors.ts";
import type { EventBus } from "../../infra/events.ts";
import { aliasesOf, parseRef, type ActorRefs } from "./actor-refs.ts";

/** More than anyone comes from; each is fetched when set. */
export const MAX_ALIASES = 20;

const invalid = (raw: string) =>
  badRequest(`invalid also_known_as_uri (${raw}) provided in account alias request: uri must not be empty and scheme must be http or https`);

/**
 * A local account's aliases (alsoKnownAs): the accounts it comes from, named in its actor
 * document, so that their servers' followers believe a Move from them to it. As GoToSocial's
 * POST /api/v1/accounts/alias: the whole list is set at once (empty clears it), each entry must
 * be an account that can be fetched now, duplicates and the account itself are left out.
 * Handles (`@user@domain`) are taken as well as IRIs and stored as the IRIs they lead to.
 * Followers' servers hear of a change as an Update of the actor (account.updated).
 */
export class AccountAliases {
  // Built once (src/db/port.ts): drizzle spends more building a query than SQLite running it.
  private q;

  constructor(
    private db: DatabasePort,
    private refs: ActorRefs,
    private events: EventBus,
  ) {
    const { accounts } = db.tables;
    this.q = {
      account: db.orm.select().from(accounts).where(eq(accounts.id, sql.placeholder("id"))).prepare(),
      setAliases: db.orm
        .update(accounts)
        .set({ alsoKnownAs: sql.placeholder("alsoKnownAs") as unknown as string })
        .where(eq(accounts.id, sql.placeholder("id")))
        .prepare(),
    };
  }

  async list(accountId: number): Promise<string[]> {
    return aliasesOf(await this.local(accountId));
  }

  /** Sets the aliases to exactly `given` (IRIs or handles, as typed); answers the account as it is now. */
  async set(accountId: number, given: string[]): Promise<AccountRow> {
    const account = await this.local(accountId);
    const self = this.refs.localUri(account);
    const refs = given.map((raw) => ({ raw, ref: parseRef(raw) }));
    // Every entry is read before anything is fetched: a bad one refuses the whole request.
    for (const { raw, ref } of refs) if (ref === null) throw invalid(raw);
    // Once each, in the order given; the account itself is no alias of its own (GoToSocial skips it).
    const wanted = new Map<string, string>();
    for (const { raw, ref } of refs) {
      const key = "uri" in ref! ? ref.uri : `${ref!.handle.username.toLowerCase()}@${ref!.handle.domain}`;
      if (key !== self && !wanted.has(key)) wanted.set(key, raw);
    }
    if (wanted.size > MAX_ALIASES) throw unprocessable(`too many also_known_as_uris: at most ${MAX_ALIASES}`);
    const uris: string[] = [];
    for (const raw of wanted.values()) {
      const found = await this.refs.resolve(parseRef(raw)!);
      if (!found) throw unprocessable(`error dereferencing also_known_as_uri (${raw}) account: no account could be fetched there`);
      if (found.uri !== self && !uris.includes(found.uri)) uris.push(found.uri);
    }
    return this.write(account, uris);
  }

  /** Adds one alias (the command line's `alias add`); answers its IRI. */
  async add(accountId: number, given: string): Promise<string> {
    const ref = parseRef(given);
    if (ref === null) throw invalid(given);
    const found = await this.refs.resolve(ref);
    if (!found) throw unprocessable(`error dereferencing also_known_as_uri (${given}) account: no account could be fetched there`);
    const account = await this.local(accountId);
    if (found.uri === this.refs.localUri(account)) throw unprocessable("an account cannot be an alias of itself");
    const current = aliasesOf(account);
    if (!current.includes(found.uri)) {
      if (current.length >= MAX_ALIASES) throw unprocessable(`too many also_known_as_uris: at most ${MAX_ALIASES}`);
      await this.write(account, [...current, found.uri]);
    }
    return found.uri;
  }

  /** Removes one alias, named by its IRI or by a handle of the account; answers the IRI removed, null when it was none of them. */
  async remove(accountId: number, given: string): Promise<string | null> {
    const ref = parseRef(given);
    if (ref === null) throw invalid(given);
    const account = await this.local(accountId);
    const current = aliasesOf(account);
    let uri = "uri" in ref ? ref.uri : null;
    // A handle is looked up only when it is no stored IRI's: the old account may be gone by now.
    if (uri === null || !current.includes(uri)) uri = (await this.refs.resolve(ref).catch(() => null))?.uri ?? uri;
    if (uri === null || !current.includes(uri)) return null;
    await this.write(account, current.filter((alias) => alias !== uri));
    return uri;
  }

  private async local(accountId: number): Promise<AccountRow> {
    const [account] = (await this.q.account.execute({ id: accountId })) as AccountRow[];
    if (!account || account.domain !== null) throw notFound();
    return account;
  }

  private async write(account: AccountRow, uris: string[]): Promise<AccountRow> {
    const alsoKnownAs = JSON.stringify(uris);
    if (alsoKnownAs === account.alsoKnownAs) return account;
    await this.db.transaction(async () => {
      await this.q.setAliases.execute({ id: account.id, alsoKnownAs });
      await this.events.emit({ type: "account.updated", accountId: account.id });
    });
    return { ...account, alsoKnownAs };
  }
}
