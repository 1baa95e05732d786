import type { StatusRow } from "../../db/schema.ts";
import type { AdminReportView } from "../../models/admin.ts";
import { buttonForm, when } from "../forms.ts";
import { html, raw } from "../html.ts";
import type { PageView } from "../member-layout.ts";
import { acct, accountState } from "./accounts.ts";

const CATEGORIES: Record<string, string> = { spam: "Spam", legal: "Legal", violation: "Rule violation", other: "Other" };

/** /admin/reports: the open reports (or the resolved ones), newest first. */
export function reportsPage(views: AdminReportView[], resolved: boolean): PageView {
  return {
    title: "Reports",
    body: html`<nav class="tabs" aria-label="Reports"><a href="/admin/reports"${resolved ? "" : html` aria-current="page"`}>Unresolved</a> <a href="/admin/reports?resolved=1"${resolved ? html` aria-current="page"` : ""}>Resolved</a></nav>
${
  views.length === 0
    ? html`<p>${resolved ? "No resolved reports." : "No unresolved reports: nothing waits."}</p>`
    : html`<table class="list"><caption class="visually-hidden">${resolved ? "Resolved reports" : "Unresolved reports"}</caption>
<thead><tr><th scope="col">Report</th><th scope="col">About</th><th scope="col">From</th><th scope="col">Category</th><th scope="col">Statuses</th><th scope="col">Made</th></tr></thead>
<tbody>
${views.map(
  (v) => html`<tr><td><a href="/admin/reports/${String(v.report.id)}">#${String(v.report.id)}</a></td><td><bdi>${acct(v.target.account)}</bdi></td><td><bdi>${acct(v.account.account)}</bdi></td>
<td>${CATEGORIES[v.report.category] ?? v.report.category}</td><td>${String(v.statusIds.length)}</td><td>${when(v.report.createdAt)}</td></tr>
`,
)}</tbody></table>`
}`,
  };
}

/** /admin/reports/:id: the report, its statuses (each deletable) and what can be done with it. */
export function reportPage(view: AdminReportView, statuses: StatusRow[], csrf: string, linkAccount: boolean): PageView {
  const r = view.report;
  const base = `/admin/reports/${r.id}`;
  const target = view.target.account;
  const open = r.actionTakenAt === null;
  return {
    title: `Report #${r.id}`,
    body: html`<dl class="facts">
<dt>Reported account</dt><dd><bdi>${acct(target)}</bdi> (${accountState(view.target)})${linkAccount && (view.target.user || target.domain !== null) ? html` <a href="/admin/accounts/${String(target.id)}">its page</a>` : ""}</dd>
<dt>Reported by</dt><dd><bdi>${acct(view.account.account)}</bdi></dd>
<dt>Category</dt><dd>${CATEGORIES[r.category] ?? r.category}</dd>
<dt>Comment</dt><dd>${r.comment || "-"}</dd>
<dt>Made</dt><dd>${when(r.createdAt)}</dd>
<dt>State</dt><dd>${open ? "Unresolved" : html`Resolved ${when(r.actionTakenAt)}${view.actionTakenBy ? html` by <bdi>${acct(view.actionTakenBy.account)}</bdi>` : ""}`}</dd>
<dt>Assigned to</dt><dd>${view.assigned ? html`<bdi>${acct(view.assigned.account)}</bdi>` : "nobody"}</dd>
</dl>
<h2>Reported statuses</h2>
${
  statuses.length === 0
    ? html`<p>${view.statusIds.length === 0 ? "The report names no statuses." : "The statuses it named are deleted."}</p>`
    : html`<ul class="reported">${statuses.map(
        (s) => html`<li><blockquote>${s.spoilerText ? html`<p><strong>${s.spoilerText}</strong></p>` : ""}${raw(s.contentHtml)}</blockquote>
<p class="hint">${s.visibility}, ${when(s.createdAt)}</p>${buttonForm(`${base}/statuses/${s.id}/delete`, csrf, "Delete this status", { kind: "danger", describe: `Delete the status of ${when(s.createdAt)}` })}</li>`,
      )}</ul>`
}
<h2>Actions</h2>
<div class="actions">
${open ? buttonForm(`${base}/resolve`, csrf, "Resolve with no action") : buttonForm(`${base}/reopen`, csrf, "Reopen", { kind: "secondary" })}
${target.silencedAt === null ? buttonForm(`${base}/silence`, csrf, "Limit the account", { describe: `Limit ${acct(target)} and resolve` }) : ""}
${target.suspendedAt === null ? buttonForm(`${base}/suspend`, csrf, "Suspend the account", { kind: "danger", describe: `Suspend ${acct(target)} and resolve` }) : ""}
${view.assigned ? buttonForm(`${base}/unassign`, csrf, "Unassign", { kind: "secondary" }) : buttonForm(`${base}/assign_to_self`, csrf, "Assign to me", { kind: "secondary" })}
</div>
<p class="hint">Limiting or suspending the account resolves every open report about it.</p>
<p><a href="/admin/reports">All reports</a></p>`,
  };
}
