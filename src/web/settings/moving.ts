import { buttonForm, checkbox, postForm, textField, when } from "../forms.ts";
import { html } from "../html.ts";
import type { PageView } from "../member-layout.ts";

/** Mastodon's /settings/aliases ("Moving from a different account"): the accounts this one comes from. */
export function aliasesPage(aliases: string[], self: string, csrf: string): PageView {
  return {
    title: "Account aliases",
    body: html`<p>To move from another account to this one, name the old account here first: its server then believes the move. Naming an account here moves nothing by itself.</p>
<p class="hint">This account is <code>${self}</code>.</p>
<h2>Aliases</h2>
${
  aliases.length === 0
    ? html`<p>No aliases yet.</p>`
    : html`<table class="list"><thead><tr><th scope="col">Old account</th><th scope="col"><span class="skip">Action</span></th></tr></thead><tbody>
${aliases.map((uri) => html`<tr><td><code>${uri}</code></td><td class="actions">${buttonForm("/settings/aliases/remove", csrf, "Remove", { fields: { alias: uri }, kind: "secondary", describe: `Remove alias ${uri}` })}</td></tr>
`)}</tbody></table>`
}
<h2>Add an alias</h2>
${postForm("/settings/aliases", csrf, [
  textField("alias", "Handle or address of the old account", { required: true, hint: "For example @you@old.example or https://old.example/users/you." }),
  html`<div><button type="submit">Add alias</button></div>`,
])}`,
  };
}

export interface MoveState {
  /** The account this one points to, by handle, when it moved or redirects. */
  movedTo: string | null;
  movedAt: number | null;
  /** When it may move to another account again (Mastodon's 30 days), if not yet. */
  cooldownUntil: number | null;
  self: string;
}

/** Mastodon's /settings/migration (and its redirect): move followers to another account, or only point the profile there. */
export function migrationPage(state: MoveState, csrf: string): PageView {
  return {
    title: "Move to another account",
    body: html`${
      state.movedTo
        ? html`<p class="notice" role="status">Your account points to <strong><bdi>${state.movedTo}</bdi></strong>${state.movedAt ? html`; it moved on ${when(state.movedAt)}` : ""}. It cannot post while it does.</p>
${buttonForm("/settings/migration/cancel", csrf, "Cancel the redirect", { kind: "secondary" })}`
        : ""
    }
<p>Moving sends your followers to the new account and points this profile there. First add this account (<code>${state.self}</code>) as an alias of the new one, on its server.</p>
<ul>
<li>Your posts and other data stay here: export them first (under <a href="/settings/export">Export</a>).</li>
<li>This account can no longer post once it has moved.</li>
<li>After a move, you can move to yet another account only 30 days later.${state.cooldownUntil ? html` <strong>That is after ${when(state.cooldownUntil)}.</strong>` : ""}</li>
</ul>
${postForm("/settings/migration", csrf, [
  textField("acct", "Handle or address of the new account", { required: true, hint: "For example @you@new.example." }),
  checkbox("redirect_only", "Only redirect: point the profile there, move no followers", false, "The new account need not name this one, and there is no 30-day wait; you can cancel a redirect."),
  textField("current_password", "Current password", { type: "password", autocomplete: "current-password", required: true }),
  html`<div><button type="submit" class="danger">Move</button></div>`,
])}`,
  };
}
