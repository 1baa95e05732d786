import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { ExportStats } from "../../models/imports.ts";
import { csvLine } from "./csv.ts";

/**
 * The lists an account can take elsewhere, in the files of Mastodon's export page (Export in
 * app/models/export.rb; GoToSocial writes the same), each named as Mastodon names it. A file is
 * made page by page as it is read, so that a long one is never held whole.
 */
export const EXPORT_FILES = {
  following: "following_accounts.csv",
  followers: "followers.csv",
  lists: "lists.csv",
  blocks: "blocked_accounts.csv",
  mutes: "muted_accounts.csv",
  domain_blocks: "blocked_domains.csv",
  bookmarks: "bookmarks.csv",
} as const;
export type ExportKind = keyof typeof EXPORT_FILES;
export const EXPORT_KINDS = Object.keys(EXPORT_FILES) as ExportKind[];

/** Rows read from the database at a time. */
const PAGE = 500;

interface Named {
  cursor: number;
  username: string;
  domain: string | null;
}

export class ExportService {
  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private publicUrl: string,
    /** This server's acct domain (host[:port]): local accounts are written `user@domain`, as Mastodon does. */
    private domain: string,
  ) {}

  async stats(accountId: number): Promise<ExportStats> {
    return (await this.db.get<ExportStats>(STATS, [this.clock.now(), accountId]))!;
  }

  /** The lines of one file, its header first where Mastodon writes one; read a page at a time. */
  async *lines(accountId: number, kind: ExportKind): AsyncGenerator<string> {
    const acct = (r: Named) => `${r.username}@${r.domain ?? this.domain}`;
    const db = this.db;
    switch (kind) {
      case "following":
        yield csvLine(["Account address", "Show boosts", "Notify on new posts", "Languages"]);
        for await (const r of this.pages((cursor) => db.all<Named & { reblogs: unknown; notify: unknown; languages: string | null }>(FOLLOWING, [accountId, cursor]))) {
          const languages = r.languages ? (JSON.parse(r.languages) as string[]).join(", ") : "";
          // Booleans are 0/1 on SQLite, true/false on PostgreSQL.
          yield csvLine([acct(r), Boolean(r.reblogs), Boolean(r.notify), languages]);
        }
        return;
      case "followers":
        yield csvLine(["Account address"]);
        for await (const r of this.pages((cursor) => db.all<Named>(FOLLOWERS, [accountId, cursor]))) yield csvLine([acct(r)]);
        return;
      case "lists":
        for (const list of await db.all<{ id: number; title: string }>("SELECT id, title FROM lists WHERE account_id = ? ORDER BY id", [accountId])) {
          for await (const r of this.pages((cursor) => db.all<Named>(MEMBERS, [list.id, cursor]), 0)) yield csvLine([list.title, acct(r)]);
        }
        return;
      case "blocks":
        for await (const r of this.pages((cursor) => db.all<Named>(BLOCKS, [accountId, cursor]))) yield csvLine([acct(r)]);
        return;
      case "mutes":
        yield csvLine(["Account address", "Hide notifications"]);
        for await (const r of this.pages((cursor) => db.all<Named & { hide: unknown }>(MUTES, [accountId, cursor, this.clock.now()]))) yield csvLine([acct(r), Boolean(r.hide)]);
        return;
      case "domain_blocks":
        for await (const r of this.pages((cursor) => db.all<{ cursor: number; domain: string }>(DOMAIN_BLOCKS, [accountId, cursor]), 0)) yield csvLine([r.domain]);
        return;
      case "bookmarks":
        // A status's ActivityPub id: its own IRI for a remote one, ours (as the outbox has it) for a local one.
        for await (const r of this.pages((cursor) => db.all<{ cursor: number; statusId: number; uri: string | null; username: string }>(BOOKMARKS, [accountId, cursor]))) {
          yield csvLine([r.uri ?? `${this.publicUrl}/users/${r.username}/statuses/${r.statusId}`]);
        }
        return;
    }
  }

  /** Keyset pages until one comes back short: newest first from the largest cursor, or ascending from `start`. */
  private async *pages<T extends { cursor: number }>(page: (cursor: number) => Promise<T[]>, start = Number.MAX_SAFE_INTEGER): AsyncGenerator<T> {
    let cursor = start;
    for (;;) {
      const rows = await page(cursor);
      yield* rows;
      if (rows.length < PAGE) return;
      cursor = rows[rows.length - 1]!.cursor;
    }
  }
}

// Raw SQL, portable: positional `?`, aliases quoted (PostgreSQL folds unquoted ones to lower case).
const FOLLOWING = `SELECT f.id AS "cursor", a.username, a.domain, f.show_reblogs AS "reblogs", f.notify, f.languages FROM follows f JOIN accounts a ON a.id = f.target_account_id
  WHERE f.account_id = ? AND f.id < ? ORDER BY f.id DESC LIMIT ${PAGE}`;
const FOLLOWERS = `SELECT f.id AS "cursor", a.username, a.domain FROM follows f JOIN accounts a ON a.id = f.account_id
  WHERE f.target_account_id = ? AND f.id < ? ORDER BY f.id DESC LIMIT ${PAGE}`;
const MEMBERS = `SELECT m.account_id AS "cursor", a.username, a.domain FROM list_accounts m JOIN accounts a ON a.id = m.account_id
  WHERE m.list_id = ? AND m.account_id > ? ORDER BY m.account_id LIMIT ${PAGE}`;
const BLOCKS = `SELECT b.id AS "cursor", a.username, a.domain FROM blocks b JOIN accounts a ON a.id = b.target_account_id
  WHERE b.account_id = ? AND b.id < ? ORDER BY b.id DESC LIMIT ${PAGE}`;
const MUTES = `SELECT m.id AS "cursor", a.username, a.domain, m.hide_notifications AS "hide" FROM mutes m JOIN accounts a ON a.id = m.target_account_id
  WHERE m.account_id = ? AND m.id < ? AND (m.expires_at IS NULL OR m.expires_at > ?) ORDER BY m.id DESC LIMIT ${PAGE}`;
const DOMAIN_BLOCKS = `SELECT id AS "cursor", domain FROM account_domain_blocks WHERE account_id = ? AND id > ? ORDER BY id LIMIT ${PAGE}`;
const BOOKMARKS = `SELECT b.id AS "cursor", s.id AS "statusId", s.uri, a.username FROM bookmarks b JOIN statuses s ON s.id = b.status_id JOIN accounts a ON a.id = s.account_id
  WHERE b.account_id = ? AND b.id < ? ORDER BY b.id DESC LIMIT ${PAGE}`;
const STATS = `SELECT a.followers_count AS "followersCount", a.following_count AS "followingCount", a.statuses_count AS "statusesCount",
    (SELECT count(*) FROM lists WHERE account_id = a.id) AS "listsCount",
    (SELECT count(*) FROM blocks WHERE account_id = a.id) AS "blocksCount",
    (SELECT count(*) FROM mutes WHERE account_id = a.id AND (expires_at IS NULL OR expires_at > ?)) AS "mutesCount",
    (SELECT count(*) FROM account_domain_blocks WHERE account_id = a.id) AS "domainBlocksCount",
    (SELECT count(*) FROM bookmarks WHERE account_id = a.id) AS "bookmarksCount"
  FROM accounts a WHERE a.id = ?`;
