import type { AccountRow } from "../../db/schema.ts";
import type { AdminAccountView } from "../../models/admin.ts";
import { ROLES, roleOf } from "../../models/roles.ts";
import { buttonForm, postForm, select, textField, when } from "../forms.ts";
import { html, type Safe } from "../html.ts";
import type { PageView } from "../member-layout.ts";

export const acct = (a: AccountRow) => (a.domain === null ? `@${a.username}` : `@${a.username}@${a.domain}`);

/** What state an account is in, in Mastodon's admin words. */
export function accountState(view: AdminAccountView): string {
  const a = view.account;
  if (a.domain === null && !view.user) return "Deleted";
  if (a.suspendedAt !== null) return "Suspended";
  if (view.user && !view.user.approved) return "Pending review";
  if (a.silencedAt !== null) return "Limited";
  return "Active";
}

export interface AccountFilterForm {
  origin: string;
  status: string;
  username: string;
}

const ORIGINS: [string, string][] = [
  ["local", "Local"],
  ["remote", "Remote"],
];
const STATUSES: [string, string][] = [
  ["", "All"],
  ["active", "Active"],
  ["pending", "Pending review"],
  ["silenced", "Limited"],
  ["suspended", "Suspended"],
];

/** /admin/accounts: a filter (a GET form: it changes nothing) and the accounts found. */
export function accountsPage(views: AdminAccountView[], filter: AccountFilterForm, next: string | null): PageView {
  return {
    title: "Accounts",
    body: html`<form class="filters" method="get" action="/admin/accounts" aria-label="Filter accounts">
${select("origin", "Location", ORIGINS, filter.origin)}
${select("status", "Moderation", STATUSES, filter.status)}
${textField("username", "Username starts with", { value: filter.username })}
<div><button type="submit" class="secondary">Filter</button></div>
</form>
${
  views.length === 0
    ? html`<p>No accounts match.</p>`
    : html`<table class="list"><caption class="visually-hidden">Accounts</caption>
<thead><tr><th scope="col">Account</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Joined</th></tr></thead>
<tbody>
${views.map(
  (v) => html`<tr><td><a href="/admin/accounts/${String(v.account.id)}"><bdi>${acct(v.account)}</bdi></a>${v.account.displayName ? html`<br><span class="hint">${v.account.displayName}</span>` : ""}</td>
<td>${v.user ? roleOf(v.user.role) : "-"}</td><td>${accountState(v)}</td><td>${when(v.account.createdAt)}</td></tr>
`,
)}</tbody></table>`
}
${next ? html`<nav class="pages" aria-label="More accounts"><a href="${next}">Older accounts</a></nav>` : ""}`,
  };
}

/** /admin/accounts/:id: what is known of the account, and each action the viewer's role may take on it. */
export function accountPage(
  view: AdminAccountView,
  options: { csrf: string; canManageRoles: boolean; canReset: boolean; canDelete: boolean; /** Whether a local account has two-factor sign-in on. */ twoFactor: boolean; /** Whether the viewer may turn it off (a role above the account's). */ canDisableTwoFactor: boolean },
): PageView {
  const { account: a, user } = view;
  const base = `/admin/accounts/${a.id}`;
  const { csrf } = options;
  const state = accountState(view);
  const actions: Safe[] = [];
  const deleted = state === "Deleted";
  if (user && !user.approved) {
    actions.push(buttonForm(`${base}/approve`, csrf, "Approve"), buttonForm(`${base}/reject`, csrf, "Reject", { kind: "danger" }));
  }
  if (!deleted) {
    actions.push(a.silencedAt === null ? buttonForm(`${base}/silence`, csrf, "Limit") : buttonForm(`${base}/unsilence`, csrf, "Undo limit", { kind: "secondary" }));
    actions.push(a.suspendedAt === null ? buttonForm(`${base}/suspend`, csrf, "Suspend", { kind: "danger" }) : buttonForm(`${base}/unsuspend`, csrf, "Undo suspension", { kind: "secondary" }));
  }
  if (!deleted && a.suspendedAt !== null && options.canDelete) actions.push(buttonForm(`${base}/delete`, csrf, "Delete its data", { kind: "danger" }));
  return {
    title: acct(a),
    body: html`<dl class="facts">
<dt>Display name</dt><dd>${a.displayName || "-"}</dd>
<dt>State</dt><dd>${state}${a.suspendedAt !== null ? html` since ${when(a.suspendedAt)}` : ""}</dd>
${a.silencedAt !== null ? html`<dt>Limited</dt><dd>since ${when(a.silencedAt)}</dd>` : ""}
<dt>Joined</dt><dd>${when(a.createdAt)}</dd>
${
  user
    ? html`<dt>E-mail</dt><dd>${user.email}</dd><dt>Role</dt><dd>${roleOf(user.role)}</dd><dt>Two-factor sign-in</dt><dd>${options.twoFactor ? "on" : "off"}</dd>
${user.signUpReason ? html`<dt>Reason given at sign-up</dt><dd>${user.signUpReason}</dd>` : ""}`
    : a.domain !== null
      ? html`<dt>Server</dt><dd>${a.domain}</dd><dt>Profile</dt><dd>${a.url ? html`<a href="${a.url}" rel="noopener noreferrer">${a.url}</a>` : "-"}</dd>`
      : ""
}
</dl>
<h2>Moderation</h2>
${actions.length ? html`<div class="actions">${actions}</div>` : html`<p>Nothing can be done with this account any more.</p>`}
${
  user && options.canReset
    ? html`<h2>Password</h2>${postForm(`${base}/reset_password`, csrf, [
        textField("password", "New password", { type: "password", autocomplete: "new-password", hint: "Leave it empty for a random one, shown once. Every sign-in of the account ends." }),
        html`<div><button type="submit" class="secondary">Reset password</button></div>`,
      ])}${
        options.twoFactor && options.canDisableTwoFactor
          ? html`<h2>Two-factor sign-in</h2><p class="hint" id="disable-2fa-hint">For a member who lost both the authenticator app and the recovery codes: the password alone signs them in afterwards.</p>
${buttonForm(`${base}/disable_2fa`, csrf, "Turn off two-factor sign-in", { kind: "danger" })}`
          : ""
      }`
    : ""
}
${
  user && options.canManageRoles
    ? html`<h2>Role</h2>${postForm(`${base}/role`, csrf, [
        select(
          "role",
          "Role",
          ROLES.map((r) => [r, r]),
          roleOf(user.role),
          "Moderators handle reports; admins run the server; the owner cannot be changed by anyone of lower rank.",
        ),
        html`<div><button type="submit" class="secondary">Change role</button></div>`,
      ])}`
    : ""
}
<p><a href="/admin/accounts">All accounts</a></p>`,
  };
}
