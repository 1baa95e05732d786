import type { InviteListing, IssuedInvite } from "../../services/accounts/invites.ts";
import { buttonForm, postForm, select, textField, when } from "../forms.ts";
import { html, type Safe } from "../html.ts";
import type { PageView } from "../member-layout.ts";

/** Mastodon's invite form: its choices of uses and lifetimes (Invite's max_uses and expires_in). */
export const INVITE_USES = ["", "1", "5", "10", "25", "50", "100"];
export const INVITE_EXPIRIES: [seconds: string, text: string][] = [
  ["1800", "30 minutes"],
  ["3600", "1 hour"],
  ["21600", "6 hours"],
  ["43200", "12 hours"],
  ["86400", "1 day"],
  ["604800", "1 week"],
  ["", "Never"],
];

const STATES: Record<InviteListing["state"], string> = { usable: "Usable", expired: "Expired", used_up: "Used up", unknown: "Unknown", disabled: "Its maker cannot sign in" };

function uses(listing: InviteListing): string {
  return `${listing.invite.uses} of ${listing.invite.maxUses ?? "any number"}`;
}

function expiry(listing: InviteListing): string {
  const at = listing.invite.expiresAt;
  return at === null ? "never" : when(at);
}

/** The table of invites, each usable one with its revoke button (`revokeTo` the form's action of an id). */
function inviteTable(listings: InviteListing[], csrf: string, revokeTo: (id: number) => string, withMaker: boolean): Safe {
  const head = [...(withMaker ? ["Made by"] : []), "Note", "Uses", "Expires", "State"];
  return html`<table class="list"><caption class="visually-hidden">Invites</caption><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}<th scope="col"><span class="skip">Action</span></th></tr></thead>
<tbody>${listings.map(
    (l) => html`<tr>${withMaker ? html`<td><bdi>@${l.maker}</bdi></td>` : ""}<td>${l.invite.comment ?? ""}</td><td>${uses(l)}</td><td>${expiry(l)}</td><td>${STATES[l.state]}</td>
<td class="actions">${
      l.state === "expired"
        ? ""
        : buttonForm(revokeTo(l.invite.id), csrf, "Revoke", { kind: "secondary", describe: `Revoke the invite made ${when(l.invite.createdAt)}${l.invite.comment ? `, ${l.invite.comment}` : ""}` })
    }</td></tr>`,
  )}</tbody></table>`;
}

/** /settings/invites: a form for a new invite link and the member's invites (Mastodon's /invites). */
export function invitesPage(listings: InviteListing[], csrf: string, issued?: IssuedInvite): PageView {
  return {
    title: "Invite people",
    body: html`${
      issued
        ? html`<section aria-labelledby="new-link"><h2 id="new-link">Your new invite link</h2>
<p><strong>Copy it now: it is shown only this once</strong> (only a digest of it is kept, as of a password).</p>
<p><input type="text" readonly aria-label="The invite link" value="${issued.url}" size="60"></p></section>`
        : ""
    }
<p>An invite link lets the people you give it to sign up here, whether sign-ups are open or not, without waiting for approval.</p>
<h2>Make an invite link</h2>
${postForm("/settings/invites", csrf, [
  select(
    "max_uses",
    "Max number of uses",
    INVITE_USES.map((n) => [n, n === "" ? "No limit" : n === "1" ? "1 use" : `${n} uses`]),
    "",
  ),
  select("expires_in", "Expire after", INVITE_EXPIRIES, "604800"),
  textField("comment", "Note", { hint: "For you: whom the link is for (up to 420 characters)." }),
  html`<div><button type="submit">Make the link</button></div>`,
])}
<h2>Your invites</h2>
${listings.length === 0 ? html`<p>You have made no invites yet.</p>` : inviteTable(listings, csrf, (id) => `/settings/invites/${id}/revoke`, false)}`,
  };
}

/** /admin/invites: every member's invites, each revocable by staff (Mastodon's Admin::InvitesController). */
export function adminInvitesPage(listings: InviteListing[], csrf: string): PageView {
  return {
    title: "Invites",
    body: html`<p>The invite links members have made, newest first. Revoking one lets nobody in through it any more; accounts it let in stay. Make your own at <a href="/settings/invites">Invite people</a>.</p>
${listings.length === 0 ? html`<p>Nobody has made an invite yet.</p>` : inviteTable(listings, csrf, (id) => `/admin/invites/${id}/revoke`, true)}`,
  };
}
