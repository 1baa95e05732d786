import type { AnnouncementRow, CustomEmojiRow, InstanceRuleRow } from "../../db/schema.ts";
import type { AuditLogView } from "../../models/admin.ts";
import type { RelayHealth } from "../../models/federation-health.ts";
import { buttonForm, postForm, select, textField, when } from "../forms.ts";
import { html, type Safe } from "../html.ts";
import type { PageView } from "../member-layout.ts";

interface DomainRule {
  id: number;
  domain: string;
  createdAt: number;
}

const table = (caption: string, head: string[], rows: Safe[]) =>
  html`<table class="list"><caption class="visually-hidden">${caption}</caption><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table>`;

/** /admin/domain_blocks and /admin/domain_allows: the rules, each removable, and a form for a new one. */
export function domainsPage(kind: "blocks" | "allows", rules: DomainRule[], csrf: string, whitelistMode: boolean): PageView {
  const block = kind === "blocks";
  const path = block ? "/admin/domain_blocks" : "/admin/domain_allows";
  return {
    title: block ? "Domain blocks" : "Domain allows",
    body: html`<p>${
      block
        ? "Nothing is taken from, sent to or fetched from a blocked domain (or its subdomains), and its accounts here are removed."
        : whitelistMode
          ? "WHITELIST_MODE is on: this server federates with these domains only."
          : "WHITELIST_MODE is off: these allows take effect once it is turned on."
    }</p>
${postForm(path, csrf, [textField("domain", "Domain", { required: true, hint: block ? "example.com blocks its subdomains too." : undefined }), html`<div><button type="submit">${block ? "Block domain" : "Allow domain"}</button></div>`])}
${
  rules.length === 0
    ? html`<p>${block ? "No domain is blocked." : "No domain is allowed."}</p>`
    : table(
        block ? "Domain blocks" : "Domain allows",
        ["Domain", "Since", ""],
        rules.map(
          (r) =>
            html`<tr><td>${r.domain}</td><td>${when(r.createdAt)}</td><td class="actions">${buttonForm(`${path}/${r.id}/delete`, csrf, block ? "Unblock" : "Remove", { kind: "secondary", describe: `${block ? "Unblock" : "Remove"} ${r.domain}` })}</td></tr>`,
        ),
      )
}`,
  };
}

/** /admin/relays: Mastodon's admin/relays, with the LitePub kind beside it. */
export function relaysPage(relays: RelayHealth[], csrf: string): PageView {
  return {
    title: "Relays",
    body: html`<p>A relay passes public posts between the servers subscribed to it: they fill the federated timeline. It stays pending until it accepts.</p>
${postForm("/admin/relays", csrf, [
  textField("url", "Relay URL", { type: "url", required: true, hint: "A Mastodon relay's inbox (https://relay.example/inbox) or a LitePub relay's actor (https://relay.example/actor)." }),
  select(
    "kind",
    "Kind",
    [
      ["", "Find out"],
      ["mastodon", "Mastodon (inbox)"],
      ["litepub", "LitePub (actor)"],
    ],
    "",
  ),
  html`<div><button type="submit">Add relay</button></div>`,
])}
${
  relays.length === 0
    ? html`<p>No relays.</p>`
    : table(
        "Relays",
        ["Relay", "Kind", "State", "Statuses brought", "Deliveries", ""],
        relays.map(
          ({ relay: r, failing }) =>
            html`<tr><td>${r.url}</td><td>${r.kind}</td><td>${r.state} since ${when(r.stateChangedAt)}</td><td>${String(r.receivedCount)}${r.lastActivityAt ? html`, the last ${when(r.lastActivityAt)}` : ""}</td>
<td>${failing ? `failing: ${failing.failures} failed attempt(s), the last ${when(failing.lastAt)}: ${failing.lastError}` : "ok"}</td>
<td class="actions">${buttonForm("/admin/relays/delete", csrf, "Remove", { kind: "secondary", fields: { url: r.url }, describe: `Remove ${r.url}` })}</td></tr>`,
        ),
      )
}`,
  };
}

/** /admin/custom_emojis: upload (a multipart form, as the CLI's `emoji add` checks it) and remove. */
export function emojisPage(emojis: { row: CustomEmojiRow; url: string }[], csrf: string): PageView {
  return {
    title: "Custom emojis",
    body: html`${postForm(
      "/admin/custom_emojis",
      csrf,
      [
        textField("shortcode", "Shortcode", { required: true, hint: "Letters, digits and underscores, at least 2: used as :shortcode:." }),
        html`<div class="field"><label for="f-image">Image</label><p class="hint" id="f-image-hint">PNG, GIF or WebP, under 256 KB.</p><input type="file" id="f-image" name="image" accept="image/png,image/gif,image/webp" required aria-describedby="f-image-hint"></div>`,
        textField("category", "Category", { hint: "Optional: groups it in the apps' pickers." }),
        html`<div><button type="submit">Upload</button></div>`,
      ],
      { multipart: true, label: "Upload a custom emoji" },
    )}
${
  emojis.length === 0
    ? html`<p>No custom emojis yet.</p>`
    : table(
        "Custom emojis",
        ["Emoji", "Shortcode", "Category", ""],
        emojis.map(
          ({ row, url }) =>
            html`<tr><td><img src="${url}" alt=":${row.shortcode}:" width="32" height="32"></td><td>:${row.shortcode}:</td><td>${row.category ?? "-"}</td>
<td class="actions">${buttonForm("/admin/custom_emojis/delete", csrf, "Remove", { kind: "secondary", fields: { shortcode: row.shortcode }, describe: `Remove :${row.shortcode}:` })}</td></tr>`,
        ),
      )
}`,
  };
}

/** /admin/rules: the server's rules, in order. */
export function rulesPage(rules: InstanceRuleRow[], csrf: string): PageView {
  return {
    title: "Server rules",
    body: html`${postForm("/admin/rules", csrf, [
      textField("text", "Rule", { required: true }),
      textField("hint", "Explanation", { hint: "Optional: shown under the rule." }),
      html`<div><button type="submit">Add rule</button></div>`,
    ])}
${
  rules.length === 0
    ? html`<p>No rules yet.</p>`
    : html`<ol class="rules">${rules.map(
        (r) => html`<li><strong>${r.text}</strong>${r.hint ? html`<br><span class="hint">${r.hint}</span>` : ""} ${buttonForm(`/admin/rules/${r.id}/delete`, csrf, "Remove", { kind: "secondary", describe: `Remove the rule ${r.text.slice(0, 40)}` })}</li>`,
      )}</ol>`
}`,
  };
}

/** /admin/announcements: shown to every user in their apps until their end. */
export function announcementsPage(rows: AnnouncementRow[], csrf: string): PageView {
  return {
    title: "Announcements",
    body: html`${postForm("/admin/announcements", csrf, [
      html`<div class="field"><label for="f-text">Announcement</label><textarea id="f-text" name="text" rows="4" required></textarea></div>`,
      textField("starts_at", "Starts", { hint: "Optional, with its end: 2026-12-01T09:00Z. Without them it shows until removed." }),
      textField("ends_at", "Ends"),
      html`<div><button type="submit">Publish</button></div>`,
    ])}
${
  rows.length === 0
    ? html`<p>No announcements.</p>`
    : table(
        "Announcements",
        ["Text", "Published", "Shown", ""],
        rows.map(
          (a) =>
            html`<tr><td>${a.text}</td><td>${when(a.publishedAt)}</td><td>${a.startsAt !== null ? `${when(a.startsAt)} to ${when(a.endsAt)}` : "until removed"}</td>
<td class="actions">${buttonForm(`/admin/announcements/${a.id}/delete`, csrf, "Remove", { kind: "secondary", describe: `Remove the announcement of ${when(a.publishedAt)}` })}</td></tr>`,
        ),
      )
}`,
  };
}

const REGISTRATIONS: Record<string, string> = {
  open: "Anyone can sign up.",
  approval: "Anyone can sign up; staff approve each account before it can sign in.",
  closed: "Nobody can sign up (invite links still let their holders in).",
};

/** What /admin/settings shows of who may sign up: the mode now, whether an admin saved it, and REGISTRATIONS. */
export interface RegistrationsView {
  mode: "open" | "approval" | "closed";
  saved: boolean;
  setting: "open" | "approval" | "closed";
}

/** /admin/settings: the about page's text, and how people join (REGISTRATIONS until a mode is saved here). */
export function settingsPage(description: string, registrations: RegistrationsView, csrf: string): PageView {
  const options: [string, string][] = [
    ["setting", `As the REGISTRATIONS setting says (${registrations.setting})`],
    ["open", "Open: anyone can sign up"],
    ["approval", "Approval: staff approve each sign-up"],
    ["closed", "Closed: nobody can sign up"],
  ];
  return {
    title: "Server settings",
    body: html`<h2>About this server</h2>
${postForm("/admin/settings", csrf, [
  html`<div class="field"><label for="f-description">Extended description</label><p class="hint" id="f-description-hint">The about page's text: who runs the server and for whom. Paragraphs and links are kept.</p><textarea id="f-description" name="extended_description" rows="8" aria-describedby="f-description-hint">${description}</textarea></div>`,
  html`<div><button type="submit">Save changes</button></div>`,
])}
<h2>Registrations</h2>
<p>Mode: <strong>${registrations.mode}</strong>. ${REGISTRATIONS[registrations.mode] ?? ""}</p>
${postForm(
  "/admin/settings/registrations",
  csrf,
  [
    select(
      "registrations_mode",
      "Who can sign up",
      options,
      registrations.saved ? registrations.mode : "setting",
      "A mode chosen here wins over the REGISTRATIONS setting, restarts included, until it is set back to follow REGISTRATIONS.",
    ),
    html`<div><button type="submit">Save the mode</button></div>`,
  ],
  { label: "Registrations mode" },
)}`,
  };
}

/** /admin/action_logs: what staff did, newest first (Mastodon's audit log). */
export function auditLogPage(entries: AuditLogView[], next: string | null): PageView {
  return {
    title: "Audit log",
    body: html`${
      entries.length === 0
        ? html`<p>Nothing has been done yet.</p>`
        : table(
            "Audit log",
            ["When", "Who", "Action", "On"],
            entries.map(
              ({ entry, actor }) =>
                html`<tr><td>${when(entry.createdAt)}</td><td>${actor ? html`<bdi>@${actor.username}</bdi>` : "the operator (command line)"}</td><td>${entry.action}</td><td>${entry.targetType}: ${entry.summary}</td></tr>`,
            ),
          )
    }
${next ? html`<nav class="pages" aria-label="More of the log"><a href="${next}">Older entries</a></nav>` : ""}`,
  };
}
