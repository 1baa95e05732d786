import { createHash } from "node:crypto";
import type { InstanceRuleRow } from "../db/schema.ts";
import type { AdminAccountView, AdminReportView } from "../models/admin.ts";
import { roleEntity, roleOf } from "../models/roles.ts";
import { serializeAccount, type Urls } from "./account.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * REST::Admin::AccountSerializer. A remote account has no user: no e-mail, role, locale, and
 * neither confirmed nor approved. This server keeps no sign-in IPs, disabled logins or forced
 * sensitive media: those are empty and false.
 */
export function serializeAdminAccount(urls: Urls, v: AdminAccountView) {
  const { account, user } = v;
  return {
    id: String(account.id),
    username: account.username,
    domain: account.domain,
    created_at: new Date(account.createdAt).toISOString(),
    email: user?.email ?? null,
    ip: null,
    role: user ? roleEntity(roleOf(user.role)) : null,
    confirmed: user !== null,
    suspended: account.suspendedAt !== null,
    silenced: account.silencedAt !== null,
    sensitized: false,
    disabled: false,
    approved: user?.approved ?? false,
    locale: user?.locale ?? null,
    invite_request: user?.signUpReason ?? null,
    ips: [] as unknown[],
    account: serializeAccount(urls, account),
  };
}

/** REST::RuleSerializer. */
export function serializeRule(rule: InstanceRuleRow) {
  return { id: String(rule.id), text: rule.text, hint: rule.hint };
}

/**
 * REST::Admin::ReportSerializer: `statuses` are the reported statuses still here, rendered by
 * the caller as Status entities; `rules` the rules it names that still exist.
 */
export function serializeAdminReport(urls: Urls, r: AdminReportView, statuses: unknown[], rules: InstanceRuleRow[]) {
  const named = new Set(r.ruleIds ?? []);
  return {
    id: String(r.report.id),
    action_taken: r.report.actionTakenAt !== null,
    action_taken_at: iso(r.report.actionTakenAt),
    category: r.report.category,
    comment: r.report.comment,
    forwarded: r.report.forwarded,
    created_at: iso(r.report.createdAt),
    updated_at: iso(r.report.updatedAt ?? r.report.createdAt),
    account: serializeAdminAccount(urls, r.account),
    target_account: serializeAdminAccount(urls, r.target),
    assigned_account: r.assigned ? serializeAdminAccount(urls, r.assigned) : null,
    action_taken_by_account: r.actionTakenBy ? serializeAdminAccount(urls, r.actionTakenBy) : null,
    statuses,
    rules: rules.filter((rule) => named.has(rule.id)).map(serializeRule),
  };
}

/** REST::Admin::DomainBlockSerializer: every block here suspends, and keeps no comments. */
export function serializeDomainBlock(block: { id: number; domain: string; createdAt: number }) {
  return {
    id: String(block.id),
    domain: block.domain,
    digest: createHash("sha256").update(block.domain).digest("hex"),
    created_at: iso(block.createdAt),
    severity: "suspend",
    reject_media: false,
    reject_reports: false,
    private_comment: null,
    public_comment: null,
    obfuscate: false,
  };
}

/** REST::Admin::DomainAllowSerializer. */
export function serializeDomainAllow(allow: { id: number; domain: string; createdAt: number }) {
  return { id: String(allow.id), domain: allow.domain, created_at: iso(allow.createdAt) };
}
