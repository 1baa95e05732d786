import { and, eq, isNotNull, isNull, sql, type SQL } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow, ReportRow } from "../../db/schema.ts";
import { forbidden, notFound, validationFailed } from "../../errors.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { AdminAccountView, AdminReportView } from "../../models/admin.ts";
import type { AccountService } from "../accounts/accounts.ts";
import type { InstanceInfo } from "../instance-info.ts";
import { REPORT_CATEGORIES } from "../reports.ts";
import type { RemovalService } from "../statuses/removal.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { AuditLog, StaffActor } from "./audit-log.ts";
import { can } from "../../models/roles.ts";

export interface ReportFilter {
  /** Resolved ones instead of open ones (ReportFilter's `resolved`). */
  resolved?: boolean;
  accountId?: number | null;
  targetAccountId?: number | null;
}

/**
 * Reports as staff handle them (Mastodon's Admin::ReportsController and ReportPolicy: roles
 * that manage reports): read, assigned, resolved and reopened, their category and rules
 * corrected, a reported status deleted. Each change is in the audit log.
 */
export class AdminReports {
  // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
  private q;

  constructor(
    private port: DatabasePort,
    private clock: Clock,
    private accounts: AccountService,
    private reader: StatusReader,
    private removal: RemovalService,
    private rules: InstanceInfo,
    private log: AuditLog,
  ) {
    const t = port.tables.reports;
    const p = (name: string) => sql.placeholder(name) as unknown as number;
    this.q = {
      row: port.orm.select().from(t).where(eq(t.id, p("id"))).prepare(),
      resolve: port.orm
        .update(t)
        .set({ actionTakenAt: p("now"), actionTakenByAccountId: p("by"), updatedAt: p("now") })
        .where(eq(t.id, p("id")))
        .prepare(),
      openAbout: port.orm
        .select({ id: t.id })
        .from(t)
        .where(and(eq(t.targetAccountId, p("accountId")), isNull(t.actionTakenAt)))
        .prepare(),
    };
  }

  async list(actor: StaffActor, filter: ReportFilter, page: Page): Promise<AdminReportView[]> {
    authorize(actor);
    const t = this.port.tables.reports;
    const q = pageQuery(t.id, page);
    const conditions: (SQL | undefined)[] = [q.where, filter.resolved ? isNotNull(t.actionTakenAt) : isNull(t.actionTakenAt)];
    if (filter.accountId !== undefined) conditions.push(filter.accountId === null ? undefined : eq(t.accountId, filter.accountId));
    if (filter.targetAccountId !== undefined) conditions.push(filter.targetAccountId === null ? undefined : eq(t.targetAccountId, filter.targetAccountId));
    const rows = await this.port.orm
      .select()
      .from(t)
      .where(and(...conditions))
      .orderBy(q.orderBy)
      .limit(page.limit);
    const views = await Promise.all(finishPage(rows, q.reverse).map((r) => this.view(r)));
    return views.flatMap((v) => v ?? []);
  }

  async get(actor: StaffActor, id: number | null): Promise<AdminReportView> {
    const report = await this.found(id);
    authorize(actor);
    return this.viewOrNotFound(report);
  }

  async resolve(actor: StaffActor, id: number | null): Promise<AdminReportView> {
    const report = await this.found(id);
    authorize(actor);
    const now = this.clock.now();
    await this.port.transaction(() => this.resolveWithin(actor, report.id, now));
    return this.viewOrNotFound(await this.found(report.id));
  }

  /** The report with this id, or nothing (the command line's check before it resolves one). */
  async find(id: number): Promise<ReportRow | undefined> {
    return (await this.q.row.execute({ id }))[0];
  }

  async reopen(actor: StaffActor, id: number | null): Promise<AdminReportView> {
    return this.change(actor, id, "reopen", { actionTakenAt: null, actionTakenByAccountId: null });
  }

  async assignToSelf(actor: StaffActor, id: number | null): Promise<AdminReportView> {
    // The operator at the command line is nobody to assign to.
    if (actor.kind !== "staff") throw forbidden();
    return this.change(actor, id, "assigned_to_self", { assignedAccountId: actor.accountId });
  }

  async unassign(actor: StaffActor, id: number | null): Promise<AdminReportView> {
    return this.change(actor, id, "unassigned", { assignedAccountId: null });
  }

  /** PUT /api/v1/admin/reports/:id: its category and the rules it names, as Report validates them. */
  async update(actor: StaffActor, id: number | null, input: { category?: string; ruleIds?: (number | null)[] }): Promise<AdminReportView> {
    const report = await this.found(id);
    authorize(actor);
    const category = input.category ?? report.category;
    const ruleIds = input.ruleIds === undefined ? (report.ruleIds === null ? null : (JSON.parse(report.ruleIds) as number[])) : [...new Set(input.ruleIds)];
    const errors: string[] = [];
    if (!(REPORT_CATEGORIES as readonly string[]).includes(category)) errors.push("Category is not included in the list");
    if (category === "violation") {
      const known = new Set((await this.rules.rules()).map((r) => r.id));
      if (!ruleIds || ruleIds.length === 0 || !ruleIds.every((r) => r !== null && known.has(r))) errors.push("Rule ids does not reference valid rules");
    }
    if (errors.length) throw validationFailed(...errors);
    return this.change(actor, report.id, "update", { category, ruleIds: ruleIds && ruleIds.length ? JSON.stringify(ruleIds) : null });
  }

  /** Deletes one of a report's statuses (the admin pages' "delete the status"), as its author's deletion would. */
  async removeStatus(actor: StaffActor, reportId: number | null, statusId: number | null): Promise<void> {
    const report = await this.found(reportId);
    authorize(actor);
    const statusIds = JSON.parse(report.statusIds) as number[];
    const status = statusId === null || !statusIds.includes(statusId) ? undefined : await this.reader.findRow(statusId);
    if (!status) throw notFound();
    const author = await this.accounts.get(status.accountId);
    await this.port.transaction(async () => {
      await this.log.record(actor, { action: "destroy", targetType: "Status", targetId: status.id, summary: `${author ? acct(author) : `#${status.accountId}`}: ${status.text.slice(0, 80)}` });
      await this.removal.remove(status);
    });
  }

  // ── For the account actions (AdminAccounts), which resolve reports as part of their own write.

  /** Open reports about an account, which an action on it resolves. */
  async openAbout(accountId: number): Promise<number[]> {
    return (await this.q.openAbout.execute({ accountId })).map((r) => r.id);
  }

  /** Report#resolve! with its audit line, inside the caller's transaction. */
  async resolveWithin(actor: StaffActor, reportId: number, now: number): Promise<void> {
    await this.q.resolve.execute({ id: reportId, now, by: actor.kind === "staff" ? actor.accountId : null });
    await this.log.record(actor, { action: "resolve", targetType: "Report", targetId: reportId, summary: `#${reportId}` });
  }

  private async change(actor: StaffActor, id: number | null, action: string, values: Partial<ReportRow>): Promise<AdminReportView> {
    const report = await this.found(id);
    authorize(actor);
    const t = this.port.tables.reports;
    await this.port.transaction(async () => {
      await this.port.orm
        .update(t)
        .set({ ...values, updatedAt: this.clock.now() })
        .where(eq(t.id, report.id));
      await this.log.record(actor, { action, targetType: "Report", targetId: report.id, summary: `#${report.id}` });
    });
    return this.viewOrNotFound(await this.found(report.id));
  }

  private async found(id: number | null): Promise<ReportRow> {
    const report = id === null ? undefined : await this.find(id);
    if (!report) throw notFound();
    return report;
  }

  private async viewOrNotFound(report: ReportRow): Promise<AdminReportView> {
    const view = await this.view(report);
    if (!view) throw notFound();
    return view;
  }

  private async view(report: ReportRow): Promise<AdminReportView | undefined> {
    const [account, target, assigned, actionTakenBy] = await Promise.all([
      this.adminView(report.accountId),
      this.adminView(report.targetAccountId),
      report.assignedAccountId === null ? undefined : this.adminView(report.assignedAccountId),
      report.actionTakenByAccountId === null ? undefined : this.adminView(report.actionTakenByAccountId),
    ]);
    if (!account || !target) return undefined;
    return {
      report,
      account,
      target,
      assigned: assigned ?? null,
      actionTakenBy: actionTakenBy ?? null,
      statusIds: JSON.parse(report.statusIds) as number[],
      ruleIds: report.ruleIds === null ? null : (JSON.parse(report.ruleIds) as number[]),
    };
  }

  private async adminView(id: number): Promise<AdminAccountView | undefined> {
    const account = await this.accounts.get(id);
    if (!account) return undefined;
    const [shown, user] = await Promise.all([this.accounts.show(account), account.domain === null ? this.accounts.getUser(id) : undefined]);
    return { account: shown, user: user ?? null };
  }
}

function authorize(actor: StaffActor): void {
  if (actor.kind === "staff" && !can(actor.role, "manage_reports")) throw forbidden();
}

function acct(account: AccountRow): string {
  return account.domain === null ? account.username : `${account.username}@${account.domain}`;
}
