import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
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
  private q;

  constructor(
    db: Db,
    private clock: Clock,
    private publicUrl: string,
    /** This server's acct domain (host[:port]): local accounts are written `user@domain`, as Mastodon does. */
    private domain: string,
  ) {
    const sqlite = db.$client;
    this.q = {
      following: sqlite.query<Named & { reblogs: number; notify: number; languages: string | null }, [number, number]>(
        `SELECT f.id AS cursor, a.username, a.domain, f.show_reblogs AS reblogs, f.notify, f.languages FROM follows f JOIN accounts a ON a.id = f.target_account_id
         WHERE f.account_id = ?1 AND f.id < ?2 ORDER BY f.id DESC LIMIT ${PAGE}`,
      ),
      followers: sqlite.query<Named, [number, number]>(
        `SELECT f.id AS cursor, a.username, a.domain FROM follows f JOIN accounts a ON a.id = f.account_id
         WHERE f.target_account_id = ?1 AND f.id < ?2 ORDER BY f.id DESC LIMIT ${PAGE}`,
      ),
      lists: sqlite.query<{ id: number; title: string }, [number]>("SELECT id, title FROM lists WHERE account_id = ? ORDER BY id"),
      members: sqlite.query<Named, [number, number]>(
        `SELECT m.account_id AS cursor, a.username, a.domain FROM list_accounts m JOIN accounts a ON a.id = m.account_id
         WHERE m.list_id = ?1 AND m.account_id > ?2 ORDER BY m.account_id LIMIT ${PAGE}`,
      ),
      blocks: sqlite.query<Named, [number, number]>(
        `SELECT b.id AS cursor, a.username, a.domain FROM blocks b JOIN accounts a ON a.id = b.target_account_id
         WHERE b.account_id = ?1 AND b.id < ?2 ORDER BY b.id DESC LIMIT ${PAGE}`,
      ),
      mutes: sqlite.query<Named & { hide: number }, [number, number, number]>(
        `SELECT m.id AS cursor, a.username, a.domain, m.hide_notifications AS hide FROM mutes m JOIN accounts a ON a.id = m.target_account_id
         WHERE m.account_id = ?1 AND m.id < ?2 AND (m.expires_at IS NULL OR m.expires_at > ?3) ORDER BY m.id DESC LIMIT ${PAGE}`,
      ),
      domainBlocks: sqlite.query<{ cursor: number; domain: string }, [number, number]>(
        `SELECT id AS cursor, domain FROM account_domain_blocks WHERE account_id = ?1 AND id > ?2 ORDER BY id LIMIT ${PAGE}`,
      ),
      bookmarks: sqlite.query<{ cursor: number; statusId: number; uri: string | null; username: string }, [number, number]>(
        `SELECT b.id AS cursor, s.id AS statusId, s.uri, a.username FROM bookmarks b JOIN statuses s ON s.id = b.status_id JOIN accounts a ON a.id = s.account_id
         WHERE b.account_id = ?1 AND b.id < ?2 ORDER BY b.id DESC LIMIT ${PAGE}`,
      ),
      stats: sqlite.query<Record<string, number>, [number, number]>(
        `SELECT a.followers_count AS followersCount, a.following_count AS followingCount, a.statuses_count AS statusesCount,
           (SELECT count(*) FROM lists WHERE account_id = a.id) AS listsCount,
           (SELECT count(*) FROM blocks WHERE account_id = a.id) AS blocksCount,
           (SELECT count(*) FROM mutes WHERE account_id = a.id AND (expires_at IS NULL OR expires_at > ?2)) AS mutesCount,
           (SELECT count(*) FROM account_domain_blocks WHERE account_id = a.id) AS domainBlocksCount,
           (SELECT count(*) FROM bookmarks WHERE account_id = a.id) AS bookmarksCount
         FROM accounts a WHERE a.id = ?1`,
      ),
    };
  }

  stats(accountId: number): ExportStats {
    return this.q.stats.get(accountId, this.clock.now()) as unknown as ExportStats;
  }

  /** The lines of one file, its header first where Mastodon writes one; read a page at a time. */
  *lines(accountId: number, kind: ExportKind): Generator<string> {
    const acct = (r: Named) => `${r.username}@${r.domain ?? this.domain}`;
    switch (kind) {
      case "following":
        yield csvLine(["Account address", "Show boosts", "Notify on new posts", "Languages"]);
        for (const r of this.pages((cursor) => this.q.following.all(accountId, cursor))) {
          const languages = r.languages ? (JSON.parse(r.languages) as string[]).join(", ") : "";
          yield csvLine([acct(r), r.reblogs === 1, r.notify === 1, languages]);
        }
        return;
      case "followers":
        yield csvLine(["Account address"]);
        for (const r of this.pages((cursor) => this.q.followers.all(accountId, cursor))) yield csvLine([acct(r)]);
        return;
      case "lists":
        for (const list of this.q.lists.all(accountId)) {
          for (const r of this.pages((cursor) => this.q.members.all(list.id, cursor), 0)) yield csvLine([list.title, acct(r)]);
        }
        return;
      case "blocks":
        for (const r of this.pages((cursor) => this.q.blocks.all(accountId, cursor))) yield csvLine([acct(r)]);
        return;
      case "mutes":
        yield csvLine(["Account address", "Hide notifications"]);
        for (const r of this.pages((cursor) => this.q.mutes.all(accountId, cursor, this.clock.now()))) yield csvLine([acct(r), r.hide === 1]);
        return;
      case "domain_blocks":
        for (const r of this.pages((cursor) => this.q.domainBlocks.all(accountId, cursor), 0)) yield csvLine([r.domain]);
        return;
      case "bookmarks":
        // A status's ActivityPub id: its own IRI for a remote one, ours (as the outbox has it) for a local one.
        for (const r of this.pages((cursor) => this.q.bookmarks.all(accountId, cursor))) yield csvLine([r.uri ?? `${this.publicUrl}/users/${r.username}/statuses/${r.statusId}`]);
        return;
    }
  }

  /** Keyset pages until one comes back short: newest first from the largest cursor, or ascending from `start`. */
  private *pages<T extends { cursor: number }>(page: (cursor: number) => T[], start = Number.MAX_SAFE_INTEGER): Generator<T> {
    let cursor = start;
    for (;;) {
      const rows = page(cursor);
      yield* rows;
      if (rows.length < PAGE) return;
      cursor = rows[rows.length - 1]!.cursor;
    }
  }
}
