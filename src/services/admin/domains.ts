import { desc, eq, inArray, sql } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import type { domainAllows, domainBlocks } from "../../db/schema.ts";
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
  // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
  private q;

  constructor(
    private db: DatabasePort,
    private rules: FederationDomains,
    private log: AuditLog,
  ) {
    const { domainBlocks, domainAllows } = db.tables;
    const id = sql.placeholder("id") as unknown as number;
    const domain = sql.placeholder("domain") as unknown as string;
    this.q = {
      block: db.orm.select().from(domainBlocks).where(eq(domainBlocks.id, id)).prepare(),
      blockOf: db.orm.select().from(domainBlocks).where(eq(domainBlocks.domain, domain)).prepare(),
      allow: db.orm.select().from(domainAllows).where(eq(domainAllows.id, id)).prepare(),
      allowOf: db.orm.select().from(domainAllows).where(eq(domainAllows.domain, domain)).prepare(),
    };
  }

  async blocks(actor: StaffActor, page: Page): Promise<DomainBlockRow[]> {
    authorize(actor);
    return paged(this.db, this.db.tables.domainBlocks, page);
  }

  async block(actor: StaffActor, id: number | null): Promise<DomainBlockRow> {
    const row = found(id === null ? undefined : (await this.q.block.execute({ id }))[0]);
    authorize(actor);
    return row;
  }

  /** A new block; a domain already covered (itself or a parent domain) is refused, naming that block. */
  async createBlock(actor: StaffActor, input: { domain?: string; severity?: string }): Promise<DomainBlockRow> {
    authorize(actor);
    const domain = domainRule(input.domain);
    checkSeverity(input.severity);
    const { domainBlocks } = this.db.tables;
    const [existing] = await this.db.orm.select().from(domainBlocks).where(inArray(domainBlocks.domain, domainAndParents(domain))).orderBy(desc(domainBlocks.id)).limit(1);
    if (existing) throw new ExistingDomainBlock(existing);
    return this.db.transaction(async () => {
      await this.rules.block(domain);
      const [row] = await this.q.blockOf.execute({ domain });
      await this.log.record(actor, { action: "create", targetType: "DomainBlock", targetId: row!.id, summary: domain });
      return row!;
    });
  }

  /** PUT: what may change of a block here is its severity, which is always suspend. */
  async updateBlock(actor: StaffActor, id: number | null, input: { severity?: string }): Promise<DomainBlockRow> {
    const row = await this.block(actor, id);
    checkSeverity(input.severity);
    await this.log.record(actor, { action: "update", targetType: "DomainBlock", targetId: row.id, summary: row.domain });
    return row;
  }

  async removeBlock(actor: StaffActor, id: number | null): Promise<void> {
    const row = await this.block(actor, id);
    await this.db.transaction(async () => {
      await this.rules.unblock(row.domain);
      await this.log.record(actor, { action: "destroy", targetType: "DomainBlock", targetId: row.id, summary: row.domain });
    });
  }

  async allows(actor: StaffActor, page: Page): Promise<DomainAllowRow[]> {
    authorize(actor);
    return paged(this.db, this.db.tables.domainAllows, page);
  }

  async allow(actor: StaffActor, id: number | null): Promise<DomainAllowRow> {
    const row = found(id === null ? undefined : (await this.q.allow.execute({ id }))[0]);
    authorize(actor);
    return row;
  }

  /** Allowing a domain allowed already answers that rule, and logs nothing (DomainAllow.find_by). */
  async createAllow(actor: StaffActor, input: { domain?: string }): Promise<DomainAllowRow> {
    authorize(actor);
    const domain = domainRule(input.domain);
    const [existing] = await this.q.allowOf.execute({ domain });
    if (existing) return existing;
    return this.db.transaction(async () => {
      await this.rules.allow(domain);
      const [row] = await this.q.allowOf.execute({ domain });
      await this.log.record(actor, { action: "create", targetType: "DomainAllow", targetId: row!.id, summary: domain });
      return row!;
    });
  }

  async removeAllow(actor: StaffActor, id: number | null): Promise<void> {
    const row = await this.allow(actor, id);
    await this.db.transaction(async () => {
      await this.rules.disallow(row.domain);
      await this.log.record(actor, { action: "destroy", targetType: "DomainAllow", targetId: row.id, summary: row.domain });
    });
  }
}

function checkSeverity(severity: string | undefined): void {
  if (severity === undefined || severity === "" || severity === SEVERITY) return;
  if (severity === "silence" || severity === "noop") throw unprocessable(`Validation failed: Severity ${severity} is not supported here: a domain block suspends the domain`);
  throw validationFailed("Severity is not included in the list");
}

async function paged<T extends typeof domainBlocks | typeof domainAllows>(db: DatabasePort, table: T, page: Page) {
  const q = pageQuery(table.id, page);
  const rows = await db.orm.select().from(table as typeof domainBlocks).where(q.where).orderBy(q.orderBy).limit(page.limit);
  return finishPage(rows, q.reverse);
}

function found<T>(row: T | undefined): T {
  if (!row) throw notFound();
  return row;
}

function authorize(actor: StaffActor): void {
  if (actor.kind === "staff" && !can(actor.role, "manage_federation")) throw forbidden();
}
