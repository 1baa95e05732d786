import { and, eq, inArray, or } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import type { DatabasePort } from "../../db/port.ts";
import { unprocessable } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import { hostSql, normalizeDomain } from "../../net/domains.ts";
import type { EventBus } from "../../infra/events.ts";
import { finishPage, type Page } from "../../infra/pagination.ts";
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
  /** Every account that has, or ever had since start-up, a domain block: a superset, so that others skip the query. */
  private withBlocks: Set<number> | null = null;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private follows: FollowService,
    private events: EventBus,
  ) {
    // hostSql's instr is strpos on PostgreSQL (same arguments, same answer).
    const portable = (text: string) => (port.dialect === "postgres" ? text.replaceAll("instr(", "strpos(") : text);
    this.texts = {
      blockedAmong: (n: number) =>
        portable(`SELECT a.id FROM accounts a WHERE a.id IN (${marks(n)}) AND a.domain IS NOT NULL
           AND ${hostSql("a.domain")} IN (SELECT domain FROM account_domain_blocks WHERE account_id = ?)`),
      hidingFrom: (n: number) =>
        portable(`SELECT b.account_id FROM account_domain_blocks b
         WHERE b.account_id IN (${marks(n)}) AND b.domain = (SELECT ${hostSql("v.domain")} FROM accounts v WHERE v.id = ?)`),
    };
  }

  /** The filters' statements by padded list size (db/prepared.ts). */
  private texts: { blockedAmong: (n: number) => string; hidingFrom: (n: number) => string };

  /** Blocks a domain for an account (again: nothing more happens), with Mastodon's consequences. */
  async block(accountId: number, input: string | undefined): Promise<void> {
    const domain = checkedDomain(input);
    const { accountDomainBlocks: rules, notifications: notes, homeFeed: feed } = this.port.tables;
    const parties = await this.partiesRead();
    await this.port.transaction(async () => {
      await this.port.orm.insert(rules).values({ id: this.ids.next(), accountId, domain, createdAt: this.clock.now() }).onConflictDoNothing();
      parties.add(accountId);
      // Read when a block is made only: the accounts there, `host` or `host:port` (portable, where hostSql is SQLite's).
      const there = (await this.port.values("SELECT id FROM accounts WHERE domain = ? OR substr(domain, 1, ?) = ?", [domain, domain.length + 1, `${domain}:`])).map((r) => Number(r[0]));
      if (there.length === 0) return;
      for (const id of there) {
        await this.follows.removeFollow(accountId, id);
        const followed = await this.follows.following(id, accountId);
        const requested = await this.port.run("DELETE FROM follow_requests WHERE account_id = ? AND target_account_id = ?", [id, accountId]);
        if (followed) await this.follows.removeFollow(id, accountId);
        if (followed || requested > 0) await this.events.emit({ type: "follow.rejected", accountId: id, targetAccountId: accountId });
      }
      await this.port.orm.delete(notes).where(and(eq(notes.accountId, accountId), inArray(notes.fromAccountId, there)));
      await this.port.orm.delete(feed).where(and(eq(feed.accountId, accountId), or(inArray(feed.authorId, there), inArray(feed.originAuthorId, there))));
    });
  }

  /** Lifts a block; a domain that was not blocked (or is not a domain at all) changes nothing, as in Mastodon. */
  async unblock(accountId: number, input: string | undefined): Promise<void> {
    const checked = normalizeDomain(input);
    if ("error" in checked) return;
    await this.port.run("DELETE FROM account_domain_blocks WHERE account_id = ? AND domain = ?", [accountId, checked.domain]);
  }

  /** The account's blocked domains, newest block first (Mastodon pages them by max_id and since_id). */
  async list(accountId: number, page: Page): Promise<ListedDomainBlock[]> {
    const where = ["account_id = ?"];
    const params: unknown[] = [accountId];
    if (page.maxId !== undefined) (where.push("id < ?"), params.push(page.maxId));
    if (page.sinceId !== undefined) (where.push("id > ?"), params.push(page.sinceId));
    if (page.minId !== undefined) (where.push("id > ?"), params.push(page.minId));
    const forward = page.minId !== undefined;
    const rows = await this.port.all<{ domain: string; cursor: number }>(
      `SELECT domain, id AS cursor FROM account_domain_blocks WHERE ${where.join(" AND ")} ORDER BY id ${forward ? "ASC" : "DESC"} LIMIT ?`,
      [...params, page.limit],
    );
    return finishPage(
      rows.map((r) => ({ domain: r.domain, cursor: Number(r.cursor) })),
      forward,
    );
  }

  /** The domains the account blocks (none, without a query, for most accounts). */
  async domainsOf(accountId: number): Promise<string[]> {
    if (!(await this.partiesRead()).has(accountId)) return [];
    return (await this.port.values("SELECT domain FROM account_domain_blocks WHERE account_id = ? ORDER BY domain", [accountId])).map((r) => r[0] as string);
  }

  /** Of `targetIds`, the accounts on a domain `viewerId` blocks. */
  async blockedAmong(viewerId: number, targetIds: number[]): Promise<Set<number>> {
    if (targetIds.length === 0 || !(await this.partiesRead()).has(viewerId)) return new Set();
    const size = paddedSize(targetIds.length);
    return new Set((await this.port.values(this.texts.blockedAmong(size), [...padded(targetIds, size), viewerId])).map((r) => r[0] as number));
  }

  /** Of `authorIds`, those who block the domain of the remote account `viewerId`. */
  async hidingFrom(viewerId: number, authorIds: number[]): Promise<Set<number>> {
    const parties = await this.partiesRead();
    const blockers = authorIds.filter((id) => parties.has(id));
    if (blockers.length === 0) return new Set();
    const size = paddedSize(blockers.length);
    return new Set((await this.port.values(this.texts.hidingFrom(size), [...padded(blockers, size), viewerId])).map((r) => r[0] as number));
  }

  /** Another connection committed: who has domain blocks is read again. */
  forgetCached() {
    this.withBlocks = null;
  }

  /** `parties` read through the port, for the converted block. */
  private async partiesRead(): Promise<Set<number>> {
    if (!this.withBlocks) {
      const ids = (await this.port.values("SELECT DISTINCT account_id FROM account_domain_blocks")).map((r) => Number(r[0]));
      this.withBlocks ??= new Set(ids);
    }
    return this.withBlocks;
  }
}

/** Mastodon's AccountDomainBlock validations, as its RecordInvalid error renders them. */
function checkedDomain(input: string | undefined): string {
  const checked = normalizeDomain(input);
  if ("error" in checked) throw unprocessable(`Validation failed: Domain ${checked.error === "blank" ? "can't be blank" : "is invalid"}`);
  return checked.domain;
}
