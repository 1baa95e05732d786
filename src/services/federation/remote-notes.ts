import type { Context } from "@fedify/fedify";
import { Audio, Collection, Document, Hashtag, Image, Mention, Note, PUBLIC_COLLECTION, Question, Video } from "@fedify/fedify/vocab";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { MentionRef } from "../../models/mentions.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";
import { MAX_HASHTAG_LENGTH, normalizeTag } from "../../text/format.ts";
import { htmlToText } from "../../text/html-to-text.ts";
import { sanitizeRemoteHtml } from "../../text/sanitize.ts";
import type { EditingService } from "../statuses/editing.ts";
import { customEmojisOf } from "./emojis.ts";
import type { ModerationService } from "../accounts/moderation.ts";
import type { PostingService } from "../statuses/posting.ts";
import type { RemoteMedia, RemotePoll } from "../statuses/remote-input.ts";
import type { PollService } from "../statuses/polls.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { Visibility } from "../statuses/visibility.ts";
import type { FederationActors } from "./actors.ts";
import type { RemoteAccounts } from "./remote-accounts.ts";

/** Mastodon's poll limits for remote polls: at most this many options, each this long. */
const MAX_POLL_OPTIONS = 20;
const MAX_POLL_OPTION_LENGTH = 200;

async function first<T>(items: AsyncIterable<T>): Promise<T | null> {
  for await (const item of items) return item;
  return null;
}

/** Mentions and hashtags read from one Note at most (far above what a Note of 500 characters names). */
const MAX_MENTIONS = 100;
const MAX_HASHTAGS = 100;
/** Attachments kept of one Note (Mastodon's ACTIVITYPUB_STATUSES_ATTACHMENT_MAX). */
const MAX_ATTACHMENTS = 16;
const MAX_DESCRIPTION = 1500;
/** BlurHash's alphabet (base 83); a hash is short. */
const BLURHASH = /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,100}$/;

/** The objects stored as statuses: Notes, and Questions (polls). */
export type StatusObject = Note | Question;

export function isStatusObject(object: unknown): object is StatusObject {
  return object instanceof Note || object instanceof Question;
}

/** What a Note says, as stored: its HTML sanitized, its text (for filters), its hashtags. */
export interface NoteContent {
  html: string;
  text: string;
  spoilerText: string;
  sensitive: boolean;
  tags: string[];
}

/**
 * Remote Notes into the statuses table: those delivered to an inbox, and those fetched by
 * their URL (search with resolve=true). The Note's IRI must be on its author's server: a
 * server speaks only for its own objects.
 */
export class RemoteNotes {
  constructor(
    private actors: FederationActors,
    private remote: RemoteAccounts,
    private posting: PostingService,
    private reader: StatusReader,
    private moderation: ModerationService,
    private editing: EditingService,
    private polls: PollService,
  ) {}

  /**
   * Stores a Note; the stored status (an existing one when that IRI is known already), or null.
   * A delivered Note is kept only when it concerns someone here (Mastodon's
   * related_to_local_activity?): its author is followed from here, it mentions or addresses a
   * local account, or it replies to a local status; a fetched one always. Addressing is read
   * as Mastodon reads it: as:Public in `to` is public, in `cc` unlisted, the author's
   * followers collection private, and anything else (addressed to some accounts only)
   * direct. Mentions of local accounts that block the author are dropped, and with them what
   * only they concerned.
   */
  async store(ctx: Context<void>, note: StatusObject, options: { fetched: boolean; raw?: unknown }): Promise<StatusRow | null> {
    const authorUri = note.attributionId;
    // The IRI is shown as the status's address when it gives none (its `url`): http(s) only.
    if (note.id === null || authorUri === null || note.id.origin !== authorUri.origin || httpUrlOrNull(note.id) === null) return null;
    const known = this.remote.statusByUri(note.id.href);
    if (known) return this.reader.findRow(known.id) ?? null;
    let author: AccountRow | null = this.remote.byUri(authorUri.href) ?? null;
    if (!author) {
      const actor = await note.getAttribution({ ...ctx, suppressError: true });
      author = actor ? await this.remote.upsert(actor) : null;
    }
    if (!author || author.uri !== authorUri.href) return null;
    const to = note.toIds.map((u) => u.href);
    const cc = note.ccIds.map((u) => u.href);
    const tags = await this.tagsOf(ctx, note);
    const mentions = this.mentionsOf(ctx, tags.mentions, author, [...to, ...cc]);
    const parent = note.replyTargetId ? this.statusAt(ctx, note.replyTargetId) : null;
    // A Note named by a poll option, answering a poll here, is a vote (Mastodon's votes).
    if (note instanceof Note && note.name !== null && parent?.local) return this.vote(author, parent.id, note.name.toString());
    const mentionsLocal = mentions.some((m) => m.acct === undefined);
    if (!options.fetched && !this.actors.hasLocalFollowers(author.id) && !mentionsLocal && !parent?.local) return null;
    const PUBLIC = PUBLIC_COLLECTION.href;
    const followers = author.followersUrl;
    let visibility: Visibility;
    if (to.includes(PUBLIC)) visibility = "public";
    else if (cc.includes(PUBLIC)) visibility = "unlisted";
    else if (followers !== null && (to.includes(followers) || cc.includes(followers))) visibility = "private";
    else if (mentionsLocal) visibility = "direct";
    else return null;
    // An address clients and our pages link to: one that is not http(s) is dropped (the IRI stands in).
    const url = httpUrlOrNull(note.url instanceof URL ? note.url : (note.url?.href ?? null));
    const published = this.posting.publishRemote({
      accountId: author.id,
      uri: note.id.href,
      url,
      ...this.contentOf(note, tags.hashtags),
      visibility,
      language: null,
      createdAt: note.published?.epochMilliseconds ?? Date.now(),
      inReplyToId: parent?.id ?? null,
      inReplyToUri: parent ? null : httpUrlOrNull(note.replyTargetId),
      mentions,
      media: await this.attachmentsOf(ctx, note, options.raw),
      emojis: await customEmojisOf(note, ctx),
      poll: note instanceof Question ? await this.pollOf(ctx, note) : null,
    });
    // null: the same Note arrived meanwhile (another delivery of it); that one stands.
    return published ?? this.reader.findRow(this.remote.statusByUri(note.id.href)?.id ?? 0) ?? null;
  }

  /**
   * The accounts a Note mentions: its Mention tags, and (as Mastodon's silent mentions) the
   * local actors it is addressed to. Local accounts that block the author are left out;
   * remote accounts only when already stored (nothing is fetched for them).
   */
  private mentionsOf(ctx: Context<void>, mentioned: string[], author: AccountRow, addressed: string[]): MentionRef[] {
    const hrefs = [...mentioned];
    for (const href of addressed) if (hrefs.length < MAX_MENTIONS && new URL(href).origin === ctx.origin) hrefs.push(href);
    const found = new Map<number, MentionRef>();
    for (const href of hrefs) {
      const parsed = ctx.parseUri(new URL(href));
      if (parsed?.type === "actor") {
        const local = this.actors.localAccount(parsed.identifier);
        if (local && local.username === parsed.identifier) found.set(local.id, { id: local.id, username: local.username });
        continue;
      }
      const remote = new URL(href).origin === ctx.origin ? undefined : this.remote.byUri(href);
      if (remote && remote.id !== author.id) found.set(remote.id, { id: remote.id, username: remote.username, acct: `${remote.username}@${remote.domain}`, url: remote.url ?? href });
    }
    const locals = [...found.values()].filter((m) => m.acct === undefined).map((m) => m.id);
    const blocking = this.moderation.blocked(author.id, locals).blockedBy;
    return [...found.values()].filter((m) => !blocking.has(m.id));
  }

  /**
   * The author's Update of a Note stored here: its new content, with history (its mentions
   * stay those it arrived with). The caller has checked that the Update's actor is the author.
   */
  async applyEdit(ctx: Context<void>, note: StatusObject, row: StatusRow): Promise<void> {
    // A poll's counts change without an edit (Mastodon's Update of a Question).
    if (note instanceof Question && row.hasPoll) {
      const poll = await this.pollOf(ctx, note);
      if (poll) this.polls.applyRemoteCounts(row.id, poll);
    }
    const tags = await this.tagsOf(ctx, note);
    this.editing.applyRemoteEdit(row, { ...this.contentOf(note, tags.hashtags), emojis: await customEmojisOf(note, ctx), editedAt: note.updated?.epochMilliseconds ?? Date.now() });
  }

  /** The Note's HTML as Mastodon keeps remote HTML (sanitized), its text, and its hashtags. */
  private contentOf(note: StatusObject, hashtags: string[]): NoteContent {
    const html = sanitizeRemoteHtml(note.content?.toString() ?? "");
    const spoilerText = htmlToText(note.summary?.toString() ?? "");
    return { html, text: htmlToText(html), spoilerText, sensitive: (note.sensitive ?? false) || spoilerText !== "", tags: hashtags };
  }

  /**
   * The Note's attachments, to be shown at their own server's URLs: type (from the object's
   * type or its media type), alt text, size; blurhash and focal point are Mastodon's
   * extension terms, which Fedify's vocabulary does not model, so they are read from the Note
   * as it arrived: `raw`, the document it came embedded in, or else the one Fedify keeps of a
   * Note it parsed on its own (a fetched one).
   */
  private async attachmentsOf(ctx: Context<void>, note: StatusObject, given?: unknown): Promise<RemoteMedia[]> {
    const raw = ((given as { id?: unknown } | undefined)?.id === note.id?.href ? given : await note.toJsonLd()) as { attachment?: unknown } | null;
    const extras = (Array.isArray(raw?.attachment) ? raw.attachment : raw?.attachment ? [raw.attachment] : []) as Record<string, unknown>[];
    const media: RemoteMedia[] = [];
    let index = 0;
    for await (const attachment of note.getAttachments({ ...ctx, suppressError: true })) {
      const extra = extras[index++] ?? {};
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
      const focal = extra.focalPoint;
      if (Array.isArray(focal) && focal.length === 2 && focal.every((v) => typeof v === "number" && v >= -1 && v <= 1)) meta.focus = { x: focal[0] as number, y: focal[1] as number };
      const blurhash = typeof extra.blurhash === "string" && BLURHASH.test(extra.blurhash) ? extra.blurhash : null;
      const description = attachment.name?.toString().trim().slice(0, MAX_DESCRIPTION) || null;
      media.push({ type, url: link, description, blurhash, meta });
    }
    return media;
  }

  /**
   * A Question's poll: its options (oneOf, or anyOf for several choices) with their counts
   * (`replies.totalItems`), its end, its voters, whether it is closed; null when it has fewer
   * than two options or more than Mastodon allows.
   */
  private async pollOf(ctx: Context<void>, question: Question): Promise<RemotePoll | null> {
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

  /** A remote account's vote in a local poll, by the option's title; never stored as a status. */
  private vote(author: AccountRow, statusId: number, title: string): null {
    const poll = this.polls.ofStatus(statusId);
    const choice = poll ? (JSON.parse(poll.options) as string[]).indexOf(title) : -1;
    if (!poll || choice < 0) return null;
    try {
      this.polls.vote(author.id, poll.id, [String(choice)]);
    } catch {
      // Ended, already voted, or not a poll it may see: Mastodon drops such a vote too.
    }
    return null;
  }

  /** The hrefs of the Note's Mention tags and the names of its Hashtag tags (normalized, once each). */
  private async tagsOf(ctx: Context<void>, note: StatusObject): Promise<{ mentions: string[]; hashtags: string[] }> {
    const mentions: string[] = [];
    const hashtags = new Set<string>();
    for await (const tag of note.getTags({ ...ctx, suppressError: true })) {
      if (tag instanceof Mention && tag.href !== null && mentions.length < MAX_MENTIONS) mentions.push(tag.href.href);
      if (tag instanceof Hashtag && hashtags.size < MAX_HASHTAGS) {
        const name = normalizeTag((tag.name?.toString() ?? "").replace(/^#/, ""));
        // A name past Mastodon's Tag length is not a tag it would make: dropped, not cut.
        if (name !== "" && [...name].length <= MAX_HASHTAG_LENGTH) hashtags.add(name);
      }
    }
    return { mentions, hashtags: [...hashtags] };
  }

  /** A stored status by its IRI: a local one (served at our URIs) or a remote one kept here. */
  statusAt(ctx: Context<void>, iri: URL): { id: number; local: boolean } | null {
    const parsed = ctx.parseUri(iri);
    if (parsed?.type === "object" && parsed.class === Note) {
      const id = Number(parsed.values.id);
      const row = Number.isSafeInteger(id) ? this.reader.findRow(id) : undefined;
      const author = row && this.actors.localAccount(parsed.values.identifier ?? "");
      return row && author && author.id === row.accountId && row.uri === null ? { id: row.id, local: true } : null;
    }
    const remote = this.remote.statusByUri(iri.href);
    return remote ? { id: remote.id, local: false } : null;
  }
}
