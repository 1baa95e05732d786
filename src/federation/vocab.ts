import type { Context } from "@fedify/fedify";
import { Collection, Create, Document, Emoji, Endpoints, Hashtag, Image, Mention, Note, Person, PropertyValue, PUBLIC_COLLECTION, Question, Service } from "@fedify/fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import type { AccountRow, MediaRow, PollRow, QuoteRow, StatusRow } from "../db/schema.ts";
import { accountUrl, avatarOf, headerOf, type Urls } from "../presenters/account.ts";
import { statusUrl } from "../presenters/status.ts";
import { mentionsOf } from "../models/mentions.ts";
import { emojisOf, type CustomEmoji } from "../models/emojis.ts";
import type { ProfileField } from "../models/views.ts";
import { quotePolicyOf, quoteValuesOf, type QuoteParts } from "./quote-vocab.ts";

export const instant = (ms: number) => Temporal.Instant.fromEpochMilliseconds(ms);

const EMOJI_TYPES: Record<string, string> = { png: "image/png", gif: "image/gif", webp: "image/webp" };

/**
 * One of this server's custom emojis as Mastodon's Emoji tag: its IRI (/emojis/:shortcode,
 * dispatched in index.ts), `:shortcode:` as its name, the image as its icon.
 */
export function emojiOf(ctx: Context<void>, emoji: CustomEmoji) {
  const ext = /\.([a-z0-9]+)$/.exec(emoji.url)?.[1] ?? "";
  return new Emoji({
    id: ctx.getObjectUri(Emoji, { shortcode: emoji.shortcode }),
    name: `:${emoji.shortcode}:`,
    icon: new Image({ url: new URL(emoji.url), mediaType: EMOJI_TYPES[ext] ?? null }),
  });
}

/**
 * The actor document of a local account (Mastodon's ActivityPub::ActorSerializer is the model:
 * Person, or Service for bots; the RSA key as publicKey, both keys as assertionMethods). Its
 * aliases (alsoKnownAs) are the accounts it comes from; `movedTo`, the account it moved to.
 */
export async function actorOf(ctx: Context<void>, urls: Urls, account: AccountRow, movedTo?: AccountRow) {
  const name = account.username;
  const keys = await ctx.getActorKeyPairs(name);
  // Suspended by staff: the actor says so and shows nothing of the profile (Mastodon's
  // ActorSerializer for an unavailable account), so that other servers suspend it too.
  const suspended = account.suspendedAt !== null;
  const values = {
    id: ctx.getActorUri(name),
    preferredUsername: name,
    name: suspended ? name : account.displayName,
    summary: suspended ? "" : account.noteHtml,
    url: new URL(accountUrl(urls, name)),
    published: instant(account.createdAt),
    manuallyApprovesFollowers: suspended ? false : account.locked,
    discoverable: suspended ? false : account.discoverable,
    indexable: suspended ? false : account.indexable,
    inbox: ctx.getInboxUri(name),
    endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
    outbox: ctx.getOutboxUri(name),
    followers: ctx.getFollowersUri(name),
    following: ctx.getFollowingUri(name),
    featured: ctx.getFeaturedUri(name),
    icon: account.avatarFile && !suspended ? new Image({ url: new URL(avatarOf(urls, account)) }) : null,
    image: account.headerFile && !suspended ? new Image({ url: new URL(headerOf(urls, account)) }) : null,
    attachments: suspended ? [] : (JSON.parse(account.fields) as ProfileField[]).map((f) => new PropertyValue({ name: f.name, value: f.valueHtml })),
    tags: suspended ? [] : emojisOf(account).map((e) => emojiOf(ctx, e)),
    publicKey: keys[0]?.cryptographicKey ?? null,
    assertionMethods: keys.map((k) => k.multikey),
    aliases: suspended ? [] : (JSON.parse(account.alsoKnownAs) as string[]).map((uri) => new URL(uri)),
    successor: movedTo && !suspended ? actorUriOf(ctx, movedTo) : null,
    suspended: suspended ? true : null,
  };
  return account.bot ? new Service(values) : new Person(values);
}

/** What a Note needs besides its status: the rows it points at, read through the port. */
export interface NoteLookups {
  account(id: number): Promise<AccountRow | undefined>;
  status(id: number): Promise<StatusRow | undefined>;
  /** A status's attachments, in order. */
  media(statusId: number): Promise<MediaRow[]>;
  /** A status's poll. */
  poll(statusId: number): Promise<PollRow | undefined>;
  /** The quote a status makes, if it quotes. */
  quote(statusId: number): Promise<QuoteRow | undefined>;
}

/**
 * The statuses named and the accounts named (with every loaded status's author), read first so
 * that the renderers, which build Fedify's objects in one synchronous pass, look them up in memory.
 */
export async function loadParts(lookups: Pick<NoteLookups, "account" | "status">, statusIds: (number | null | undefined)[], accountIds: (number | null | undefined)[]): Promise<QuoteParts> {
  const statuses = new Map<number, StatusRow>();
  const accounts = new Map<number, AccountRow>();
  // In turn, not side by side: a caller may be inside a port transaction, whose statements are awaited one by one.
  for (const id of new Set(statusIds)) {
    if (id == null || statuses.has(id)) continue;
    const row = await lookups.status(id);
    if (row) statuses.set(id, row);
  }
  for (const id of new Set([...accountIds, ...[...statuses.values()].map((s) => s.accountId)])) {
    if (id == null || accounts.has(id)) continue;
    const row = await lookups.account(id);
    if (row) accounts.set(id, row);
  }
  return { account: (id) => accounts.get(id), status: (id) => statuses.get(id) };
}

const MEDIA_TYPES: Record<string, string> = { jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", webp: "image/webp", gif: "image/gif", avif: "image/avif", mp4: "video/mp4", webm: "video/webm", mp3: "audio/mpeg", ogg: "audio/ogg" };

/**
 * A local attachment as Mastodon's MediaAttachmentSerializer sends it: a Document with its media
 * type, URL, alt text (name), BlurHash, focal point ([x, y], when set), size, duration (video
 * and audio) and custom thumbnail (icon, which Mastodon shows as the preview of remote video and
 * audio). BlurHash and focal point are Mastodon's terms, which Fedify 2.3.6's Document lacks:
 * patches/README.md says how they are added and where the proposal to Fedify stands.
 */
function documentOf(urls: Urls, m: MediaRow): Document | null {
  if (m.file === null) return null;
  const meta = JSON.parse(m.meta) as { original?: { width?: number; height?: number; duration?: number }; focus?: { x?: unknown; y?: unknown } };
  const { original, focus } = meta;
  const focused = typeof focus?.x === "number" && typeof focus.y === "number" && Number.isFinite(focus.x) && Number.isFinite(focus.y);
  const seconds = original?.duration;
  return new Document({
    mediaType: mediaTypeOf(m.file),
    url: new URL(urls.media(m.file)),
    name: m.description,
    blurhash: m.blurhash,
    focalPoint: focused ? [focus.x as number, focus.y as number] : null,
    width: original?.width ?? null,
    height: original?.height ?? null,
    duration: typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0 ? Temporal.Duration.from({ milliseconds: Math.round(seconds * 1000) }) : null,
    icon: m.thumbnail ? new Image({ url: new URL(urls.media(m.thumbnail)), mediaType: mediaTypeOf(m.thumbnail) }) : null,
  });
}

const mediaTypeOf = (file: string) => MEDIA_TYPES[file.split(".").pop()?.toLowerCase() ?? ""] ?? null;

/** The actor IRI of an account, local or remote. */
export function actorUriOf(ctx: Context<void>, account: AccountRow): URL {
  return account.domain === null ? ctx.getActorUri(account.username) : new URL(account.uri!);
}

/** The IRI of a status, local or remote. */
export function noteUriOf(ctx: Context<void>, author: AccountRow, status: StatusRow): URL {
  return status.uri !== null ? new URL(status.uri) : ctx.getObjectUri(Note, { identifier: author.username, id: String(status.id) });
}

/** The context collection of a thread begun here, below its top's IRI (served by dispatchers.ts). */
function contextOf(ctx: Context<void>, top: StatusRow, author: AccountRow | undefined): URL[] {
  return author ? [new URL(`${noteUriOf(ctx, author, top).href}/context`)] : [];
}

/** The accounts a status mentions, as stored (an account gone since is left out). */
export async function mentionedAccounts(lookups: Pick<NoteLookups, "account">, status: StatusRow): Promise<AccountRow[]> {
  const found: AccountRow[] = [];
  for (const m of mentionsOf(status)) {
    const account = await lookups.account(m.id);
    if (account) found.push(account);
  }
  return found;
}

/**
 * A local status as a Note, addressed as Mastodon's ActivityPub::TagManager addresses it:
 * public has as:Public in `to`, the followers and the mentioned in `cc`; unlisted the
 * followers in `to`, as:Public and the mentioned in `cc`; private the followers in `to` and
 * the mentioned in `cc`; direct the mentioned alone. Mentions, hashtags and this server's
 * custom emojis it uses are its tags. Who may quote it is its interactionPolicy, and the post
 * it quotes is named as Mastodon names it (quote-vocab.ts).
 */
export async function noteOf(ctx: Context<void>, urls: Urls, author: AccountRow, status: StatusRow, lookups: NoteLookups): Promise<Note | Question> {
  // What it points at is read first; the Note is then built in one pass.
  const poll = status.hasPoll ? await lookups.poll(status.id) : undefined;
  // Fedify's Question has no `quote`: a poll's quote is not sent (Mastodon's polls rarely quote).
  const quote = poll ? undefined : await lookups.quote(status.id);
  const media = status.hasMedia ? await lookups.media(status.id) : [];
  const mentions = mentionsOf(status).map((m) => m.id);
  const parts = await loadParts(lookups, [status.inReplyToId, status.conversationId === status.id ? null : status.conversationId, quote?.quotedStatusId], [...mentions, quote?.quotedAccountId]);
  return renderNote(ctx, urls, author, status, { parts, mentioned: mentions.flatMap((id) => parts.account(id) ?? []), media, poll, quote });
}

/** The rows a Note is rendered from, read by noteOf. */
interface NoteRows {
  parts: QuoteParts;
  mentioned: AccountRow[];
  media: MediaRow[];
  poll: PollRow | undefined;
  quote: QuoteRow | undefined;
}

function renderNote(ctx: Context<void>, urls: Urls, author: AccountRow, status: StatusRow, rows: NoteRows): Note | Question {
  const { parts: lookups, mentioned, poll } = rows;
  const followers = ctx.getFollowersUri(author.username);
  const mentionUris = mentioned.map((a) => actorUriOf(ctx, a));
  const parent = status.inReplyToId === null ? undefined : lookups.status(status.inReplyToId);
  const parentAuthor = parent && lookups.account(parent.accountId);
  const domain = new URL(urls.publicUrl).host;
  const tags = [
    ...mentioned.map((a, i) => new Mention({ href: mentionUris[i]!, name: `@${a.username}@${a.domain ?? domain}` })),
    ...(JSON.parse(status.tags) as string[]).map((name) => new Hashtag({ href: new URL(`${urls.publicUrl}/tags/${encodeURIComponent(name)}`), name: `#${name}` })),
    ...emojisOf(status).map((e) => emojiOf(ctx, e)),
  ];
  const addressing: Record<string, [URL[], URL[]]> = {
    public: [[PUBLIC_COLLECTION], [followers, ...mentionUris]],
    unlisted: [[followers], [PUBLIC_COLLECTION, ...mentionUris]],
    private: [[followers], mentionUris],
    direct: [mentionUris, []],
  };
  const [tos, ccs] = addressing[status.visibility] ?? [[], []];
  const id = noteUriOf(ctx, author, status);
  const top = status.conversationId === status.id ? status : lookups.status(status.conversationId);
  const values = {
    id,
    attribution: ctx.getActorUri(author.username),
    content: status.contentHtml,
    summary: status.spoilerText === "" ? null : status.spoilerText,
    sensitive: status.sensitive,
    published: instant(status.createdAt),
    updated: status.editedAt === null ? null : instant(status.editedAt),
    url: new URL(statusUrl(urls, author.username, status.id)),
    replyTarget: parent && parentAuthor ? noteUriOf(ctx, parentAuthor, parent) : null,
    tos,
    ccs,
    tags,
    attachments: rows.media.flatMap((m) => documentOf(urls, m) ?? []),
    interactionPolicy: quotePolicyOf(ctx, author, status),
    // Where others find its replies and its thread, to fetch what they miss (dispatchers.ts serves both):
    // its replies collection (Mastodon's), and the thread's context collection (FEP-7888, as Mastodon 4.5)
    // when the thread began here (one begun elsewhere is its own server's to list).
    replies: status.uri === null ? new URL(`${id.href}/replies`) : null,
    contexts: status.uri === null && top && top.uri === null ? contextOf(ctx, top, top === status ? author : lookups.account(top.accountId)) : [],
  };
  return poll ? new Question({ ...values, ...questionOf(poll) }) : new Note({ ...values, ...quoteValuesOf(ctx, lookups, rows.quote) });
}

/**
 * A poll as Mastodon's Question: its options (oneOf, or anyOf when several may be chosen) as
 * Notes named by their titles with their counts as replies, its end, its voters, and `closed`
 * once ended.
 */
function questionOf(poll: PollRow) {
  const titles = JSON.parse(poll.options) as string[];
  const tallies = JSON.parse(poll.tallies) as number[];
  const options = titles.map((name, i) => new Note({ name, replies: new Collection({ totalItems: tallies[i] ?? 0 }) }));
  return {
    ...(poll.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
    endTime: instant(poll.expiresAt),
    voters: poll.votersCount,
    closed: poll.endedAt === null ? null : instant(poll.endedAt),
  };
}

/** The Create activity that published a status (the outbox items). */
export function createOf(ctx: Context<void>, note: Note | Question, author: AccountRow, status: StatusRow) {
  return new Create({
    id: new URL(`${note.id!.href}/activity`),
    actor: ctx.getActorUri(author.username),
    published: instant(status.createdAt),
    tos: note.toIds,
    ccs: note.ccIds,
    object: note,
  });
}
