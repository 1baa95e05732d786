import type { DatabasePort } from "../../db/port.ts";
import { ApiError } from "../../errors.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { AccountDomainBlocks } from "../accounts/domain-blocks.ts";
import type { ListService } from "../lists.ts";
import type { RemoteAccounts } from "../remote/accounts.ts";
import type { SearchService } from "../search.ts";
import type { StatusActionService } from "../statuses/actions.ts";
import type { ImportEntry, ImportType } from "./formats.ts";

/** Why an entry came to nothing, as the import's report counts them. */
export type ImportFailure = "unknown_account" | "server_down" | "refused" | "not_found" | "invalid";

export type ImportOutcome = { ok: true; targetAccountId?: number } | { ok: false; failure: ImportFailure; detail: string };

const failed = (failure: ImportFailure, detail: string): ImportOutcome => ({ ok: false, failure, detail });

export interface ImportActionDeps {
  db: DatabasePort;
  follows: FollowService;
  moderation: ModerationService;
  domainBlocks: AccountDomainBlocks;
  lists: ListService;
  statusActions: StatusActionService;
  search: SearchService;
  remoteAccounts: RemoteAccounts;
  /** This server's origin: a URL under it names a local status. */
  publicUrl: string;
  /** Whether this server federates with a host at all (FederationDomains.refuses). */
  refuses(host: string): boolean;
  /** Whether a host answers HTTP at all: tells an unknown account from a server that is down. */
  answers(host: string, signal: AbortSignal): Promise<boolean>;
}

/**
 * What one entry of an import does, through the same services the API's calls go through
 * (Mastodon's BulkImportRowService): the account found here or through WebFinger, then
 * followed, blocked, muted, listed; a domain blocked; a status found or fetched, then
 * bookmarked. Never throws: every refusal becomes an outcome the report can name.
 */
export class ImportActions {
  constructor(private deps: ImportActionDeps) {}

  async apply(accountId: number, type: ImportType, entry: ImportEntry, signal: AbortSignal): Promise<ImportOutcome> {
    try {
      return await this.act(accountId, type, entry, signal);
    } catch (e) {
      if (signal.aborted) throw e;
      if (e instanceof ApiError) return failed(e.status === 403 ? "refused" : e.status === 404 ? "not_found" : "invalid", e.message);
      return failed("invalid", String(e instanceof Error ? e.message : e).split("\n")[0]!);
    }
  }

  private async act(accountId: number, type: ImportType, entry: ImportEntry, signal: AbortSignal): Promise<ImportOutcome> {
    const { follows, moderation, lists } = this.deps;
    if (type === "domain_blocks") {
      await this.deps.domainBlocks.block(accountId, entry.domain);
      return { ok: true };
    }
    if (type === "bookmarks") return this.bookmark(accountId, entry.uri!, signal);
    const found = await this.account(entry.acct!, signal);
    if (!found.ok) return found;
    const targetId = found.targetAccountId!;
    if (targetId === accountId) return failed("invalid", "this is the importing account itself");
    switch (type) {
      case "following":
        await follows.follow(accountId, targetId, { reblogs: entry.reblogs, notify: entry.notify, languages: entry.languages });
        return { ok: true, targetAccountId: targetId };
      case "blocks":
        await moderation.block(accountId, targetId);
        return { ok: true, targetAccountId: targetId };
      case "mutes":
        await moderation.mute(accountId, targetId, { notifications: entry.hideNotifications });
        return { ok: true, targetAccountId: targetId };
      case "lists": {
        // As Mastodon: the list is made when missing, and its members must be followed (a request will do).
        const list = (await lists.all(accountId)).find((l) => l.title === entry.list) ?? (await lists.create(accountId, { title: entry.list }));
        const relationship = await follows.relationship(accountId, targetId);
        if (!relationship.following && !relationship.requested) await follows.follow(accountId, targetId, {});
        const member = await this.deps.db.get("SELECT 1 AS one FROM list_accounts WHERE list_id = ? AND account_id = ?", [list.id, targetId]);
        if (!member) await lists.addMembers(accountId, list.id, [targetId]);
        return { ok: true, targetAccountId: targetId };
      }
    }
    return failed("invalid", `unknown import type ${type}`);
  }

  /** The account an address names: one of this server's, a stored one, or one found through WebFinger. */
  private async account(acct: string, signal: AbortSignal): Promise<ImportOutcome> {
    const at = acct.indexOf("@");
    if (at < 0) {
      const local = await this.deps.db.get<{ id: number }>("SELECT id FROM accounts WHERE lower(username) = ? AND domain IS NULL", [acct.toLowerCase()]);
      return local ? { ok: true, targetAccountId: local.id } : failed("unknown_account", `there is no account ${acct} on this server`);
    }
    const username = acct.slice(0, at);
    const host = acct.slice(at + 1);
    if (this.deps.refuses(host)) return failed("refused", `this server does not federate with ${host}`);
    const row = await this.deps.remoteAccounts.lookup(username, host, signal);
    if (signal.aborted) throw signal.reason;
    if (row) return { ok: true, targetAccountId: row.id };
    return (await this.deps.answers(host, signal))
      ? failed("unknown_account", `${host} knows no account ${username}`)
      : failed("server_down", `${host} did not answer`);
  }

  private async bookmark(accountId: number, uri: string, signal: AbortSignal): Promise<ImportOutcome> {
    const stored = await this.deps.remoteAccounts.statusByUri(uri);
    let statusId = stored?.id;
    if (statusId === undefined) {
      const found = await this.deps.search.search(accountId, uri, { type: "statuses", resolve: true, limit: 1, offset: 0, following: false });
      if (signal.aborted) throw signal.reason;
      statusId = found.statuses[0]?.id;
    }
    if (statusId === undefined) {
      const host = URL.canParse(uri) ? new URL(uri).host : null;
      if (host && this.deps.refuses(host)) return failed("refused", `this server does not federate with ${host}`);
      const local = uri.toLowerCase().startsWith(`${this.deps.publicUrl.toLowerCase()}/`);
      if (!local && host && !(await this.deps.answers(host, signal))) return failed("server_down", `${host} did not answer`);
      return failed("not_found", "no status there that this account may see");
    }
    await this.deps.statusActions.bookmark(accountId, statusId);
    return { ok: true };
  }
}
