import type { Statement } from "bun:sqlite";
import { and, eq, inArray, or } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accountDomainBlocks, followRequests, homeFeed, notifications } from "../../db/schema.ts";
import { unprocessable } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import { hostSql, normalizeDomain } from "../../net/domains.ts";
import type { EventBus } from "../../infra/events.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { FollowService } from "./follows.ts";

/** A blocked domain with the id of its block (the page cursor). */
export interface ListedDomainBlock {
  domain: string;
  cursor: number;
}

/**
 * Domains an account hides from itself (Mastodon's AccountDomainBlock). A rule names one
 * domain exactly, as an account's domain reads without its port. Blocking one does what
 * Mastodon's AfterBlockDomainFromAccountService does: the account stops following accounts
 * there (each told with Undo), its followers and follow requests from there are rejected
 * (each told with Reject), and the notifications they caused go. From then on, what decides
 * who sees what asks here: statuses from there stay out of its public timelines, home feed,
 * lists and public streams, and notifications from there are dropped unless it follows the
 * sender; a relationship with an account there shows `domain_blocking`; and statuses of the
 * account are hidden from accounts on the domains it blocks (Mastodon's StatusPolicy
 * author_blocking_domain?).
 */
export class AccountDomainBlocks {
  private q: {
    domains: Statement<{ domain: string }, [number]>;
    blockedAmong: Statement<{ id: number }, [number, string]>;
    hidingFrom: Statement<{ id: number }, [number, string]>;
    accountsOn: Statement<{ id: number }, [string]>;
  };
  /** Every account that has, or ever had since start-up, a domain block: a superset, so that others skip the query. */
  private withBlocks: Set<number> | null = null;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private follows: FollowService,
    private events: EventBus,
  ) {
    const sqlite = db.$client;
    this.q = {
      domains: sqlite.query("SELECT domain FROM account_domain_blocks WHERE account_id = ? ORDER BY domain"),
      blockedAmong: sqlite.query(
        `SELECT a.id AS id FROM accounts a WHERE a.id IN (SELECT value FROM json_each(?2)) AND a.domain IS NOT NULL
           AND ${hostSql("a.domain")} IN (SELECT domain FROM account_domain_blocks WHERE account_id = ?1)`,
      ),
      hidingFrom: sqlite.query(
        `SELECT b.account_id AS id FROM account_domain_blocks b
         WHERE b.account_id IN (SELECT value FROM json_each(?2)) AND b.domain = (SELECT ${hostSql("v.domain")} FROM accounts v WHERE v.id = ?1)`,
      ),
      // Read when a block is made only: a scan of the remote accounts.
      accountsOn: sqlite.query(`SELECT id FROM accounts WHERE domain IS NOT NULL AND ${hostSql("domain")} = ?`),
    };
  }

  /** Blocks a domain for an account (again: nothing more happens), with Mastodon's consequences. */
  block(accountId: number, input: string | undefined): void {
    const domain = checkedDomain(input);
    this.db.transaction((tx) => {
      tx.insert(accountDomainBlocks).values({ id: this.ids.next(), accountId, domain, createdAt: this.clock.now() }).onConflictDoNothing().run();
      this.parties().add(accountId);
      const there = this.q.accountsOn.all(domain).map((r) => r.id);
      if (there.length === 0) return;
      for (const id of there) {
        this.follows.removeFollow(accountId, id);
        const followed = this.follows.isFollowing(id, accountId);
        const requested = tx
          .delete(followRequests)
          .where(and(eq(followRequests.accountId, id), eq(followRequests.targetAccountId, accountId)))
          .returning({ id: followRequests.id })
          .all();
        if (followed) this.follows.removeFollow(id, accountId);
        if (followed || requested.length > 0) this.events.emit({ type: "follow.rejected", accountId: id, targetAccountId: accountId });
      }
      tx.delete(notifications)
        .where(and(eq(notifications.accountId, accountId), inArray(notifications.fromAccountId, there)))
        .run();
      tx.delete(homeFeed)
        .where(and(eq(homeFeed.accountId, accountId), or(inArray(homeFeed.authorId, there), inArray(homeFeed.originAuthorId, there))))
        .run();
    });
  }

  /** Lifts a block; a domain that was not blocked (or is not a domain at all) changes nothing, as in Mastodon. */
  unblock(accountId: number, input: string | undefined): void {
    const checked = normalizeDomain(input);
    if ("error" in checked) return;
    this.db
      .delete(accountDomainBlocks)
      .where(and(eq(accountDomainBlocks.accountId, accountId), eq(accountDomainBlocks.domain, checked.domain)))
      .run();
  }

  /** The account's blocked domains, newest block first (Mastodon pages them by max_id and since_id). */
  list(accountId: number, page: Page): ListedDomainBlock[] {
    const q = pageQuery(accountDomainBlocks.id, page);
    const rows = this.db
      .select({ domain: accountDomainBlocks.domain, cursor: accountDomainBlocks.id })
      .from(accountDomainBlocks)
      .where(and(eq(accountDomainBlocks.accountId, accountId), q.where))
      .orderBy(q.orderBy)
      .limit(page.limit)
      .all();
    return finishPage(rows, q.reverse);
  }

  /** The domains the account blocks (none, without a query, for most accounts). */
  domainsOf(accountId: number): string[] {
    return this.parties().has(accountId) ? this.q.domains.all(accountId).map((r) => r.domain) : [];
  }

  /** Of `targetIds`, the accounts on a domain `viewerId` blocks. */
  blockedAmong(viewerId: number, targetIds: number[]): Set<number> {
    if (targetIds.length === 0 || !this.parties().has(viewerId)) return new Set();
    return new Set(this.q.blockedAmong.all(viewerId, JSON.stringify(targetIds)).map((r) => r.id));
  }

  /** Of `authorIds`, those who block the domain of the remote account `viewerId`. */
  hidingFrom(viewerId: number, authorIds: number[]): Set<number> {
    const blockers = authorIds.filter((id) => this.parties().has(id));
    if (blockers.length === 0) return new Set();
    return new Set(this.q.hidingFrom.all(viewerId, JSON.stringify(blockers)).map((r) => r.id));
  }

  /** Another connection committed: who has domain blocks is read again. */
  forgetCached() {
    this.withBlocks = null;
  }

  private parties(): Set<number> {
    this.withBlocks ??= new Set(this.db.selectDistinct({ id: accountDomainBlocks.accountId }).from(accountDomainBlocks).all().map((r) => r.id));
    return this.withBlocks;
  }
}

/** Mastodon's AccountDomainBlock validations, as its RecordInvalid error renders them. */
function checkedDomain(input: string | undefined): string {
  const checked = normalizeDomain(input);
  if ("error" in checked) throw unprocessable(`Validation failed: Domain ${checked.error === "blank" ? "can't be blank" : "is invalid"}`);
  return checked.domain;
}
