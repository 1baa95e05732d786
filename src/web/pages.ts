import { htmlToText } from "../text/html-to-text.ts";
import { html, raw, type Safe } from "./html.ts";
import { layout } from "./layout.ts";
import { counted, PAGES_LANGUAGE } from "./words.ts";

/** The parts of the API's Account entity the pages show. */
export interface AccountEntity {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  note: string;
  url: string;
  uri?: string;
  avatar: string;
  header: string;
  locked: boolean;
  bot: boolean;
  followers_count: number;
  following_count: number;
  statuses_count: number;
  fields: { name: string; value: string; verified_at: string | null }[];
  /** The account it moved to, if it moved. */
  moved?: { acct: string; url: string };
}

/** The parts of the API's Status entity the pages show (as an anonymous reader gets it). */
export interface StatusEntity {
  id: string;
  uri: string;
  url: string | null;
  created_at: string;
  edited_at: string | null;
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  language: string | null;
  visibility: string;
  replies_count: number;
  reblogs_count: number;
  favourites_count: number;
  account: AccountEntity;
  reblog: StatusEntity | null;
  media_attachments: { type: string; url: string | null; preview_url: string | null; description: string | null }[];
  poll: { options: { title: string; votes_count: number | null }[]; votes_count: number; expired: boolean; expires_at: string | null } | null;
  /** What it quotes: the quoted status as the reader may see it (Quote), or one level down only its state (ShallowQuote). */
  quote?: { state: string; quoted_status?: StatusEntity | null; quoted_status_id?: string | null } | null;
}

export interface Site {
  title: string;
  publicUrl: string;
}

const name = (a: AccountEntity) => a.display_name || a.username;
const when = (iso: string) => html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`;

/**
 * Whether a URL is this server's own. The pages make the browser fetch nothing elsewhere: remote
 * avatars give way to the default one, remote media (not copied here) are links to where they are.
 */
const own = (site: Site, url: string | null): url is string => url !== null && (url === site.publicUrl || url.startsWith(`${site.publicUrl}/`));
const avatarOf = (site: Site, a: AccountEntity) => (own(site, a.avatar) ? a.avatar : `${site.publicUrl}/avatars/original/missing.png`);

/** One status as an article: its author, content (behind its warning), media, poll, counts. */
export function statusArticle(site: Site, s: StatusEntity, options: { focus?: boolean } = {}): Safe {
  if (s.reblog) {
    return html`<article class="status"><p class="boosted"><a href="${s.account.url}">${name(s.account)}</a> boosted</p>${statusBody(site, s.reblog, options)}</article>`;
  }
  return html`<article class="status${options.focus ? " focus" : ""}">${statusBody(site, s, options)}</article>`;
}

/** Why a quoted post is not shown, in the words of Mastodon's web interface. */
const QUOTE_PLACEHOLDERS: Record<string, string> = {
  pending: "This post is pending approval from the original author.",
  rejected: "This post cannot be displayed.",
  revoked: "Post removed by author.",
  deleted: "Post removed by author.",
  unauthorized: "This post cannot be displayed.",
  blocked_account: "Hidden because you blocked this account.",
  blocked_domain: "Hidden because you blocked this server.",
  muted_account: "Hidden because you muted this account.",
};

/**
 * The quoted post inside the quoting one, as the reader may see it (the entity has decided):
 * in full one level down, and below that a link, as Mastodon advises clients.
 */
function quoted(site: Site, s: StatusEntity, nested: boolean): Safe | "" {
  const q = s.quote;
  if (!q) return "";
  if (q.state === "accepted" && q.quoted_status) return html`<blockquote class="quote">${statusBody(site, q.quoted_status, {}, true)}</blockquote>`;
  if (q.state === "accepted" && nested) return html`<blockquote class="quote"><p class="meta">Quoted post</p></blockquote>`;
  return html`<blockquote class="quote"><p class="meta">${QUOTE_PLACEHOLDERS[q.state] ?? QUOTE_PLACEHOLDERS.unauthorized}</p></blockquote>`;
}

function statusBody(site: Site, s: StatusEntity, options: { focus?: boolean }, nested = false): Safe {
  // The fallback link to the quoted post is for readers that do not show quotes; this one does.
  const text = s.quote ? s.content.replace(/^<p class="quote-inline">.*?<\/p>/s, "") : s.content;
  // The status's words are in its language; the page's around them (counts, dates) in the pages'.
  const content = html`<div class="content"${s.language ? html` lang="${s.language}"` : ""}>${raw(text)}</div>${media(site, s)}${poll(s)}${quoted(site, s, nested)}`;
  const link = s.url ?? s.uri;
  return html`<header><img src="${avatarOf(site, s.account)}" alt=""><div><a href="${s.account.url}"><strong>${name(s.account)}</strong></a><div class="handle">@${s.account.acct}</div></div></header>
${s.spoiler_text ? html`<details class="cw"><summary>${s.spoiler_text}</summary>${content}</details>` : content}
<p class="meta"><a href="${link}">${when(s.created_at)}</a>${s.edited_at ? " · edited" : ""}${options.focus ? html` · ${counted(s.replies_count, "reply")} · ${counted(s.reblogs_count, "boost")} · ${counted(s.favourites_count, "favourite")}` : ""}</p>`;
}

function media(site: Site, s: StatusEntity): Safe | "" {
  if (s.media_attachments.length === 0) return "";
  const items = s.media_attachments.map((m) => {
    if (!m.url) return "";
    if (!own(site, m.url)) return html`<a href="${m.url}">${m.description || m.type} (at its own server)</a>`;
    if (m.type === "image") return html`<a href="${m.url}"><img src="${own(site, m.preview_url) ? m.preview_url : m.url}" alt="${m.description ?? ""}" loading="lazy"></a>`;
    const poster = own(site, m.preview_url) ? html` poster="${m.preview_url}"` : "";
    // A gifv plays as the GIF it was: silent, looping, on its own, inline on phones.
    if (m.type === "gifv") return html`<video src="${m.url}" autoplay loop muted playsinline${poster} aria-label="${m.description ?? "animation"}"></video>`;
    if (m.type === "video") return html`<video src="${m.url}" controls preload="none"${poster} aria-label="${m.description ?? "video"}"></video>`;
    if (m.type === "audio") return html`<audio src="${m.url}" controls preload="none" aria-label="${m.description ?? "audio"}"></audio>`;
    return html`<a href="${m.url}">${m.description ?? "attachment"}</a>`;
  });
  return html`<div class="media">${items}</div>`;
}

function poll(s: StatusEntity): Safe | "" {
  if (!s.poll) return "";
  const total = s.poll.votes_count;
  const options = s.poll.options.map((o) => {
    const share = total > 0 && o.votes_count !== null ? Math.round((o.votes_count / total) * 100) : 0;
    return html`<li>${o.title}: ${o.votes_count ?? "?"} (${share}%)</li>`;
  });
  return html`<div class="poll"><ul>${options}</ul><p class="meta">${counted(total, "vote")}${s.poll.expired ? " · closed" : ""}</p></div>`;
}

/**
 * The picture a link preview shows of a status: its first image, or the preview frame of its
 * first video or GIF (the cover of an audio file, when it has one), as Mastodon's cards do;
 * undefined when it has none, and the author's avatar stands in.
 */
function previewPicture(s: StatusEntity): string | undefined {
  for (const m of s.media_attachments) {
    if (m.type === "image" && m.url) return m.url;
    if ((m.type === "video" || m.type === "gifv" || m.type === "audio") && m.preview_url) return m.preview_url;
  }
  return undefined;
}

/** `/@name/:id`: the status with the thread around it. */
export function statusPage(site: Site, status: StatusEntity, ancestors: StatusEntity[], descendants: StatusEntity[]): string {
  const shown = status.reblog ?? status;
  const text = shown.spoiler_text || htmlToText(shown.content);
  const picture = previewPicture(shown);
  const main = html`${ancestors.map((s) => statusArticle(site, s))}${statusArticle(site, status, { focus: true })}${
    descendants.length > 0 ? html`<section aria-label="Replies">${descendants.map((s) => statusArticle(site, s))}</section>` : ""
  }`;
  return layout({ title: `${name(shown.account)}: "${text.slice(0, 60)}${text.length > 60 ? "…" : ""}"`, description: text, canonical: status.url ?? status.uri, activity: status.uri, oembed: `${site.publicUrl}/api/oembed?format=json&url=${encodeURIComponent(status.url ?? status.uri)}`, image: picture ?? shown.account.avatar, largeImage: picture !== undefined, type: "article", siteName: site.title }, main, PAGES_LANGUAGE);
}

/** `/@name`: the profile, its pinned statuses, then a page of its public and unlisted ones. */
export function profilePage(site: Site, account: AccountEntity, pinned: StatusEntity[], statuses: StatusEntity[], next: string | null): string {
  const fields = account.fields.length
    ? html`<dl class="fields">${account.fields.map((f) => html`<dt>${f.name}</dt><dd>${raw(f.value)}${f.verified_at ? " ✓" : ""}</dd>`)}</dl>`
    : "";
  // As Mastodon's moved-account notice: the new account, linked, above the old profile.
  const moved = account.moved
    ? html`<p class="moved" role="status">${name(account)} has indicated that their new account is now <a href="${account.moved.url}">@${account.moved.acct}</a>.</p>`
    : "";
  const main = html`${moved}<section class="profile" aria-label="Profile">
<img class="header" src="${account.header}" alt="">
<img class="avatar" src="${account.avatar}" alt="">
<h1>${name(account)}</h1>
<p class="handle">@${account.acct}${account.locked ? " · locked" : ""}${account.bot ? " · automated" : ""}</p>
<div class="content">${raw(account.note)}</div>
${fields}
<ul class="counts"><li>${counted(account.statuses_count, "post")}</li><li>${counted(account.following_count, "following")}</li><li>${counted(account.followers_count, "follower")}</li></ul>
</section>
${pinned.length ? html`<section aria-label="Pinned"><h2>Pinned</h2>${pinned.map((s) => statusArticle(site, s))}</section>` : ""}
<section aria-label="Posts"><h2>Posts</h2>${statuses.length ? statuses.map((s) => statusArticle(site, s)) : html`<p>No posts yet.</p>`}</section>
${next ? html`<nav class="pages" aria-label="Pages"><a href="${next}" rel="next">Older posts</a></nav>` : ""}`;
  const description = htmlToText(account.note) || `${name(account)} on ${site.title}`;
  return layout({ title: `${name(account)} (@${account.acct})`, description, canonical: account.url, activity: account.uri, feed: `${account.url}.rss`, image: account.avatar, type: "profile", siteName: site.title }, main);
}

/** `/tags/:name`: public statuses with the hashtag, newest first. */
export function tagPage(site: Site, tag: string, statuses: StatusEntity[], next: string | null): string {
  const url = `${site.publicUrl}/tags/${encodeURIComponent(tag)}`;
  const main = html`<h1>#${tag}</h1>
<section aria-label="Posts">${statuses.length ? statuses.map((s) => statusArticle(site, s)) : html`<p>No public posts with this hashtag yet.</p>`}</section>
${next ? html`<nav class="pages" aria-label="Pages"><a href="${next}" rel="next">Older posts</a></nav>` : ""}`;
  return layout({ title: `#${tag}`, description: `Public posts with #${tag} on ${site.title}`, canonical: url, feed: `${url}.rss`, type: "website", siteName: site.title }, main);
}

/** `/`: what this server is, who runs it, whether it takes sign-ups. */
export function aboutPage(
  site: Site & {
    description: string;
    /** The extended description as the API serves it (our formatter's HTML of the admin's text), "" when unset. */
    aboutHtml: string;
    rules: { text: string; hint: string }[];
    contactEmail: string;
    registrations: "open" | "approval" | "closed";
    users: number;
    statuses: number;
  },
): string {
  const joining = {
    open: "Sign-ups are open: register with any Mastodon app.",
    approval: "Sign-ups are reviewed: register with any Mastodon app, saying why you would like to join, and the staff approve your account before you can sign in.",
    closed: "Sign-ups are closed; an invite link from a member lets you in.",
  }[site.registrations];
  const main = html`<h1>${site.title}</h1>
<p>${site.description}</p>
<ul class="counts"><li>${counted(site.users, "user")}</li><li>${counted(site.statuses, "post")}</li></ul>
${site.aboutHtml ? html`<h2>About</h2>\n<div class="about">${raw(site.aboutHtml)}</div>` : ""}
${site.rules.length ? html`<h2>Rules</h2>\n<ol class="rules">${site.rules.map((r) => html`<li>${r.text}${r.hint ? html`<br><span class="hint">${r.hint}</span>` : ""}</li>`)}</ol>` : ""}
<h2>Joining</h2>
<p>${joining} Members sign in with a Mastodon app (Elk, Phanpy, Ivory, Tusky…) at <strong>${new URL(site.publicUrl).host}</strong>, or <a href="/oauth/sign_in">sign in here</a> to read this server's pages.</p>
${site.contactEmail ? html`<h2>Contact</h2><p><a href="mailto:${site.contactEmail}">${site.contactEmail}</a></p>` : ""}`;
  return layout({ title: site.title, description: site.description, canonical: `${site.publicUrl}/`, type: "website", siteName: site.title }, main);
}

/** `/@name/:id/embed`: the status alone, for the iframe of oEmbed. */
export function embedPage(site: Site, status: StatusEntity): string {
  return html`<!DOCTYPE html>
<html lang="${PAGES_LANGUAGE}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${name(status.account)} on ${site.title}</title><link rel="stylesheet" href="/web/rookery.css"></head>
<body class="embed"><main id="main">${statusArticle(site, status, { focus: true })}</main></body>
</html>
`.value;
}
