import type { AuthorizedApp } from "../../services/oauth/tokens.ts";
import type { WebSessionView } from "../../services/oauth/web-sessions.ts";
import { buttonForm, postForm, textField, when } from "../forms.ts";
import { html } from "../html.ts";
import type { PageView } from "../member-layout.ts";

const BROWSERS: [RegExp, string][] = [
  [/Edg\//, "Edge"],
  [/OPR\/|Opera/, "Opera"],
  [/Vivaldi/, "Vivaldi"],
  [/Firefox\//, "Firefox"],
  [/Chrome\/|Chromium\//, "Chrome"],
  [/Safari\//, "Safari"],
];
const PLATFORMS: [RegExp, string][] = [
  [/Android/, "Android"],
  [/iPhone|iPad|iPod/, "iOS"],
  [/Windows/, "Windows"],
  [/Mac OS X|Macintosh/, "macOS"],
  [/CrOS/, "ChromeOS"],
  [/Linux/, "Linux"],
];

/** "Firefox on Linux", as Mastodon names a session; the raw string's start when it is none of those. */
export function describeBrowser(userAgent: string): string {
  if (userAgent === "") return "Unknown browser";
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const platform = PLATFORMS.find(([re]) => re.test(userAgent))?.[1];
  if (!browser) return userAgent.length > 60 ? `${userAgent.slice(0, 59)}…` : userAgent;
  return platform ? `${browser} on ${platform}` : browser;
}

export function sessionsPage(sessions: WebSessionView[], csrf: string): PageView {
  return {
    title: "Sign-in sessions",
    body: html`<p>The browsers signed in to your account. Signing one out ends its session at once; apps are under <a href="/settings/applications">Authorised apps</a>.</p>
<table class="list">
<caption class="hint">${sessions.length === 1 ? "1 session" : `${sessions.length} sessions`}</caption>
<thead><tr><th scope="col">Browser</th><th scope="col">IP address</th><th scope="col">Signed in</th><th scope="col"><span class="skip">Action</span></th></tr></thead>
<tbody>
${sessions.map(
  (s) => html`<tr><td>${describeBrowser(s.userAgent)}${s.current ? html` <strong>(this browser)</strong>` : ""}</td><td>${s.ip ?? "unknown"}</td><td>${when(s.createdAt)}</td>
<td class="actions">${s.current ? "" : buttonForm(`/settings/sessions/${s.id}/revoke`, csrf, "Sign out", { kind: "secondary", describe: `Sign out ${describeBrowser(s.userAgent)}, signed in ${when(s.createdAt)}` })}</td></tr>
`,
)}</tbody>
</table>`,
  };
}

export function applicationsPage(apps: AuthorizedApp[], csrf: string): PageView {
  return {
    title: "Authorised apps",
    body: html`<p>The apps you have let use your account. Revoking one takes back its access at once: it is signed out and its notifications stop.</p>
${
  apps.length === 0
    ? html`<p>No app can use your account.</p>`
    : html`<table class="list">
<thead><tr><th scope="col">App</th><th scope="col">Permissions</th><th scope="col">Authorised</th><th scope="col"><span class="skip">Action</span></th></tr></thead>
<tbody>
${apps.map(
  (a) => html`<tr><td>${a.website ? html`<a href="${a.website}" rel="noopener noreferrer nofollow"><bdi>${a.name}</bdi></a>` : html`<bdi>${a.name}</bdi>`}</td><td>${a.scopes.join(", ")}</td><td>${when(a.authorizedAt)}</td>
<td class="actions">${buttonForm(`/settings/applications/${a.applicationId}/revoke`, csrf, "Revoke", { kind: "danger", describe: `Revoke ${a.name}` })}</td></tr>
`,
)}</tbody>
</table>`
}`,
  };
}

export function passwordPage(csrf: string): PageView {
  return {
    title: "Password",
    body: html`<p>After the change, every other browser signed in to your account is signed out. Apps stay signed in: revoke them under <a href="/settings/applications">Authorised apps</a> if you need to.</p>
${postForm("/settings/password", csrf, [
  textField("current_password", "Current password", { type: "password", autocomplete: "current-password", required: true }),
  textField("password", "New password", { type: "password", autocomplete: "new-password", required: true, hint: "8 to 72 characters." }),
  textField("password_confirmation", "Confirm new password", { type: "password", autocomplete: "new-password", required: true }),
  html`<div><button type="submit">Change password</button></div>`,
])}`,
  };
}
