import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { rowReader } from "../../db/rows.ts";
import { accounts } from "../../db/schema.ts";
import { notFound, validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { ListedAccount, Relationship } from "../../models/views.ts";
import { finishPage, type Page } from "../../infra/pagination.ts";
import type { FollowService } from "./follows.ts";

const ACCOUNT = rowReader(accounts);
/** Where the endorsement's id (the page's cursor) is in a row of list(): after the account's columns. */
const CURSOR = ACCOUNT.columns.split(", ").length;

/**
 * Endorsements (Mastodon's AccountPin): accounts a user features on its profile. Mastodon
 * lets one endorse only accounts one follows, and its Follow#remove_endorsements drops the
 * endorsement with the follow; forget() is that half, called on follow.removed.
 */
export class Endorsements {
  // Built once (src/db/port.ts): drizzle spends more building a query than SQLite running it.
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private follows: FollowService,
  ) {
    const { accounts, accountPins, follows: followRows } = port.tables;
    const orm = port.orm;
    const accountId = sql.placeholder("accountId");
    const targetId = sql.placeholder("targetId");
    this.q = {
      account: orm.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, targetId)).prepare(),
      pin: orm
        .select({ id: accountPins.id })
        .from(accountPins)
        .where(and(eq(accountPins.accountId, accountId), eq(accountPins.targetAccountId, targetId)))
        .prepare(),
      following: orm
        .select({ id: followRows.id })
        .from(followRows)
        .where(and(eq(followRows.accountId, accountId), eq(followRows.targetAccountId, targetId)))
        .prepare(),
      insert: orm
        .insert(accountPins)
        .values({ id: sql.placeholder("id"), accountId, targetAccountId: targetId, createdAt: sql.placeholder("createdAt") })
        // A double submit (PostgreSQL: both find no pin) ends as the pin already there does.
        .onConflictDoNothing({ target: [accountPins.accountId, accountPins.targetAccountId] })
        .prepare(),
      remove: orm.delete(accountPins).where(and(eq(accountPins.accountId, accountId), eq(accountPins.targetAccountId, targetId))).prepare(),
    };
  }

  private async requireAccount(targetId: number) {
    const [found] = await this.q.account.execute({ targetId });
    if (!found) throw notFound();
  }

  async pin(accountId: number, targetId: number): Promise<Relationship> {
    await this.requireAccount(targetId);
    await this.port.transaction(async () => {
      const [pinned] = await this.q.pin.execute({ accountId, targetId });
      if (pinned) return;
      const [following] = await this.q.following.execute({ accountId, targetId });
      if (!following) throw validationFailed("You must be already following the person you want to endorse");
      await this.q.insert.execute({ id: this.ids.next(), accountId, targetId, createdAt: this.clock.now() });
    });
    return this.follows.relationship(accountId, targetId);
  }

  async unpin(accountId: number, targetId: number): Promise<Relationship> {
    await this.requireAccount(targetId);
    await this.q.remove.execute({ accountId, targetId });
    return this.follows.relationship(accountId, targetId);
  }

  /** follow.removed's half, inside the unfollow's transaction. */
  async forget(accountId: number, targetId: number): Promise<void> {
    await this.port.run("DELETE FROM account_pins WHERE account_id = ? AND target_account_id = ?", [accountId, targetId]);
  }

  /**
   * The endorsed accounts, newest endorsement first, paged by the endorsement's id. Raw SQL read
   * by rowReader: a builder over the accounts table's columns costs several hundred microseconds
   * to build and map (see Directory), and the page's bounds vary; the port keeps each text prepared.
   */
  async list(accountId: number, page: Page): Promise<ListedAccount[]> {
    const params: number[] = [accountId];
    let bounds = "";
    const bound = (op: string, id: number | undefined) => {
      if (id === undefined) return;
      bounds += ` AND "account_pins"."id" ${op} ?`;
      params.push(id);
    };
    bound("<", page.maxId);
    bound(">", page.sinceId);
    bound(">", page.minId);
    const forward = page.minId !== undefined;
    const rows = await this.port.values(
      `SELECT ${ACCOUNT.columns}, "account_pins"."id" FROM "account_pins" INNER JOIN "accounts" ON "accounts"."id" = "account_pins"."target_account_id"
       WHERE "account_pins"."account_id" = ?${bounds} ORDER BY "account_pins"."id" ${forward ? "ASC" : "DESC"} LIMIT ${page.limit}`,
      params,
    );
    return finishPage(
      rows.map((r) => ({ account: ACCOUNT.map(r), cursor: r[CURSOR] as number })),
      forward,
    );
  }
}
