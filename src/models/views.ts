import type {
  AccountRow,
  AnnouncementRow,
  CustomFilterRow,
  FeaturedTagRow,
  MediaRow,
  NotificationRequestRow,
  NotificationRow,
  PollRow,
  ReportRow,
  StatusRow,
} from "../db/schema.ts";
import type { CustomEmoji } from "./emojis.ts";

// What services load and presenters render: the shapes between the two layers, so that
// neither imports the other's modules for them.

export interface PollView {
  row: PollRow;
  /** The viewer's chosen options; null for anonymous viewers. */
  ownVotes: number[] | null;
  expired: boolean;
}

export interface FlagSets {
  favourited: Set<number>;
  bookmarked: Set<number>;
  reblogged: Set<number>;
  pinned: Set<number>;
  muted: Set<number>;
}

export interface ViewerFlags {
  favourited: boolean;
  reblogged: boolean;
  muted: boolean;
  bookmarked: boolean;
  pinned: boolean;
}

declare const loaded: unique symbol;

/**
 * An account as presenters show it: its row and, for one that moved, the account it moved to
 * (Mastodon's `moved`), loaded by the service with the rest of its batch. The brand (a type
 * only) keeps a bare row from being shown without its move.
 */
export type AccountView = AccountRow & {
  movedTo?: AccountRow;
  readonly [loaded]: true;
};

/** A status's quote as its viewer is shown it (Mastodon's Quote, or ShallowQuote one level down). */
export interface QuoteView {
  /** pending, accepted, rejected, revoked, deleted, unauthorized, blocked_account, blocked_domain or muted_account. */
  state: string;
  /** The quoted status's id when it may be named (ShallowQuote's quoted_status_id). */
  quotedStatusId: number | null;
  /** The quoted status (Quote's quoted_status); null when not shown, and always one level down. */
  status: StatusView | null;
}

/** Who may quote a status (QuoteApproval), and how that applies to the viewer (`currentUser`). */
export interface QuoteApprovalView {
  automatic: string[];
  manual: string[];
  currentUser: string;
}

/** Everything needed to render one status for one viewer. */
export interface StatusView {
  row: StatusRow;
  account: AccountView;
  application: { name: string; website: string | null } | null;
  poll: PollView | null;
  media: MediaView[];
  reblog: StatusView | null;
  /** Null when nobody is signed in. */
  viewer: ViewerFlags | null;
  /** What it quotes; null when it quotes nothing (or nothing that is shown). */
  quote: QuoteView | null;
  /** Its own (a boost: its original's). */
  quoteApproval: QuoteApprovalView;
}

/** An attachment as stored (filled in by the media service). */
export type MediaView = MediaRow;

/**
 * A status rendered as every viewer sees it, in pieces of JSON text that the per-viewer parts
 * slot between (REST::StatusSerializer's key order):
 * `head` is `{"id":..."edited_at":null`; the viewer's flags follow; then `content` (the
 * JSON string); then the viewer's `filtered`; then `"reblog":` and the boosted status;
 * then `tail`, `,"application":..."emojis":[...]`; then the `quote`; then `after`,
 * `,"card":...,"poll":...`; then `approval`, `,"quote_approval":{"automatic":[...],"manual":[...]`,
 * which the viewer's `current_user` closes.
 */
export interface StatusParts {
  head: string;
  content: string;
  tail: string;
  after: string;
  approval: string;
  visibility: string;
  reblogOfId: number | null;
  /** It quotes something: its `quote` is the viewer's to render, never cached. */
  quoted: boolean;
}

export interface ProfileField {
  name: string;
  value: string;
  valueHtml: string;
  verifiedAt: number | null;
}

export interface Relationship {
  id: number;
  following: boolean;
  showingReblogs: boolean;
  notifying: boolean;
  languages: string[] | null;
  followedBy: boolean;
  blocking: boolean;
  blockedBy: boolean;
  muting: boolean;
  mutingNotifications: boolean;
  requested: boolean;
  requestedBy: boolean;
  /** The viewer blocks the account's domain. */
  domainBlocking: boolean;
  /** The viewer endorses the account on its profile. */
  endorsed: boolean;
}

/** An account with the id of the follow (or request) that listed it: the page cursor. */
export interface ListedAccount {
  account: AccountRow;
  cursor: number;
}

export interface TagHit {
  id: number | null;
  name: string;
  /** Per day, newest first: the day's start (ms), statuses and distinct accounts using the tag. */
  history: { day: number; uses: number; accounts: number }[];
}

export interface KeywordRow {
  id: number;
  filterId: number;
  keyword: string;
  wholeWord: boolean;
}

export interface FilterWithRules {
  filter: CustomFilterRow;
  keywords: KeywordRow[];
  statuses: { id: number; filterId: number; statusId: number }[];
}

/** A match as the FilterResult entity reports it. */
export interface FilterMatch {
  filter: CustomFilterRow;
  keywordMatches: string[] | null;
  statusMatches: string[] | null;
}

/** A featured tag with what its entity shows: the account's public and unlisted statuses carrying it. */
export interface FeaturedTagView extends FeaturedTagRow {
  statusesCount: number;
  lastStatusAt: number | null;
}

export interface WeekActivity {
  /** Monday 00:00 UTC of the ISO week (epoch ms). */
  week: number;
  statuses: number;
  logins: number;
  registrations: number;
}

export interface ReportView {
  report: ReportRow;
  target: AccountView;
  statusIds: number[];
  ruleIds: number[] | null;
}

export interface ReactionView {
  name: string;
  count: number;
  /** Whether the viewer reacted so; null without a viewer (the streams' rendering). */
  me: boolean | null;
  /** A custom emoji's images. */
  emoji: CustomEmoji | null;
}

export interface AnnouncementView {
  row: AnnouncementRow;
  html: string;
  /** The accounts the text mentions, as its formatter resolved them (remote ones with `acct`). */
  mentions: { id: number; username: string; url: string; acct?: string }[];
  statuses: { id: number; url: string }[];
  tags: string[];
  emojis: CustomEmoji[];
  reactions: ReactionView[];
  /** Dismissed by the viewer; null without a viewer. */
  read: boolean | null;
}

export interface NotificationGroup {
  key: string;
  /** The notification that stands for the group in this page (its newest there). */
  notification: NotificationRow;
  count: number;
  mostRecentId: number;
  /** Newest first, at most 8. */
  sampleAccountIds: number[];
  /** Set when the group comes from a page (GET /api/v2/notifications), not alone. */
  page?: { minId: number; latestAt: number };
}

export type NotificationRequest = NotificationRequestRow & { notificationsCount: number };

/**
 * What notifications (or their groups, or requests) and conversations show besides
 * themselves, loaded for a whole page at once by the service, which also decides what the
 * viewer may see: the presenter renders what it is given and leaves out what names anything
 * missing here.
 */
export interface Embeds {
  /** The accounts named (senders, participants), by id; gone ones are absent. */
  accounts: Map<number, AccountView>;
  /** The statuses named that the viewer may see. */
  statuses: StatusRow[];
  /** The reports admin.report notifications name, by id; gone ones are absent. */
  reports?: Map<number, ReportView>;
}

/** What a Web Push tells of a notification (the input of Mastodon's Web::NotificationSerializer). */
export interface PushNotificationView {
  /** The subscribing token; null when it could not be unsealed (the field is then left out). */
  accessToken: string | null;
  locale: string;
  notification: NotificationRow;
  from: AccountRow;
  /** The notification's status (the original, for a boost), if it has one. */
  status: StatusRow | null;
}
