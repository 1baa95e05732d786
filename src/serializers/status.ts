import type { StatusView } from "../services/statuses/reader.ts";
import { mentionsOf } from "../services/statuses/visibility.ts";
import { accountUri, accountUrl, serializeAccount, type Urls } from "./account.ts";
import { serializePoll } from "./poll.ts";

export interface StatusOptions {
  /** The viewer's account id; null for anonymous (and app-only) callers. */
  viewerId: number | null;
  /** DELETE answers with the source text in place of the HTML, for delete-and-redraft. */
  source?: boolean;
  /** Serializes an attachment; supplied by the media module. */
  media?: (urls: Urls, media: StatusView["media"][number]) => unknown;
  /** The viewer's filters matching a status (FilterResult entities); none when absent. */
  filtered?: (view: StatusView) => unknown[];
}

export function statusUri(urls: Urls, username: string, id: number) {
  return `${urls.publicUrl}/users/${username}/statuses/${id}`;
}

export function statusUrl(urls: Urls, username: string, id: number) {
  return `${urls.publicUrl}/@${username}/${id}`;
}

/** REST::StatusSerializer (4.3), in its key order; per-viewer flags only for a signed-in viewer. */
export function serializeStatus(urls: Urls, view: StatusView, options: StatusOptions): Record<string, unknown> {
  const { row, account } = view;
  const boost = row.reblogOfId !== null;
  const uri = boost ? `${statusUri(urls, account.username, row.id)}/activity` : statusUri(urls, account.username, row.id);
  const out: Record<string, unknown> = {
    id: String(row.id),
    created_at: new Date(row.createdAt).toISOString(),
    in_reply_to_id: row.inReplyToId === null ? null : String(row.inReplyToId),
    in_reply_to_account_id: row.inReplyToAccountId === null ? null : String(row.inReplyToAccountId),
    sensitive: row.sensitive,
    spoiler_text: row.spoilerText,
    visibility: row.visibility,
    language: row.language,
    uri,
    url: boost ? uri : statusUrl(urls, account.username, row.id),
    replies_count: row.repliesCount,
    reblogs_count: row.reblogsCount,
    favourites_count: row.favouritesCount,
    edited_at: row.editedAt === null ? null : new Date(row.editedAt).toISOString(),
  };
  if (view.viewer) {
    out.favourited = view.viewer.favourited;
    out.reblogged = view.viewer.reblogged;
    out.muted = view.viewer.muted;
    out.bookmarked = view.viewer.bookmarked;
    out.pinned = view.viewer.pinned;
  }
  if (options.source) out.text = row.text;
  else out.content = row.contentHtml;
  if (view.viewer) out.filtered = options.filtered ? options.filtered(view) : [];
  out.reblog = view.reblog ? serializeStatus(urls, view.reblog, { ...options, source: false }) : null;
  out.application = view.application;
  out.account = serializeAccount(urls, account);
  out.media_attachments = options.media ? view.media.map((m) => options.media!(urls, m)) : [];
  out.mentions = mentionsOf(row).map((m) => ({ id: String(m.id), username: m.username, url: accountUrl(urls, m.username), acct: m.username }));
  out.tags = (JSON.parse(row.tags) as string[]).map((name) => ({ name, url: `${urls.publicUrl}/tags/${encodeURIComponent(name)}` }));
  out.emojis = [];
  out.card = null;
  out.poll = view.poll ? serializePoll(view.poll, options.viewerId) : null;
  return out;
}

export { accountUri };
