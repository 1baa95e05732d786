import { LANGUAGE_CODES } from "../../text/languages.ts";
import { checkbox, postForm, select } from "../forms.ts";
import { html } from "../html.ts";
import type { PageView } from "../member-layout.ts";

/** What the profile page shows: the account's flags as they are. */
export interface ProfileFlags {
  discoverable: boolean;
  indexable: boolean;
  bot: boolean;
  locked: boolean;
  hideCollections: boolean;
}

/** Mastodon's /settings/profile, the part of it clients do not all offer: who finds the account, and how. */
export function profilePage(flags: ProfileFlags, csrf: string): PageView {
  return {
    title: "Public profile",
    body: html`<p>Your name, bio, picture and fields are edited in your app. These are the rest.</p>
${postForm("/settings/profile", csrf, [
  html`<fieldset><legend>Discovery</legend>
${checkbox("discoverable", "Feature profile and posts in discovery", flags.discoverable, "Your profile may be suggested and listed in the directory, and your public posts may appear in trends.")}
${checkbox("indexable", "Include public posts in search results", flags.indexable, "People may find your public posts by the words in them.")}
${checkbox("hide_collections", "Hide who you follow and who follows you", flags.hideCollections)}
</fieldset>`,
  html`<fieldset><legend>Account</legend>
${checkbox("locked", "Require follow requests", flags.locked, "You approve each new follower yourself.")}
${checkbox("bot", "This is an automated account", flags.bot, "It posts by itself and may not be watched by a person.")}
</fieldset>`,
  html`<div><button type="submit">Save changes</button></div>`,
])}`,
  };
}

/** The posting defaults of a user: what new posts get unless the app says otherwise. */
export interface PostingDefaults {
  privacy: string;
  quotePolicy: string;
  language: string | null;
  sensitive: boolean;
}

let languageOptions: [string, string][] | null = null;

/** Every language by its English name, once. */
function languages(): [string, string][] {
  if (!languageOptions) {
    const names = new Intl.DisplayNames(["en"], { type: "language" });
    const named = LANGUAGE_CODES.map((code): [string, string] => {
      let name: string | undefined;
      try {
        name = names.of(code);
      } catch {
        name = undefined;
      }
      return [code, name && name !== code ? `${name} (${code})` : code];
    });
    languageOptions = [["", "As the app decides"], ...named.sort((a, b) => a[1].localeCompare(b[1]))];
  }
  return languageOptions;
}

/** Mastodon's /settings/preferences/other, the posting part. */
export function preferencesPage(defaults: PostingDefaults, csrf: string): PageView {
  return {
    title: "Posting defaults",
    body: html`<p>New posts get these unless your app chooses otherwise.</p>
${postForm("/settings/preferences", csrf, [
  select(
    "privacy",
    "Default visibility",
    [
      ["public", "Public: everyone, in timelines"],
      ["unlisted", "Quiet public: everyone, outside timelines"],
      ["private", "Followers only"],
    ],
    defaults.privacy,
  ),
  select(
    "quote_policy",
    "Who may quote your posts",
    [
      ["public", "Anyone"],
      ["followers", "Your followers"],
      ["nobody", "Only you"],
    ],
    defaults.quotePolicy,
    "For new posts; followers-only posts can be quoted by no one else.",
  ),
  select("language", "Posting language", languages(), defaults.language ?? ""),
  checkbox("sensitive", "Always mark media as sensitive", defaults.sensitive),
  html`<div><button type="submit">Save changes</button></div>`,
])}`,
  };
}
