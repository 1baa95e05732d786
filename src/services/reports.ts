import { asc, eq, getTableColumns, isNull, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import type { ReportRow } from "../db/schema.ts";
import { notFound, validationFailed } from "../errors.ts";
import type { IdGenerator } from "../ids.ts";
import type { ReportView } from "../models/views.ts";
import type { AccountService } from "./accounts/accounts.ts";
import type { EventBus } from "../infra/events.ts";
import type { InstanceInfo } from "./instance-info.ts";
import type { StatusReader } from "./statuses/reader.ts";

export const REPORT_CATEGORIES = ["other", "spam", "legal", "violation"] as const;
/** Report::COMMENT_SIZE_LIMIT. */
const COMMENT_LIMIT = 1000;

export interface ReportInput {
  /** Ids as given; one that cannot be an id is null (and matches nothing). */
  accountId: number | null;
  statusIds: (number | null)[];
  ruleIds: (number | null)[];
  comment?: string;
  category?: string;
  forward?: boolean;
}

/**
 * Reports to the operator (Mastodon's ReportService): of an account, and of statuses of it
 * that the reporter can see. Rules named make the category `violation`. A report of a remote
 * account asked to be forwarded goes to its server too, as Flag from the instance actor
 * (src/federation/reports.ts), once committed.

 */
export class ReportService {
  // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
  private insert;
  private byId;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private publicUrl: string,
    private accounts: AccountService,
    private reader: StatusReader,
    private rules: InstanceInfo,
    private events: EventBus,
  ) {
    const table = port.tables.reports;
    // Every column a placeholder of its own name: the row is given whole.
    const row = Object.fromEntries(Object.keys(getTableColumns(table)).map((k) => [k, sql.placeholder(k)]));
    this.insert = port.orm.insert(table).values(row as never).prepare();
    this.byId = port.orm.select().from(table).where(eq(table.id, sql.placeholder("id"))).prepare();
  }

  async create(reporterId: number, input: ReportInput): Promise<ReportView> {
    const target = input.accountId === null ? undefined : await this.accounts.get(input.accountId);
    if (!target) throw notFound();
    // AccountStatusesFilter(...).find(ids): each must be the account's and visible to the reporter.
    const statusIds: number[] = [];
    for (const id of new Set(input.statusIds)) {
      const row = id === null ? undefined : await this.reader.findRow(id);
      if (!row || row.accountId !== target.id || (await this.reader.visible([row], reporterId)).length === 0) throw notFound();
      statusIds.push(row.id);
    }
    const ruleIds = input.ruleIds.length > 0 ? [...new Set(input.ruleIds)] : null;
    const category = ruleIds ? "violation" : input.category || "other";
    const comment = input.comment ?? "";
    const errors: string[] = [];
    if ([...comment].length > COMMENT_LIMIT) errors.push(`Comment is too long (maximum is ${COMMENT_LIMIT} characters)`);
    if (!(REPORT_CATEGORIES as readonly string[]).includes(category)) errors.push("Category is not included in the list");
    // Report#validate_rule_ids: a violation names rules, every one of them this server's.
    if (category === "violation") {
      const known = new Set((await this.rules.rules()).map((r) => r.id));
      if (!ruleIds || !ruleIds.every((id) => id !== null && known.has(id))) errors.push("Rule ids does not reference valid rules");
    }
    if (errors.length) throw validationFailed(...errors);

    const id = this.ids.next();
    const report: ReportRow = {
      id,
      accountId: reporterId,
      targetAccountId: target.id,
      statusIds: JSON.stringify(statusIds),
      ruleIds: ruleIds ? JSON.stringify(ruleIds) : null,
      comment,
      category,
      // Only a remote account's server can be told (Mastodon's forward_to_origin?).
      forwarded: input.forward === true && target.domain !== null,
      uri: `${this.publicUrl}/${crypto.randomUUID()}`,
      actionTakenAt: null,
      actionTakenByAccountId: null,
      assignedAccountId: null,
      createdAt: this.clock.now(),
      updatedAt: null,
    };
    await this.port.transaction(async () => {
      await this.insert.execute(report);
      await this.events.emit({ type: "report.created", reportId: id, accountId: reporterId, targetAccountId: target.id });
    });
    return { report, target: await this.accounts.show(target), statusIds, ruleIds: ruleIds as number[] | null };
  }

  async find(id: number): Promise<ReportView | undefined> {
    const [report] = (await this.byId.execute({ id })) as ReportRow[];
    return report ? this.show(report) : undefined;
  }

  /** For the operator: unresolved ones, or all, oldest first. */
  async list(all: boolean): Promise<ReportView[]> {
    const { reports } = this.port.tables;
    const rows = await this.port.orm
      .select()
      .from(reports)
      .where(all ? undefined : isNull(reports.actionTakenAt))
      .orderBy(asc(reports.id));
    return (await Promise.all(rows.map((r) => this.show(r)))).flatMap((v) => v ?? []);
  }

  /** A report with its target as shown to staff. */
  private async show(report: ReportRow): Promise<ReportView | undefined> {
    const target = await this.accounts.get(report.targetAccountId);
    if (!target) return undefined;
    return {
      report,
      target: await this.accounts.show(target),
      statusIds: JSON.parse(report.statusIds) as number[],
      ruleIds: report.ruleIds === null ? null : (JSON.parse(report.ruleIds) as number[]),
    };
  }
}
