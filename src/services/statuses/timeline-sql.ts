import type { DatabasePort } from "../../db/port.ts";
import type { Page } from "../../infra/pagination.ts";
import { domainBlockedSql, visibleToSql } from "./visibility.ts";

/**
 * The conditions of a raw timeline query and their parameters, in the order the text binds
 * them: the port takes positional `?`s, so a condition and its values are added together.
 * The same shape of query gives the same text, which both drivers keep prepared.
 */
export class Conditions {
  readonly terms: string[] = [];
  readonly params: unknown[] = [];

  constructor(private dialect: DatabasePort["dialect"]) {}

  add(term: string, ...params: unknown[]): this {
    this.terms.push(term);
    this.params.push(...params);
    return this;
  }

  /** `column NOT IN (...)`, nothing for an empty list. */
  notIn(column: string, ids: readonly number[]): this {
    return ids.length === 0 ? this : this.add(`${column} NOT IN (${ids.map(() => "?").join(", ")})`, ...ids);
  }

  /** The page's exclusive bounds on `column` (Mastodon's max_id, since_id, min_id). */
  page(column: string, page: Page): this {
    if (page.maxId !== undefined) this.add(`${column} < ?`, page.maxId);
    if (page.sinceId !== undefined) this.add(`${column} > ?`, page.sinceId);
    if (page.minId !== undefined) this.add(`${column} > ?`, page.minId);
    return this;
  }

  /** visibleToSql's rule for the viewer, who is bound as often as its text names them. */
  visibleTo(status: string, viewerId: number | null): this {
    if (viewerId === null) return this.add(visibleToSql(status, null));
    const parts = this.portable(visibleToSql(status, "\u0000")).split("\u0000");
    return this.add(parts.join("?"), ...parts.slice(1).map(() => viewerId));
  }

  /** Statuses of accounts on domains the viewer blocks stay out. */
  notDomainBlocked(viewerId: number, account: string): this {
    return this.add(`NOT ${this.portable(domainBlockedSql("?", account))}`, viewerId);
  }

  get where(): string {
    return this.terms.join(" AND ");
  }

  /** hostSql's instr is strpos on PostgreSQL (same arguments, same answer). */
  private portable(text: string): string {
    return this.dialect === "postgres" ? text.replaceAll("instr(", "strpos(") : text;
  }
}
