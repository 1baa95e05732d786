import { serializeAccount, type Urls } from "./account.ts";
import type { ReportView } from "../models/views.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** REST::ReportSerializer. */
export function serializeReport(urls: Urls, r: ReportView) {
  return {
    id: String(r.report.id),
    action_taken: r.report.actionTakenAt !== null,
    action_taken_at: iso(r.report.actionTakenAt),
    category: r.report.category,
    comment: r.report.comment,
    forwarded: r.report.forwarded,
    created_at: iso(r.report.createdAt),
    status_ids: r.statusIds.map(String),
    rule_ids: r.ruleIds === null ? null : r.ruleIds.map(String),
    target_account: serializeAccount(urls, r.target),
  };
}
