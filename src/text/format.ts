import { LinkifyIt } from "linkify-it";

/**
 * Plain text to the HTML Mastodon renders (app/lib/text_formatter.rb): escaped text,
 * <p> paragraphs and <br /> line breaks, links with the visible part shortened,
 * mentions of local accounts and hashtags linked. No HTML a client wrote survives: every
 * character outside the markup built here is escaped.
 */

// URLs need a scheme, as Mastodon's twitter-text overrides demand; bare domains stay text.
const linkify = new LinkifyIt({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false }).add("ftp:", null).add("mailto:", null).add("//", null);

const WORD = "\\p{L}\\p{M}\\p{N}\\p{Pc}";
/**
 * Mastodon's HASHTAG_RE (app/models/tag.rb) has overlapping starred classes that backtrack
 * quadratically on long runs of separators. This scans the longest run of tag characters in
 * one linear pass; hashtagOf() then applies the same rules: no separator first or last, and
 * a letter somewhere (or a separator inside).
 */
const HASHTAG_SCAN = new RegExp(`(?<![=/)\\p{L}\\p{M}\\p{N}])#([${WORD}\\u00B7\\u30FB\\u200c]+)`, "gu");
const LEADING_SEPARATOR = /^[\u00B7\u30FB\u200c]/u;
const TRAILING_SEPARATORS = /[\u00B7\u30FB\u200c]+$/u;

function hashtagOf(run: string): string | null {
  if (LEADING_SEPARATOR.test(run)) return null;
  const tag = run.replace(TRAILING_SEPARATORS, "");
  if (/[\p{L}\p{M}]/u.test(tag)) return tag;
  return tag.length >= 3 && /[_\u00B7\u30FB\u200c]/u.test(tag.slice(1, -1)) ? tag : null;
}
const HASHTAG_NAME = new RegExp(`^[${WORD}\\u00B7\\u30FB\\u200c]+$`, "u");

/**
 * The longest tag name accepted where one is named on its own (featuring, following): no
 * local status can carry a longer one (its whole text is at most 500 characters). Mastodon
 * has no length rule, and its database index fails on names of a few thousand bytes.
 */
export const MAX_HASHTAG_LENGTH = 500;

/** Whether a whole string is one hashtag name as a status would carry it (Tag::HASHTAG_NAME_RE). */
export function isHashtagName(name: string): boolean {
  return HASHTAG_NAME.test(name) && hashtagOf(name) === name;
}

// app/models/account.rb MENTION_RE, plus an optional port after the domain: a server whose
// PUBLIC_URL has one is `alice@localhost:3000`, and clients (Elk, on every edit) write
// mentions of its own accounts that way.
const MENTION_RE = new RegExp(
  `(?<![=/${WORD}])@(([a-z0-9_]+(?:[.\\-]+[a-z0-9_]+)*)(?:@([${WORD}]+(?:[.\\-]+[${WORD}]+)*(?::\\d{1,5}(?!\\d))?))?)`,
  "giu",
);

export interface MentionTarget {
  id: number;
  username: string;
  /** The profile page the mention links to. */
  url: string;
  /** Remote accounts only: `user@domain`. */
  acct?: string;
}

export interface FormatOptions {
  /** Split into <p> paragraphs and <br /> lines (statuses, notes); single-line for profile fields. */
  multiline?: boolean;
  /** rel="me" on links, as Mastodon does for profile fields. */
  relMe?: boolean;
  /** Resolves `@user` (with its optional domain) to a local account, or null to leave it as text. */
  resolveMention?: (username: string, domain: string | null) => MentionTarget | null;
  /** Base of hashtag links, e.g. https://example.com/tags/ */
  tagBaseUrl: string;
}

export interface Formatted {
  html: string;
  mentions: MentionTarget[];
  /** Hashtags as written, in order of appearance, without duplicates (case-insensitively). */
  tags: string[];
}

type Entity =
  | { kind: "url"; start: number; end: number; url: string }
  | { kind: "tag"; start: number; end: number; tag: string }
  | { kind: "mention"; start: number; end: number; username: string; domain: string | null };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;",
  );
}

function urlEntities(text: string): Entity[] {
  const matches = linkify.match(text) ?? [];
  return matches
    .filter((m) => /^https?:\/\//i.test(m.url))
    .map((m) => ({ kind: "url" as const, start: m.index, end: m.lastIndex, url: m.raw }));
}

function mentionEntities(text: string): Entity[] {
  const out: Entity[] = [];
  for (const m of text.matchAll(MENTION_RE)) {
    const start = m.index as number;
    const end = start + m[0].length;
    // twitter-text's end_mention_match: not followed by another @, or by "://"
    if (/^(?:@|:\/\/)/.test(text.slice(end))) continue;
    out.push({ kind: "mention", start, end, username: m[2] as string, domain: m[3] ?? null });
  }
  return out;
}

/**
 * Every `@user` and `@user@domain` a text names (the domain null for a bare name), for reading
 * the accounts before formatting: the formatter's `resolveMention` cannot wait.
 */
export function mentionNames(text: string): { username: string; domain: string | null }[] {
  return mentionEntities(text).flatMap((e) => (e.kind === "mention" ? [{ username: e.username, domain: e.domain }] : []));
}

/** The `@user@domain` mentions of a text, each once (domains lower-cased), for resolving remote accounts before formatting. */
export function mentionHandles(text: string): { username: string; domain: string }[] {
  const seen = new Map<string, { username: string; domain: string }>();
  for (const e of mentionEntities(text)) {
    if (e.kind !== "mention" || e.domain === null) continue;
    const handle = { username: e.username, domain: e.domain.toLowerCase() };
    seen.set(`${handle.username.toLowerCase()}@${handle.domain}`, handle);
  }
  return [...seen.values()];
}

function tagEntities(text: string): Entity[] {
  const out: Entity[] = [];
  for (const m of text.matchAll(HASHTAG_SCAN)) {
    let tag = hashtagOf(m[1] as string);
    if (tag === null) continue;
    const start = m.index as number;
    let end = start + 1 + tag.length;
    if (text.slice(end).startsWith("://")) {
      const trimmed = tag.replace(/https?$/i, "");
      if (trimmed !== tag) {
        end -= tag.length - trimmed.length;
        tag = trimmed;
      }
      if (tag === "") continue;
    }
    out.push({ kind: "tag", start, end, tag });
  }
  return out;
}

/** All entities, sorted, with overlaps removed (earlier wins), as Extractor does. */
function entities(text: string): Entity[] {
  const all = [...urlEntities(text), ...tagEntities(text), ...mentionEntities(text)].sort((a, b) => a.start - b.start);
  const kept: Entity[] = [];
  let lastEnd = -1;
  for (const e of all) {
    if (e.start < lastEnd) continue;
    kept.push(e);
    lastEnd = e.end;
  }
  return kept;
}

function linkHtml(url: string, relMe: boolean): string {
  const prefix = /^(https?:\/\/(www\.)?)/i.exec(url)?.[0] ?? "";
  const rest = url.slice(prefix.length);
  const display = rest.slice(0, 30);
  const suffix = rest.slice(30);
  const rel = relMe ? "me nofollow noopener noreferrer" : "nofollow noopener noreferrer";
  return (
    `<a href="${escapeHtml(encodeURI(safeDecode(url)))}" target="_blank" rel="${rel}" translate="no">` +
    `<span class="invisible">${escapeHtml(prefix)}</span>` +
    `<span class="${rest.length > 30 ? "ellipsis" : ""}">${escapeHtml(display)}</span>` +
    `<span class="invisible">${escapeHtml(suffix)}</span></a>`
  );
}

function safeDecode(url: string): string {
  try {
    return decodeURI(url);
  } catch {
    return url;
  }
}

function paragraphs(html: string, multiline: boolean): string {
  const text = html.replace(/\r\n?/g, "\n");
  if (!multiline) return text.replace(/\n/g, " ");
  return text
    .split(/\n\n+/)
    .map((p) => `<p>${p.replace(/\n/g, "<br />")}</p>`)
    .join("");
}

export function formatText(input: string, options: FormatOptions): Formatted {
  const text = input.trim();
  if (text === "") return { html: "", mentions: [], tags: [] };
  const mentions = new Map<number, MentionTarget>();
  const tags = new Map<string, string>();
  let html = "";
  let cursor = 0;
  for (const e of entities(text)) {
    html += escapeHtml(text.slice(cursor, e.start));
    const raw = text.slice(e.start, e.end);
    if (e.kind === "url") {
      html += linkHtml(e.url, options.relMe ?? false);
    } else if (e.kind === "tag") {
      if (!tags.has(e.tag.toLowerCase())) tags.set(e.tag.toLowerCase(), e.tag);
      html += `<a href="${escapeHtml(options.tagBaseUrl + encodeURIComponent(e.tag))}" class="mention hashtag" rel="tag">#<span>${escapeHtml(e.tag)}</span></a>`;
    } else {
      const target = options.resolveMention?.(e.username, e.domain) ?? null;
      if (target) {
        mentions.set(target.id, target);
        html += `<span class="h-card" translate="no"><a href="${escapeHtml(target.url)}" class="u-url mention">@<span>${escapeHtml(target.username)}</span></a></span>`;
      } else {
        html += escapeHtml(raw);
      }
    }
    cursor = e.end;
  }
  html += escapeHtml(text.slice(cursor));
  return { html: paragraphs(html, options.multiline ?? true), mentions: [...mentions.values()], tags: [...tags.values()] };
}

/** Mastodon's StatusLengthValidator: URLs count 23, remote mentions only their username part. */
export function countableLength(text: string): number {
  let out = "";
  let cursor = 0;
  const es = entities(text).filter((e) => e.kind !== "tag");
  for (const e of es) {
    out += text.slice(cursor, e.start);
    out += e.kind === "url" ? "x".repeat(23) : `@${e.username}`;
    cursor = e.end;
  }
  out += text.slice(cursor);
  return graphemeLength(out);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export function graphemeLength(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/**
 * Mastodon's HashtagNormalizer: NFKC, lower case, ASCII folding, then only letters, digits
 * and the allowed separators remain. Tags are stored and matched under this name.
 */
export function normalizeTag(tag: string): string {
  return tag
    .normalize("NFKC")
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/[^\p{L}\p{N}\u0E47-\u0E4E_·・\u200c]/gu, "");
}
