import type { Context } from "@fedify/fedify";
import { Audio, Collection, Document, Hashtag, Image, Mention, Note, Question, Video } from "@fedify/fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab-runtime";
import { remoteBlurhash, remoteFocus } from "../../media-files/hints.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import type { IriRef, RemoteNoteInput } from "../../services/remote/inputs.ts";
import type { RemoteMedia, RemotePoll } from "../../services/statuses/remote-input.ts";
import { MAX_HASHTAG_LENGTH, normalizeTag } from "../../text/format.ts";
import { actorInput } from "./actor.ts";
import { customEmojisOf } from "./emojis.ts";
import { quoteOf, quotePolicyOf } from "./quote-fields.ts";
import { refOf } from "./refs.ts";

/** Mastodon's poll limits for remote polls: at most this many options, each this long. */
const MAX_POLL_OPTIONS = 20;
const MAX_POLL_OPTION_LENGTH = 200;
/** Mentions and hashtags read from one Note at most (far above what a Note of 500 characters names). */
const MAX_MENTIONS = 100;
const MAX_HASHTAGS = 100;
/** Attachments kept of one Note (Mastodon's ACTIVITYPUB_STATUSES_ATTACHMENT_MAX). */
const MAX_ATTACHMENTS = 16;
const MAX_DESCRIPTION = 1500;

/** The objects stored as statuses: Notes, and Questions (polls). */
export type StatusObject = Note | Question;

export function isStatusObject(object: unknown): object is StatusObject {
  return object instanceof Note || object instanceof Question;
}

async function first<T>(items: AsyncIterable<T>): Promise<T | null> {
  for await (const item of items) return item;
  return null;
}

/**
 * A Note or Question as the services take it (RemoteNotes decides what is stored); null when
 * it names no IRI or no author. What it refers to (its author, tags, attachments, poll
 * options) is read through `ctx` only when asked for; `raw`, the Note as it arrived embedded
 * in its activity, gives attachments' blurhash and focal point as Mastodon reads them, by their
 * plain keys; `loader` reads the author's profile.
 */
export function noteInput(ctx: Context<void>, note: StatusObject, loader: DocumentLoader, raw?: () => Promise<unknown>): RemoteNoteInput | null {
  const authorUri = note.attributionId;
  if (note.id === null || authorUri === null) return null;
  const to = note.toIds.map((u) => u.href);
  const cc = note.ccIds.map((u) => u.href);
  return {
    uri: note.id.href,
    authorUri: authorUri.href,
    author: async () => actorInput(await note.getAttribution({ ...ctx, suppressError: true }), loader),
    to,
    cc,
    inReplyTo: note.replyTargetId ? refOf(ctx, note.replyTargetId) : null,
    url: note.url instanceof URL ? note.url.href : (note.url?.href?.href ?? null),
    name: note instanceof Note ? (note.name?.toString() ?? null) : null,
    content: note.content?.toString() ?? "",
    summary: note.summary?.toString() ?? "",
    sensitive: note.sensitive ?? false,
    publishedAt: note.published?.epochMilliseconds ?? null,
    updatedAt: note.updated?.epochMilliseconds ?? null,
    tags: () => tagsOf(ctx, note),
    attachments: async () => attachmentsOf(ctx, note, await raw?.()),
    emojis: () => customEmojisOf(note, ctx),
    poll: async () => (note instanceof Question ? pollOf(ctx, note) : null),
    // From the Note as it arrived, or as Fedify keeps a Note it parsed on its own (fetched).
    quote: async () => quoteOf(ctx, note, await asArrived(note, await raw?.())),
    quotePolicy: quotePolicyOf(note),
  };
}

/**
 * What the Note's Mention tags name and, as Mastodon's silent mentions, its addressees on this
 * server; and the names of its Hashtag tags (normalized, once each).
 */
async function tagsOf(ctx: Context<void>, note: StatusObject): Promise<{ mentioned: IriRef[]; hashtags: string[] }> {
  const hrefs: URL[] = [];
  const hashtags = new Set<string>();
  for await (const tag of note.getTags({ ...ctx, suppressError: true })) {
    if (tag instanceof Mention && tag.href !== null && hrefs.length < MAX_MENTIONS) hrefs.push(tag.href);
    if (tag instanceof Hashtag && hashtags.size < MAX_HASHTAGS) {
      const name = normalizeTag((tag.name?.toString() ?? "").replace(/^#/, ""));
      // A name past Mastodon's Tag length is not a tag it would make: dropped, not cut.
      if (name !== "" && [...name].length <= MAX_HASHTAG_LENGTH) hashtags.add(name);
    }
  }
  for (const href of [...note.toIds, ...note.ccIds]) {
    if (hrefs.length >= MAX_MENTIONS) break;
    if (href.origin === ctx.origin) hrefs.push(href);
  }
  return { mentioned: hrefs.map((href) => refOf(ctx, href)), hashtags: [...hashtags] };
}

/**
 * The Note's attachments, to be shown at their own server's URLs: type (from the object's
 * type or its media type), alt text, size, blurhash and focal point. Mastodon reads those two
 * by their plain keys, whatever the @context says, so they are read so here too, from the Note
 * as it arrived: `given`, the document it came embedded in, or else the one Fedify keeps of a
 * Note it parsed on its own (a fetched one). A document without those keys (a sender writing
 * `toot:blurhash`) gives the values Fedify's Document reads with our patch (patches/README.md).
 */
async function attachmentsOf(ctx: Context<void>, note: StatusObject, given?: unknown): Promise<RemoteMedia[]> {
  const raw = (await asArrived(note, given)) as { attachment?: unknown } | null;
  const extras = (Array.isArray(raw?.attachment) ? raw.attachment : raw?.attachment ? [raw.attachment] : []) as Record<string, unknown>[];
  const media: RemoteMedia[] = [];
  let index = 0;
  for await (const attachment of note.getAttachments({ ...ctx, suppressError: true })) {
    const item = extras[index++];
    const extra: Record<string, unknown> = typeof item === "object" && item !== null ? item : {};
    if (media.length >= MAX_ATTACHMENTS || !(attachment instanceof Document)) continue;
    // Shown at this address (and maybe copied from it): an attachment elsewhere than http(s) is dropped.
    const link = httpUrlOrNull(attachment.url instanceof URL ? attachment.url : (attachment.url?.href ?? null));
    if (link === null) continue;
    const mediaType = attachment.mediaType ?? "";
    const type =
      attachment instanceof Video || mediaType.startsWith("video/") ? "video" : attachment instanceof Audio || mediaType.startsWith("audio/") ? "audio" : attachment instanceof Image || mediaType.startsWith("image/") ? "image" : "unknown";
    const meta: RemoteMedia["meta"] = {};
    const { width, height } = attachment;
    if (width && height && width > 0 && height > 0) meta.original = { width, height, size: `${width}x${height}`, aspect: width / height };
    const focus = remoteFocus("focalPoint" in extra ? extra.focalPoint : attachment.focalPoint);
    if (focus) meta.focus = focus;
    // A hash not as Mastodon would keep it is left null: it is computed here if the file is copied.
    const blurhash = remoteBlurhash("blurhash" in extra ? extra.blurhash : attachment.blurhash);
    const description = attachment.name?.toString().trim().slice(0, MAX_DESCRIPTION) || null;
    media.push({ type, url: link, description, blurhash, meta });
  }
  return media;
}

/**
 * The Note as it arrived: `given`, the document it came embedded in, when it is that Note; else
 * the one Fedify keeps of a Note it parsed on its own (a fetched one). An embedded Note's own
 * toJsonLd() is Fedify's rewriting, without the terms its vocabulary does not know.
 */
async function asArrived(note: StatusObject, given: unknown): Promise<unknown> {
  return (given as { id?: unknown } | undefined)?.id === note.id?.href ? given : await note.toJsonLd();
}

/**
 * A Question's poll: its options (oneOf, or anyOf for several choices) with their counts
 * (`replies.totalItems`), its end, its voters, whether it is closed; null when it has fewer
 * than two options or more than Mastodon allows.
 */
async function pollOf(ctx: Context<void>, question: Question): Promise<RemotePoll | null> {
  const loader = { ...ctx, suppressError: true };
  const multiple = question.inclusiveOptionIds.length > 0 || (await first(question.getInclusiveOptions(loader))) !== null;
  const options: string[] = [];
  const tallies: number[] = [];
  for await (const option of multiple ? question.getInclusiveOptions(loader) : question.getExclusiveOptions(loader)) {
    if (options.length >= MAX_POLL_OPTIONS) return null;
    const title = option.name?.toString().trim() ?? "";
    if (title === "") continue;
    const replies = await option.getReplies(loader);
    options.push(title.slice(0, MAX_POLL_OPTION_LENGTH));
    tallies.push(replies instanceof Collection ? Math.max(0, replies.totalItems ?? 0) : 0);
  }
  if (options.length < 2) return null;
  const closed = question.closed;
  const closedAt = closed instanceof Object && "epochMilliseconds" in closed ? closed.epochMilliseconds : closed === true ? Date.now() : null;
  const expiresAt = question.endTime?.epochMilliseconds ?? closedAt ?? Date.now() + 7 * 86_400_000;
  return { options, tallies, multiple, expiresAt, votersCount: question.voters ?? null, closedAt };
}
