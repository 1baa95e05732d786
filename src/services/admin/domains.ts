import { desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/connection.ts";
import { domainAllows, domainBlocks } from "../../db/schema.ts";
import { forbidden, notFound, unprocessable, validationFailed } from "../../errors.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import { domainAndParents } from "../../net/domains.ts";
import { domainRule, type FederationDomains } from "../remote/domains.ts";
import type { AuditLog, StaffActor } from "./audit-log.ts";
import { can } from "../../models/roles.ts";

export type DomainBlockRow = typeof domainBlocks.$inferSelect;
export type DomainAllowRow = typeof domainAllows.$inferSelect;

/** The one severity this server's domain blocks have: nothing is taken from, sent to or fetched from the domain. */
const SEVERITY = "suspend";

/** Refused with Mastodon's ExistingDomainBlockErrorSerializer: the block already in force, for the caller to render. */
export class ExistingDomainBlock extends Error {
  constructor(public block: DomainBlockRow) {
    super(`You have already imposed stricter limits on ${block.domain}.`);
  }
}

/**
 * Domain blocks and allows as staff manage them through the admin API and pages (Mastodon's
 * Admin::DomainBlocksController and DomainAllowsController: roles that manage federation), over
 * the rules federation enforces (FederationDomains): blocking removes the domain's accounts
 * here, and every change is in the audit log.
 */
export class AdminDomains {
  constructor(
    private db: Db,
    private rules: FederationDomains,
    private log: AuditLog,
  ) {}

  blocks(actor: StaffActor, page: Page): DomainBlockRow[] {
    authorize(actor);
    return paged(this.db, domainBlocks, page);
  }

  block(actor: StaffActor, id: number | null): DomainBlockRow {
    const row = found(id === null ? undefined : this.db.select().from(domainBlocks).where(eq(domainBlocks.id, id)).get());
    authorize(actor);
    return row;
  }

  /** A new block; a domain already covered (itself or a parent domain) is refused, naming that block. */
  createBlock(actor: StaffActor, input: { domain?: string; severity?: string }): DomainBlockRow {
    authorize(actor);
    const domain = domainRule(input.domain);
    checkSeverity(input.severity);
    const existing = this.db.select().from(domainBlocks).where(inArray(domainBlocks.domain, domainAndParents(domain))).orderBy(desc(domainBlocks.id)).get();
    if (existing) throw new ExistingDomainBlock(existing);
    let row: DomainBlockRow | undefined;
    this.db.transaction(() => {
      this.rules.block(domain);
      row = this.db.select().from(domainBlocks).where(eq(domainBlocks.domain, domain)).get()!;
      this.log.record(actor, { action: "create", targetType: "DomainBlock", targetId: row.id, summary: domain });
    });
    return row!;
  }

  /** PUT: what may change of a block here is its severity, which is always suspend. */
  updateBlock(actor: StaffActor, id: number | null, input: { severity?: string }): DomainBlockRow {
    const row = this.block(actor, id);
    checkSeverity(input.severity);
    this.log.record(actor, { action: "update", targetType: "DomainBlock", targetId: row.id, summary: row.domain });
    return row;
  }

  removeBlock(actor: StaffActor, id: number | null): void {
    const row = this.block(actor, id);
    this.db.transaction(() => {
      this.rules.unblock(row.domain);
      this.log.record(actor, { action: "destroy", targetType: "DomainBlock", targetId: row.id, summary: row.domain });
    });
  }

  allows(actor: StaffActor, page: Page): DomainAllowRow[] {
    authorize(actor);
    return paged(this.db, domainAllows, page);
  }

  allow(actor: StaffActor, id: number | null): DomainAllowRow {
    const row = found(id === null ? undefined : this.db.select().from(domainAllows).where(eq(domainAllows.id, id)).get());
    authorize(actor);
    return row;
  }

  /** Allowing a domain allowed already answers that rule, and logs nothing (DomainAllow.find_by). */
  createAllow(actor: StaffActor, input: { domain?: string }): DomainAllowRow {
    authorize(actor);
    const domain = domainRule(input.domain);
    let row = this.db.select().from(domainAllows).where(eq(domainAllows.domain, domain)).get();
    if (row) return row;
    this.db.transaction(() => {
      this.rules.allow(domain);
      row = this.db.select().from(domainAllows).where(eq(domainAllows.domain, domain)).get()!;
      this.log.record(actor, { action: "create", targetType: "DomainAllow", targetId: row.id, summary: domain });
    });
    return row!;
  }

  removeAllow(actor: StaffActor, id: number | null): void {
    const row = this.allow(actor, id);
    this.db.transaction(() => {
      this.rules.disallow(row.domain);
      this.log.record(actor, { action: "destroy", targetType: "DomainAllow", targetId: row.id, summary: row.domain });
    });
  }
}

function checkSeverity(severity: string | undefined): void {
  if (severity === undefined || severity === "" || severity === SEVERITY) return;
  if (severity === "silence" || severity === "noop") throw unprocessable(`Validation failed: Severity ${severity} is not supported here: a domain block suspends the domain`);
  throw validationFailed("Severity is not included in the list");
}

function paged<T extends typeof domainBlocks | typeof domainAllows>(db: Db, table: T, page: Page) {
  const q = pageQuery(table.id, page);
  const rows = db.select().from(table as typeof domainBlocks).where(q.where).orderBy(q.orderBy).limit(page.limit).all();
  return finishPage(rows, q.reverse);
}

function found<T>(row: T | undefined): T {
  if (!row) throw notFound();
  return row;
}

function authorize(actor: StaffActor): void {
  if (actor.kind === "staff" && !can(actor.role, "manage_federation")) throw forbidden();
}
