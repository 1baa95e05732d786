import type { StatusRow } from "../../db/schema.ts";
import type { PollInput } from "./poll-input.ts";
import type { Visibility } from "./visibility.ts";

// What posting takes in (a route's parameters, a prepared status) and the collaborators it attaches with.

/** POST /api/v1/statuses parameters, as the route read them. */
export interface StatusInput {
  text?: string;
  mediaIds?: string[];
  poll?: PollInput;
  inReplyToId?: string;
  sensitive?: boolean;
  spoilerText?: string;
  visibility?: string;
  language?: string;
  /** The status to quote (Mastodon 4.5's quoted_status_id). */
  quotedStatusId?: string;
  /** Who may quote this one: public | followers | nobody (quote_approval_policy); the user's default when absent. */
  quotePolicy?: string;
}

/** A status that passed every check and can be published now or at its scheduled time. */
export interface PreparedStatus {
  accountId: number;
  applicationId: number | null;
  text: string;
  spoilerText: string;
  sensitive: boolean;
  visibility: Visibility;
  language: string | null;
  inReplyToId: number | null;
  mediaIds: number[];
  poll: { options: string[]; expiresIn: number; multiple: boolean; hideTotals: boolean } | null;
  /** The status it quotes (checked when prepared, checked again when published). */
  quotedStatusId: number | null;
  /** Its quote_approval, as the row keeps it. */
  quoteApproval: string;
}

/** Quotes, as the quote service provides them (src/services/quotes). */
export interface QuoteAttacher {
  /** The status `accountId` may quote, or Mastodon's 404. */
  quotable(id: string, accountId: number): Promise<StatusRow>;
  /** Records the quote of a new status, in its (port) transaction. */
  attach(status: StatusRow, quoted: StatusRow): Promise<unknown>;
  /** The status's HTML with the fallback link to what it quotes, for clients that do not show quotes. */
  fallbackHtml(quoted: StatusRow, quotedAuthorUsername: string, text: string, html: string): string;
}

/** Media checks and attachment, provided by the media service. */
export interface MediaAttacher {
  /** The caller's unattached media for these ids, in order; throws Mastodon's errors. */
  resolve(accountId: number, ids: string[]): Promise<number[]>;
  /** Puts them on a new status, in its (port) transaction. */
  attach(statusId: number, mediaIds: number[]): Promise<void>;
}
