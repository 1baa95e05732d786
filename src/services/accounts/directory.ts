import { and, desc, eq, isNull, notInArray, sql } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow } from "../../db/schema.ts";
import type { ModerationService } from "./moderation.ts";

export interface DirectoryQuery {
  offset: number;
  limit: number;
  /** "active": most recent status first (the default); "new": newest accounts first. */
  order: "active" | "new";
  local: boolean;
}

/**
 * The profile directory (Mastodon's Api::V1::DirectoriesController): accounts that chose to be
 * discoverable, local or known remote ones, most recently active first or newest first, paged by
 * offset; for a signed-in reader without those it blocks, mutes or is blocked by, or whose domain
 * it blocks. Sign-ups still waiting for approval are not listed (Mastodon's without_unapproved).
 */
export class Directory {
  constructor(
    private db: DatabasePort,
    private moderation: ModerationService,
  ) {}

  async list(viewerId: number | null, query: DirectoryQuery): Promise<AccountRow[]> {
    const { accounts, users } = this.db.tables;
    const hidden = viewerId === null ? [] : [...this.moderation.hiddenAccounts(viewerId), viewerId];
    const blockedDomains = viewerId === null || query.local ? [] : this.moderation.blockedDomains(viewerId);
    // Built per call: the lists of hidden accounts and domains are the reader's own.
    return this.db.orm
      .select()
      .from(accounts)
      .where(
        and(
          eq(accounts.discoverable, true),
          isNull(accounts.movedToAccountId),
          isNull(accounts.suspendedAt),
          isNull(accounts.silencedAt),
          query.local ? isNull(accounts.domain) : undefined,
          hidden.length === 0 ? undefined : notInArray(accounts.id, hidden),
          notInArray(accounts.id, this.db.orm.select({ id: users.accountId }).from(users).where(eq(users.approved, false))),
          blockedDomains.length === 0 ? undefined : notInArray(sql<string>`coalesce(lower(${accounts.domain}), '')`, blockedDomains),
        ),
      )
      .orderBy(...(query.order === "new" ? [desc(accounts.id)] : [sql`${accounts.lastStatusAt} IS NULL`, desc(accounts.lastStatusAt), desc(accounts.id)]))
      .limit(query.limit)
      .offset(query.offset);
  }
}
