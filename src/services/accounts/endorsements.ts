import { and, eq } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accountPins, accounts, follows } from "../../db/schema.ts";
import { notFound, validationFailed } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import type { ListedAccount, Relationship } from "../../models/views.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { FollowService } from "./follows.ts";

/**
 * Endorsements (Mastodon's AccountPin): accounts a user features on its profile. Mastodon
 * lets one endorse only accounts one follows, and its Follow#remove_endorsements drops the
 * endorsement with the follow; forget() is that half, called on follow.removed.
 */
export class Endorsements {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private follows: FollowService,
  ) {}

  private requireAccount(targetId: number) {
    if (!this.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, targetId)).get()) throw notFound();
  }

  pin(accountId: number, targetId: number): Relationship {
    this.requireAccount(targetId);
    this.db.transaction((tx) => {
      const pair = and(eq(accountPins.accountId, accountId), eq(accountPins.targetAccountId, targetId));
      if (tx.select({ id: accountPins.id }).from(accountPins).where(pair).get()) return;
      const following = tx
        .select({ id: follows.id })
        .from(follows)
        .where(and(eq(follows.accountId, accountId), eq(follows.targetAccountId, targetId)))
        .get();
      if (!following) throw validationFailed("You must be already following the person you want to endorse");
      tx.insert(accountPins).values({ id: this.ids.next(), accountId, targetAccountId: targetId, createdAt: this.clock.now() }).run();
    });
    return this.follows.relationship(accountId, targetId);
  }

  unpin(accountId: number, targetId: number): Relationship {
    this.requireAccount(targetId);
    this.forget(accountId, targetId);
    return this.follows.relationship(accountId, targetId);
  }

  forget(accountId: number, targetId: number) {
    this.db
      .delete(accountPins)
      .where(and(eq(accountPins.accountId, accountId), eq(accountPins.targetAccountId, targetId)))
      .run();
  }

  /** The endorsed accounts, newest endorsement first, paged by the endorsement's id. */
  list(accountId: number, page: Page): ListedAccount[] {
    const q = pageQuery(accountPins.id, page);
    const rows = this.db
      .select({ account: accounts, cursor: accountPins.id })
      .from(accountPins)
      .innerJoin(accounts, eq(accounts.id, accountPins.targetAccountId))
      .where(and(eq(accountPins.accountId, accountId), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse);
  }
}
