import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AdminActionRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { finishPage, pageQuery, type Page } from "../../infra/pagination.ts";
import type { Role } from "../../models/roles.ts";

/**
 * Who does a staff action: a signed-in member of staff with their role, or the operator at
 * the command line, who may do anything (as tootctl may) and is logged without an account.
 */
export type StaffActor = { kind: "staff"; accountId: number; role: Role } | { kind: "operator" };

export const OPERATOR: StaffActor = { kind: "operator" };

/** What an action was done to, as Mastodon's Admin::ActionLog names it (target_type). */
export type TargetType = "Account" | "User" | "Report" | "DomainBlock" | "DomainAllow" | "Status" | "Relay" | "CustomEmoji" | "Rule" | "Announcement" | "Instance" | "Invite";

export interface AuditEntry {
  action: string;
  targetType: TargetType;
  targetId: number | string | null;
  /** The target as it was named then (an acct, a domain, a report's number): it may be gone later. */
  summary: string;
}

/**
 * The audit log (Mastodon's Admin::ActionLog): every staff action is written in the transaction
 * of the action itself, so there is no action without its line and no line without its action.
 */
export class AuditLog {
  // Built once: drizzle spends more building a query than SQLite running it (docs/architecture.md).
  private insert;

  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
  ) {
    const table = db.tables.adminActions;
    // Every column a placeholder of its own name: the row is given whole.
    const row = Object.fromEntries(Object.keys(getTableColumns(table)).map((k) => [k, sql.placeholder(k)]));
    this.insert = db.orm.insert(table).values(row as never).prepare();
  }

  async record(actor: StaffActor, entry: AuditEntry): Promise<AdminActionRow> {
    const row: AdminActionRow = {
      id: this.ids.next(),
      accountId: actor.kind === "staff" ? actor.accountId : null,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId === null ? null : String(entry.targetId),
      summary: entry.summary,
      createdAt: this.clock.now(),
    };
    await this.insert.execute(row);
    return row;
  }

  /** Newest first, optionally by one member of staff or of one action. */
  async list(page: Page, filter: { accountId?: number; action?: string; targetType?: string; targetId?: string } = {}): Promise<AdminActionRow[]> {
    const { adminActions } = this.db.tables;
    const q = pageQuery(adminActions.id, page);
    const conditions: (SQL | undefined)[] = [q.where];
    if (filter.accountId !== undefined) conditions.push(eq(adminActions.accountId, filter.accountId));
    if (filter.action !== undefined) conditions.push(eq(adminActions.action, filter.action));
    if (filter.targetType !== undefined) conditions.push(eq(adminActions.targetType, filter.targetType));
    if (filter.targetId !== undefined) conditions.push(eq(adminActions.targetId, filter.targetId));
    const rows = await this.db.orm
      .select()
      .from(adminActions)
      .where(and(...conditions))
      .orderBy(q.orderBy)
      .limit(page.limit);
    return finishPage(rows, q.reverse);
  }
}
