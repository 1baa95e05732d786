import type { QuoteApprovalView, QuoteView, StatusParts, StatusView, ViewerFlags } from "../models/views.ts";
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
  /** A quoted status inside a quote post (ShallowStatusSerializer): its own quote is a ShallowQuote. */
  nested?: boolean;
}

export function statusUri(urls: Urls, username: string, id: number) {
  return `${urls.publicUrl}/users/${username}/statuses/${id}`;
}

export function statusUrl(urls: Urls, username: string, id: number) {
  return `${urls.publicUrl}/@${username}/${id}`;
}

/**
 * The keys every viewer sees alike, in REST::StatusSerializer's (4.5) key order: `head`
 * before the viewer's flags and `content`, `tail` after `reblog`, then the viewer's `quote`,
 * `after`, and `approval` (closed by the viewer's `current_user`). The render cache stores
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
    quotes_count: row.quotesCount,
    edited_at: row.editedAt === null ? null : new Date(row.editedAt).toISOString(),
  };
  const tail = {
    application: view.application,
    account: serializeAccount(urls, account),
    media_attachments: view.media.map((m) => serializeAttachment(urls, m)),
    mentions: mentionsOf(row).map((m) => ({ id: String(m.id), username: m.username, url: m.url ?? accountUrl(urls, m.username), acct: m.acct ?? m.username })),
    tags: (JSON.parse(row.tags) as string[]).map((name) => ({ name, url: `${urls.publicUrl}/tags/${encodeURIComponent(name)}` })),
    emojis: emojisOf(row),
  };
  const after = {
    // The card is stored as the PreviewCard entity it is shown as (src/services/statuses/link-cards.ts).
    card: row.card === null ? null : (JSON.parse(row.card) as Record<string, unknown>),
    poll: view.poll ? serializePoll(view.poll, options.viewerId) : null,
  };
  return { head, content: row.contentHtml, tail, after, approval: { automatic: view.quoteApproval.automatic, manual: view.quoteApproval.manual } };
}

/** QuoteApproval: who may quote, and how that applies to the viewer. */
function serializeApproval(approval: QuoteApprovalView) {
  return { automatic: approval.automatic, manual: approval.manual, current_user: approval.currentUser };
}

/** REST::QuoteSerializer (the quoted status in full, its own quote shallow), or ShallowQuoteSerializer one level down. */
function serializeQuote(urls: Urls, quote: QuoteView, options: StatusOptions) {
  if (options.nested) return { state: quote.state, quoted_status_id: quote.quotedStatusId === null ? null : String(quote.quotedStatusId) };
  return { state: quote.state, quoted_status: quote.status ? serializeStatus(urls, quote.status, { ...options, source: false, nested: true }) : null };
}

/** The viewer's flags on a status, in the serializer's order. */
function viewerFlags(flags: ViewerFlags) {
  return { favourited: flags.favourited, reblogged: flags.reblogged, muted: flags.muted, bookmarked: flags.bookmarked, pinned: flags.pinned };
}

/** REST::StatusSerializer (4.5), in its key order; per-viewer flags only for a signed-in viewer. */
export function serializeStatus(urls: Urls, view: StatusView, options: StatusOptions): Record<string, unknown> {
  const { head, content, tail, after } = statusParts(urls, view, options);
  const out: Record<string, unknown> = head;
  if (view.viewer) Object.assign(out, viewerFlags(view.viewer));
  if (options.source) out.text = view.row.text;
  else out.content = content;
  if (view.viewer) out.filtered = options.filtered ? options.filtered(view) : [];
  out.reblog = view.reblog ? serializeStatus(urls, view.reblog, { ...options, source: false, nested: false }) : null;
  Object.assign(out, tail);
  out.quote = view.quote ? serializeQuote(urls, view.quote, options) : null;
  Object.assign(out, after);
  out.quote_approval = serializeApproval(view.quoteApproval);
  return out;
}

/** A status's shared parts as the JSON text the render cache keeps. */
export function statusPartsJson(urls: Urls, view: StatusView, options: StatusOptions): StatusParts {
  const { head, content, tail, after, approval } = statusParts(urls, view, options);
  return {
    head: JSON.stringify(head).slice(0, -1),
    content: JSON.stringify(content),
    tail: `,${JSON.stringify(tail).slice(1, -1)}`,
    after: `,${JSON.stringify(after).slice(1, -1)}`,
    approval: `,"quote_approval":${JSON.stringify(approval).slice(0, -1)}`,
    visibility: view.row.visibility,
    reblogOfId: view.row.reblogOfId,
    quoted: view.quote !== null,
  };
}

/**
 * serializeStatus as JSON text, composed from cached parts of a status that quotes nothing:
 * `reblog` is the boosted status's JSON text (or "null"), `flags` the viewer's (null for an
 * anonymous reader), who has no filters, `currentUser` the viewer's quote_approval.current_user.
 * Byte for byte what JSON.stringify(serializeStatus(...)) gives.
 */
export function composeStatusJson(parts: StatusParts, reblog: string, flags: ViewerFlags | null, currentUser = "denied"): string {
  const rest = `${parts.tail},"quote":null${parts.after}${parts.approval},"current_user":${quotedWord(currentUser)}}}`;
  if (!flags) return `${parts.head},"content":${parts.content},"reblog":${reblog}${rest}`;
  // Written out rather than JSON.stringify'd: two stringify calls per status were a tenth of
  // composing a page of 20.
  const viewerPart = `"favourited":${flags.favourited === true},"reblogged":${flags.reblogged === true},"muted":${flags.muted === true},"bookmarked":${flags.bookmarked === true},"pinned":${flags.pinned === true}`;
  return `${parts.head},${viewerPart},"content":${parts.content},"filtered":[],"reblog":${reblog}${rest}`;
}

/** current_user's few words as JSON strings, without a JSON.stringify per status. */
const QUOTED_WORDS = new Map<string, string>();

function quotedWord(word: string): string {
  let quoted = QUOTED_WORDS.get(word);
  if (quoted === undefined) {
    quoted = JSON.stringify(word);
    if (QUOTED_WORDS.size < 16) QUOTED_WORDS.set(word, quoted);
  }
  return quoted;
}

export { accountUri };
