import type { CustomEmoji } from "../../models/emojis.ts";
import type { MentionRef } from "../../models/mentions.ts";
import type { Visibility } from "./visibility.ts";

// What the inbox reads out of a remote Note for PostingService.publishRemote.

/** A status as a remote server published it, read from its activity by the inbox. */
export interface RemoteStatusInput {
  accountId: number;
  uri: string;
  url: string | null;
  /** Its HTML, sanitized (src/text/sanitize.ts), and that HTML as text (for filters). */
  html: string;
  text: string;
  spoilerText: string;
  sensitive: boolean;
  /** Its hashtags, normalized. */
  tags: string[];
  visibility: Visibility;
  language: string | null;
  createdAt: number;
  /** A stored status it replies to. */
  inReplyToId: number | null;
  /** The IRI of what it replies to, when that is not stored here. */
  inReplyToUri: string | null;
  /** Local accounts and stored remote ones its tags mention, in order. */
  mentions: MentionRef[];
  /** Its attachments, shown at their own server's URLs. */
  media: RemoteMedia[];
  /** The custom emojis of its server it uses. */
  emojis: CustomEmoji[];
  /** Its poll (a Question). */
  poll: RemotePoll | null;
  /** Who may quote it, as statuses.quote_approval keeps it (its interactionPolicy.canQuote); null when it states none. */
  quoteApproval?: string | null;
  /**
   * Fetched to fill a thread or a profile (ThreadFill, AccountHistory), not delivered: it goes
   * into no home feed or list and notifies no one, now or when its author is followed later.
   */
  backfill?: boolean;
}

/** A remote poll as its Question describes it. */
export interface RemotePoll {
  options: string[];
  tallies: number[];
  multiple: boolean;
  expiresAt: number;
  votersCount: number | null;
  /** When it closed, if it has. */
  closedAt: number | null;
}

/** An attachment of a remote status as its Note describes it. */
export interface RemoteMedia {
  type: "image" | "video" | "audio" | "unknown";
  url: string;
  description: string | null;
  blurhash: string | null;
  meta: { original?: { width: number; height: number; size: string; aspect: number }; focus?: { x: number; y: number } };
}

/** A post from the account's archive of another server, as ArchiveImport read it. */
export interface ImportedStatusInput {
  /** Made for its date (the importer checks it is free). */
  id: number;
  accountId: number;
  /** Sanitized as remote HTML is, and that HTML as text. */
  html: string;
  text: string;
  spoilerText: string;
  sensitive: boolean;
  visibility: "public" | "unlisted";
  language: string | null;
  createdAt: number;
  /** Its parent, when that was imported too. */
  inReplyToId: number | null;
  tags: string[];
  /** Uploads made of its attachments, in order. */
  mediaIds: number[];
  /** Its poll, ended. */
  poll: RemotePoll | null;
}
