import type { AccountRow, AdminActionRow, ReportRow, UserRow } from "../db/schema.ts";
import type { AccountView } from "./views.ts";

/** An account as staff see it (Mastodon's Admin::Account): a remote one has no user. */
export interface AdminAccountView {
  account: AccountView;
  user: UserRow | null;
}

/** A report as staff see it (Mastodon's Admin::Report): both accounts, who handles and who resolved it, its statuses' ids. */
export interface AdminReportView {
  report: ReportRow;
  account: AdminAccountView;
  target: AdminAccountView;
  assigned: AdminAccountView | null;
  actionTakenBy: AdminAccountView | null;
  statusIds: number[];
  ruleIds: number[] | null;
}

/** One line of the audit log with the account of who did it (none: the operator at the command line). */
export interface AuditLogView {
  entry: AdminActionRow;
  actor: AccountRow | null;
}
