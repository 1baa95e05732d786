import type { DatabasePort } from "../../db/port.ts";
import type { ImportRow } from "../../db/schema.ts";
import type { FollowService } from "../accounts/follows.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { AccountDomainBlocks } from "../accounts/domain-blocks.ts";
import type { ListService } from "../lists.ts";
import type { StatusActionService } from "../statuses/actions.ts";
import type { ImportEntry } from "./formats.ts";

/** Removals made per turn of the worker: a long list to undo never holds the server up. */
export const REMOVALS_PER_TURN = 100;

export interface OverwriteDeps {
  db: DatabasePort;
  follows: FollowService;
  moderation: ModerationService;
  domainBlocks: AccountDomainBlocks;
  lists: ListService;
  statusActions: StatusActionService;
  publicUrl: string;
}

/**
 * What an overwrite import removes before its entries are worked off (Mastodon's
 * BulkImportService): the follows, requests, blocks, mutes, blocked domains and bookmarks that
 * are not in the file; for lists, the lists not named in it, and every list's members (the
 * file gives them again). Done a turn at a time; done when a turn finds nothing left.
 */
export class ImportOverwrite {
  constructor(private deps: OverwriteDeps) {}

  /** One turn of removals for an import; true when nothing was left to remove. */
  async step(imp: ImportRow): Promise<boolean> {
    const db = this.deps.db;
    const accountId = imp.accountId;
    const named = (table: string) => db.all<{ id: number; acct: string }>(NAMED(table), [accountId]);
    const entries = (await db.all<{ data: string }>("SELECT data FROM import_rows WHERE import_id = ?", [imp.id])).map((r) => JSON.parse(r.data) as ImportEntry);
    const { follows, moderation, domainBlocks, lists, statusActions } = this.deps;
    const wantedAccts = new Set(entries.map((e) => e.acct?.toLowerCase()));
    const unwanted = (rows: { id: number; acct: string }[]) => rows.filter((r) => !wantedAccts.has(r.acct)).slice(0, REMOVALS_PER_TURN);
    switch (imp.type) {
      case "following": {
        const gone = unwanted([...(await named("follows")), ...(await named("follow_requests"))]);
        for (const r of gone) await follows.unfollow(accountId, r.id);
        return gone.length === 0;
      }
      case "blocks": {
        const gone = unwanted(await named("blocks"));
        for (const r of gone) await moderation.unblock(accountId, r.id);
        return gone.length === 0;
      }
      case "mutes": {
        const gone = unwanted(await named("mutes"));
        for (const r of gone) await moderation.unmute(accountId, r.id);
        return gone.length === 0;
      }
      case "domain_blocks": {
        const wanted = new Set(entries.map((e) => e.domain));
        const gone = (await domainBlocks.domainsOf(accountId)).filter((d) => !wanted.has(d)).slice(0, REMOVALS_PER_TURN);
        for (const d of gone) await domainBlocks.unblock(accountId, d);
        return gone.length === 0;
      }
      case "bookmarks": {
        const wanted = new Set(entries.map((e) => e.uri));
        const gone = (await db.all<{ id: number; uri: string | null; username: string }>(BOOKMARKED, [accountId]))
          .filter((r) => !wanted.has(r.uri ?? `${this.deps.publicUrl}/users/${r.username}/statuses/${r.id}`))
          .slice(0, REMOVALS_PER_TURN);
        for (const r of gone) await statusActions.unbookmark(accountId, r.id);
        return gone.length === 0;
      }
      case "lists": {
        const wanted = new Set(entries.map((e) => e.list));
        const gone = (await lists.all(accountId)).filter((l) => !wanted.has(l.title));
        for (const l of gone) await lists.remove(accountId, l.id);
        // Membership does not change what a list's timeline already holds: the members are
        // simply cleared, and the file's entries add them back (as Mastodon does).
        const members = (await db.all<{ listId: number; accountId: number }>(MEMBERS, [accountId])).slice(0, REMOVALS_PER_TURN);
        const byList = new Map<number, number[]>();
        for (const m of members) byList.set(m.listId, [...(byList.get(m.listId) ?? []), m.accountId]);
        for (const [listId, ids] of byList) await lists.removeMembers(accountId, listId, ids);
        return gone.length === 0 && members.length === 0;
      }
    }
    return true;
  }
}

// Portable SQL: positional `?`, aliases quoted (PostgreSQL folds unquoted ones to lower case).
const NAMED = (table: string) => `SELECT a.id, lower(CASE WHEN a.domain IS NULL THEN a.username ELSE a.username || '@' || a.domain END) AS acct
  FROM ${table} t JOIN accounts a ON a.id = t.target_account_id WHERE t.account_id = ?`;
const BOOKMARKED = "SELECT s.id, s.uri, a.username FROM bookmarks b JOIN statuses s ON s.id = b.status_id JOIN accounts a ON a.id = s.account_id WHERE b.account_id = ?";
const MEMBERS = `SELECT m.list_id AS "listId", m.account_id AS "accountId" FROM list_accounts m JOIN lists l ON l.id = m.list_id WHERE l.account_id = ?`;
