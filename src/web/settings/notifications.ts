import { postForm, select } from "../forms.ts";
import { html } from "../html.ts";
import type { PageView } from "../member-layout.ts";

/** Mastodon 4.3's notification policy, field by field, in its words. */
const FIELDS: [name: string, label: string, hint: string][] = [
  ["for_not_following", "People you don't follow", "Until you manually approve them"],
  ["for_not_followers", "People not following you", "Including people who have been following you fewer than 3 days"],
  ["for_new_accounts", "New accounts", "Created within the past 30 days"],
  ["for_private_mentions", "Unsolicited private mentions", "Filtered unless it's in reply to your own mention or if you follow the sender"],
  ["for_limited_accounts", "Moderated accounts", "Limited by server moderators"],
];

const LEVELS: [string, string][] = [
  ["accept", "Accept: show in notifications"],
  ["filter", "Filter: keep as a request to review"],
  ["drop", "Ignore: never show"],
];

export function notificationPolicyPage(policy: Record<string, string>, csrf: string): PageView {
  return {
    title: "Notifications",
    body: html`<p>Notifications from these people are held back or dropped; held ones wait as requests in your app.</p>
${postForm("/settings/notifications", csrf, [
  html`<fieldset><legend>Filter notifications from…</legend><div class="fields">
${FIELDS.map(([name, label, hint]) => select(name, label, LEVELS, policy[name] ?? "accept", hint))}
</div></fieldset>`,
  html`<div><button type="submit">Save changes</button></div>`,
])}`,
  };
}
