import type { StatusParts, StatusView, ViewerFlags } from "../models/views.ts";
import { mentionsOf } from "../models/mentions.ts";
import { emojisOf } from "../models/emojis.ts";
import { accountUri, accountUrl, serializeAccount, type Urls } from "./account.ts";
import { serializeAttachment } from "./media.ts";
import { serializePoll } from "./poll.ts";

export interface StatusOptions {
  /** The viewer's account id; null for anonymous (and app-only) callers. */
  viewerId: number | null;
  /** DELETE answers with the source text in place of the HTML, for delete-and-redraft. */
  source?: boolean;
  /** The viewer's filters matching a status (FilterResult entities); none when absent. */
  filtered?: (view: StatusView) => unknown[];
}

export function statusUri(urls: Urls, username: string, id: number) {
  return `${urls.publicUrl}/users/${username}/statuses/${id}`;
}

export function statusUrl(urls: Urls, username: string, id: number) {
  return `${urls.publicUrl}/@${username}/${id}`;
}

/**
 * The keys every viewer sees alike, in REST::StatusSerializer's (4.3) key order: `head`
 * before the viewer's flags and `content`, `tail` after `reblog`. The render cache stores
 * these parts as JSON text (anonymous: `poll` then hides totals as for anyone but the author).
 */
export function statusParts(urls: Urls, view: StatusView, options: StatusOptions) {
  const { row, account } = view;
  const boost = row.reblogOfId !== null;
  // A remote status keeps the IRI and page its home server gave it.
  const local = row.uri === null;
  const uri = !local ? row.uri! : boost ? `${statusUri(urls, account.username, row.id)}/activity` : statusUri(urls, account.username, row.id);
  const head = {
    id: String(row.id),
    created_at: new Date(row.createdAt).toISOString(),
    in_reply_to_id: row.inReplyToId === null ? null : String(row.inReplyToId),
    in_reply_to_account_id: row.inReplyToAccountId === null ? null : String(row.inReplyToAccountId),
    sensitive: row.sensitive,
    spoiler_text: row.spoilerText,
    visibility: row.visibility,
    language: row.language,
    uri,
    url: !local ? (row.url ?? row.uri) : boost ? uri : statusUrl(urls, account.username, row.id),
    replies_count: row.repliesCount,
    reblogs_count: row.reblogsCount,
    favourites_count: row.favouritesCount,
    edited_at: row.editedAt === null ? null : new Date(row.editedAt).toISOString(),
  };
  const tail = {
    application: view.application,
    account: serializeAccount(urls, account),
    media_attachments: view.media.map((m) => serializeAttachment(urls, m)),
    mentions: mentionsOf(row).map((m) => ({ id: String(m.id), username: m.username, url: m.url ?? accountUrl(urls, m.username), acct: m.acct ?? m.username })),
    tags: (JSON.parse(row.tags) as string[]).map((name) => ({ name, url: `${urls.publicUrl}/tags/${encodeURIComponent(name)}` })),
    emojis: emojisOf(row),
    // The card is stored as the PreviewCard entity it is shown as (src/services/statuses/link-cards.ts).
    card: row.card === null ? null : (JSON.parse(row.card) as Record<string, unknown>),
    poll: view.poll ? serializePoll(view.poll, options.viewerId) : null,
  };
  return { head, content: row.contentHtml, tail };
}

/** The viewer's flags on a status, in the serializer's order. */
function viewerFlags(flags: ViewerFlags) {
  return { favourited: flags.favourited, reblogged: flags.reblogged, muted: flags.muted, bookmarked: flags.bookmarked, pinned: flags.pinned };
}

/** REST::StatusSerializer (4.3), in its key order; per-viewer flags only for a signed-in viewer. */
export function serializeStatus(urls: Urls, view: StatusView, options: StatusOptions): Record<string, unknown> {
  const { head, content, tail } = statusParts(urls, view, options);
  const out: Record<string, unknown> = head;
  if (view.viewer) Object.assign(out, viewerFlags(view.viewer));
  if (options.source) out.text = view.row.text;
  else out.content = content;
  if (view.viewer) out.filtered = options.filtered ? options.filtered(view) : [];
  out.reblog = view.reblog ? serializeStatus(urls, view.reblog, { ...options, source: false }) : null;
  return Object.assign(out, tail);
}

/** A status's shared parts as the JSON text the render cache keeps. */
export function statusPartsJson(urls: Urls, view: StatusView, options: StatusOptions): StatusParts {
  const { head, content, tail } = statusParts(urls, view, options);
  return {
    head: JSON.stringify(head).slice(0, -1),
    content: JSON.stringify(content),
    tail: `,${JSON.stringify(tail).slice(1)}`,
    visibility: view.row.visibility,
    reblogOfId: view.row.reblogOfId,
  };
}

/**
 * serializeStatus as JSON text, composed from cached parts: `reblog` is the boosted status's
 * JSON text (or "null"), `flags` the viewer's (null for an anonymous reader), who has no
 * filters. Byte for byte what JSON.stringify(serializeStatus(...)) gives.
 */
export function composeStatusJson(parts: StatusParts, reblog: string, flags: ViewerFlags | null): string {
  if (!flags) return `${parts.head},"content":${parts.content},"reblog":${reblog}${parts.tail}`;
  const viewerPart = JSON.stringify(viewerFlags(flags)).slice(1, -1);
  return `${parts.head},${viewerPart},"content":${parts.content},"filtered":[],"reblog":${reblog}${parts.tail}`;
}

export { accountUri };
