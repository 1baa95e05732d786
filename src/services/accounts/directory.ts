import type { Db } from "../../db/connection.ts";
import type { AccountRow } from "../../db/schema.ts";
import { rowReader } from "../../db/rows.ts";
import { accounts } from "../../db/schema.ts";
import type { ModerationService } from "./moderation.ts";

const ACCOUNT = rowReader(accounts);

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
    private db: Db,
    private moderation: ModerationService,
  ) {}

  list(viewerId: number | null, query: DirectoryQuery): AccountRow[] {
    const order = query.order === "new" ? `"accounts"."id" DESC` : `"accounts"."last_status_at" IS NULL, "accounts"."last_status_at" DESC, "accounts"."id" DESC`;
    const hidden = viewerId === null ? [] : [...this.moderation.hiddenAccounts(viewerId), viewerId];
    const blockedDomains = viewerId === null || query.local ? [] : this.moderation.blockedDomains(viewerId);
    const rows = this.db.$client
      .query<unknown[], [string, string]>(
        `SELECT ${ACCOUNT.columns} ${ACCOUNT.from}
         WHERE "accounts"."discoverable" = 1 AND "accounts"."moved_to_account_id" IS NULL AND "accounts"."suspended_at" IS NULL AND "accounts"."silenced_at" IS NULL
           ${query.local ? `AND "accounts"."domain" IS NULL` : ""}
           AND "accounts"."id" NOT IN (SELECT value FROM json_each(?1))
           AND "accounts"."id" NOT IN (SELECT "account_id" FROM "users" WHERE "approved" = 0)
           AND coalesce(lower("accounts"."domain"), '') NOT IN (SELECT value FROM json_each(?2))
         ORDER BY ${order} LIMIT ${query.limit} OFFSET ${query.offset}`,
      )
      .values(JSON.stringify(hidden), JSON.stringify(blockedDomains));
    return rows.map((r) => ACCOUNT.map(r));
  }
}
