import type { CustomEmoji } from "../../models/emojis.ts";
import type { ProfileField } from "../../models/views.ts";
import type { RemoteMedia, RemotePoll } from "../statuses/remote-input.ts";

// What other servers' documents say, as src/federation reads them out of ActivityPub: plain
// values, no Fedify object. What may need a fetch to read (an author not stored yet, a tag or
// an image given by reference) is a function, called only once the rules here want it, so
// that a duplicate or an activity that concerns nobody here sets off no request.

/** An IRI as this server reads it: one of its own actors or statuses, or another server's. */
export interface IriRef {
  href: string;
  /** On this server's origin. */
  ours: boolean;
  /** The identifier of one of this server's actors it names (/users/:identifier). */
  actor: string | null;
  /** One of this server's statuses it names (/users/:identifier/statuses/:id), as written. */
  status: { identifier: string; id: string } | null;
}

/** A remote actor's profile: its note and fields cleaned, its images' and emojis' addresses (http(s) only). */
export interface RemoteProfile {
  noteHtml: string;
  fields: ProfileField[];
  avatarRemoteUrl: string | null;
  headerRemoteUrl: string | null;
  emojis: CustomEmoji[];
}

/** A remote actor document, as it states itself (its IRI is its `id`). */
export interface RemoteActorInput {
  uri: string;
  inboxUrl: string | null;
  sharedInboxUrl: string | null;
  followersUrl: string | null;
  /** Its featured collection (pinned statuses). */
  featuredUrl: string | null;
  /** Its outbox (its posts, newest first). */
  outboxUrl: string | null;
  /** The actors it says it also is (alsoKnownAs): a move to it is believed when they name the old one. */
  aliases: string[];
  /** The account it says it moved to (movedTo), if it says so. */
  movedTo: string | null;
  /** Its preferredUsername, as given. */
  username: string;
  displayName: string;
  /** Its profile page, as given. */
  url: string | null;
  locked: boolean;
  /** A Service or an Application. */
  bot: boolean;
  discoverable: boolean;
  indexable: boolean;
  publishedAt: number | null;
  /** Its keys (publicKey, assertionMethod). */
  keyIds: string[];
  /** Its note, fields, avatar, header and emojis: what it only links to is fetched. */
  profile(): Promise<RemoteProfile>;
}

/** Where an activity's actor is: its IRI, and its document when it is not stored here. */
export interface ActorSource {
  uri: string;
  /** Its document (checked to be the actor at `uri`), null when it cannot be had. */
  load(): Promise<RemoteActorInput | null>;
}

/** A remote Note or Question, as it states itself. */
export interface RemoteNoteInput {
  uri: string;
  /** Its attributedTo. */
  authorUri: string;
  /** The author's document, fetched when it is not stored here (null when it cannot be had). */
  author(): Promise<RemoteActorInput | null>;
  to: string[];
  cc: string[];
  inReplyTo: IriRef | null;
  /** Its `url`, as given. */
  url: string | null;
  /** A Note's `name` (a vote, when it answers a poll here); null for a Question. */
  name: string | null;
  /** Its content and summary as given (HTML, not cleaned). */
  content: string;
  summary: string;
  sensitive: boolean;
  publishedAt: number | null;
  updatedAt: number | null;
  /** What its Mention tags and the addressees on this server name, and its hashtags (normalized, once each). */
  tags(): Promise<{ mentioned: IriRef[]; hashtags: string[] }>;
  attachments(): Promise<RemoteMedia[]>;
  emojis(): Promise<CustomEmoji[]>;
  /** A Question's poll; null for a Note, or one that is not a usable poll. */
  poll(): Promise<RemotePoll | null>;
  /** The post it quotes (FEP-044f, or a legacy quote), null when none. */
  quote(): Promise<RemoteQuoteInput | null>;
  /** Who may quote it (interactionPolicy.canQuote), null when it states nothing. */
  quotePolicy: RemoteQuotePolicy | null;
}

/** The post a Note quotes, as it names it. */
export interface RemoteQuoteInput {
  /** The quoted post's IRI (http(s)); null for a quote of a deleted post named by a bare Tombstone. */
  quoted: IriRef | null;
  /** Its stamp (quoteAuthorization), as the quoting post names it. */
  approvalUri: string | null;
  /** Named by quoteUrl, _misskey_quote or quoteUri alone: from a server that asks nobody. */
  legacy: boolean;
  /** Its `quote` is a Tombstone: the quoted post is gone. */
  deleted: boolean;
}

/** interactionPolicy.canQuote: the IRIs (actors, collections, as:Public) in each approval list. */
export interface RemoteQuotePolicy {
  automatic: string[];
  manual: string[];
}

/**
 * A QuoteAuthorization (FEP-044f's stamp) as its server served it at its IRI: what it says,
 * as given. The rules decide whether it proves anything.
 */
export interface RemoteStampInput {
  /** Its `id`; the fetcher has checked it is the IRI it was fetched at, on the same origin. */
  id: string;
  /** Its type is (or includes) QuoteAuthorization. */
  isStamp: boolean;
  attributedTo: string | null;
  interactingObject: string | null;
  interactionTarget: string | null;
}

/**
 * A status read to fill its thread: the Note, and the collections its server lists other
 * statuses of the thread in: its `replies` (Mastodon's, paged) and its `context` (FEP-7888's
 * conversation collection, which Mastodon 4.5 serves as a Collection), when it names them.
 */
export interface RemoteThreadNode {
  note: RemoteNoteInput;
  replies: RemotePages | null;
  /** The `context` IRI, and its collection when it is one. */
  contextUri: string | null;
  context: RemotePages | null;
}

/** A collection of another server read a page at a time: each page asks its server once at most. */
export interface RemotePages {
  /** The next page's items (the first call: the first page's), or null once there are no more. */
  nextPage(signal?: AbortSignal): Promise<RemoteItem[] | null>;
}

/**
 * An item of a collection page: its IRI (a Create's object's, in an outbox), and the status as
 * the page embedded it, when its server is the page's own (one that names another server is
 * fetched from there, by its IRI, as an item given by reference).
 */
export interface RemoteItem {
  uri: string;
  embedded: RemoteThreadNode | null;
}
