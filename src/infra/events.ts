import type { NotificationRow, QuoteRow, RelayRow, StatusRow } from "../db/schema.ts";
import type { DatabasePort } from "../db/port.ts";

/**
 * Everything that happened, announced once by the service that did it; no route emits.
 * What follows each event is registered in one place, the table of consequences
 * (consequences.ts). Listeners come in two kinds, and the difference is when they run:
 *
 * - `within`: consequences that are part of the same write (counters, notification rows,
 *   home feeds, lists, conversations, stale render caches, a request approved when an account
 *   opens up). They run inside the emitting transaction, one after another, and the emitter
 *   awaits them (`await events.emit(...)`), so they commit or roll back with it; one that
 *   throws (or rejects) fails the write. They write through the database port, which finds the
 *   emitter's transaction by itself (on PostgreSQL, its connection).
 * - `afterCommit`: transports that tell the outside world (streams, federation, push, link
 *   cards, the remote media cache). They run only once the transaction that emitted the
 *   event committed, so what they announce is readable by anyone, and never for a write (or
 *   a GroupCommit item's savepoint) that rolled back. See AfterCommit for how the queue
 *   follows the transactions.
 *
 * Why two kinds: a consequence run after commit could be lost to a crash between the two (a
 * follow without its notification), and a transport told inside the transaction could show
 * clients a status whose write then rolled back, or one not yet readable when they fetch it.
 *
 * Services emit inside the transaction of the write (their own `db.transaction`, or the
 * group commit's when a route runs them through `writes.run`), so that `within` listeners
 * share it. An event emitted outside any transaction follows statements that have already
 * committed: its transports are told at once.
 */
export type DomainEvent =
  /** An access token was revoked (by its app, by sign-out, or as a replayed code's): its push subscriptions and streams end. */
  | { type: "token.revoked"; tokenId: number; accountId: number | null }
  | { type: "follow.created"; accountId: number; targetAccountId: number }
  | { type: "follow_request.created"; accountId: number; targetAccountId: number }
  | { type: "follow_request.authorized"; accountId: number; targetAccountId: number }
  /** The target refused the request (a remote requester is told with Reject). */
  | { type: "follow_request.rejected"; accountId: number; targetAccountId: number }
  | { type: "follow.removed"; accountId: number; targetAccountId: number }
  /** An announcement was published, or one was taken down; every user stream is told. */
  | { type: "announcement.published"; announcementId: number }
  | { type: "announcement.deleted"; announcementId: number }
  /** A reaction `name` to an announcement was added or taken back (its count changed). */
  | { type: "announcement.reaction"; announcementId: number; name: string }
  /** A user reported an account to this server (forwarded ones are sent on as Flag). */
  /** `accountId` reported `targetAccountId`: what staff's notification needs, without reading the report back. */
  | { type: "report.created"; reportId: number; accountId: number; targetAccountId: number }
  /** `targetAccountId` ended `accountId`'s follow or follow request (a domain block): a remote follower is told with Reject. */
  | { type: "follow.rejected"; accountId: number; targetAccountId: number }
  /** `accountId` blocked `targetAccountId`; `severedFollower` when the target had followed them or asked to (a remote one is told with Reject). */
  | { type: "block.created"; accountId: number; targetAccountId: number; severedFollower: boolean }
  /** `accountId` no longer blocks `targetAccountId` (a remote one is told with Undo). */
  | { type: "block.removed"; accountId: number; targetAccountId: number }
  /**
   * A status or boost was published (`original`: what a boost boosts, as it was read). The
   * emitter leaves `homeRecipients` empty: the home feed's `within` listener sets the feeds it
   * went into, and the transports, told after it, read them.
   */
  | {
      type: "status.created";
      status: StatusRow;
      original: StatusRow | null;
      homeRecipients: number[];
      /** A remote status fetched to fill a thread or a profile: counted, into no feed or list, notifying and streamed to no one. */
      backfill?: boolean;
    }
  /**
   * A status brought in from an account's archive (rookery accounts import-archive), dated as
   * it was written: counted, and nothing else. Not status.created: it goes into no home feed or
   * list, notifies nobody, and no transport hears of it (it is no new post to stream or federate).
   */
  | { type: "status.imported"; status: StatusRow }
  /** A status or boost is gone; `homeRecipients` and `listIds` are the feeds that held it. */
  | { type: "status.deleted"; status: StatusRow; homeRecipients: number[]; listIds: number[] }
  /** A status was edited (`previous`: as it was before); the feeds that hold it, as for a deletion. */
  | { type: "status.updated"; status: StatusRow; previous: StatusRow; homeRecipients: number[]; listIds: number[] }
  | { type: "notification.created"; notification: NotificationRow }
  /** Held-back notifications of `accountId` came into the list (a request accepted): clients reload it. */
  | { type: "notifications.merged"; accountId: number }
  /** `accountId` favourited `statusId`, written by `statusAccountId` (the favourite's own id names it to other servers). */
  | { type: "favourite.created"; favouriteId: number; accountId: number; statusId: number; statusAccountId: number }
  /** `accountId` took back the favourite `favouriteId` of `statusId`, written by `statusAccountId`. */
  | { type: "favourite.removed"; favouriteId: number; accountId: number; statusId: number; statusAccountId: number }
  /** Lists whose timelines a new status went into (streams of those lists are told). */
  | { type: "list.delivered"; status: StatusRow; listIds: number[] }
  | { type: "conversation.updated"; accountId: number; conversationId: number }
  | { type: "filters.changed"; accountId: number }
  /** A mute ended (unmuted; expired mutes lapse without an event). */
  | { type: "mute.removed"; accountId: number; targetAccountId: number }
  /** A profile changed (anything `update_credentials` sets). */
  | { type: "account.updated"; accountId: number }
  /**
   * Someone signed up (the API, an invite link): staff are told (`admin.sign_up`). `approved`
   * false: the account waits for them before it may sign in (REGISTRATIONS=approval).
   */
  | { type: "account.registered"; accountId: number; approved: boolean }
  /** A locked account opened up. */
  | { type: "account.unlocked"; accountId: number }
  /**
   * Staff deleted a local account (src/services/admin): its data is gone, its row a suspended
   * tombstone; the servers of `recipientIds` (the remote accounts that followed it) are sent a
   * Delete of its actor.
   */
  | { type: "account.deleted"; accountId: number; recipientIds: number[] }
  /** A local account moved to `targetAccountId` (its followers' servers are sent Move). */
  | { type: "account.moved"; accountId: number; targetAccountId: number }
  /** A poll is open until `expiresAt`: a new status's, or one an edit set again (its deadline counts from the edit). */
  | { type: "poll.opened"; pollId: number; statusId: number; expiresAt: number }
  /** `accountId` voted `choices` (option indexes) in a poll. */
  | { type: "poll.voted"; pollId: number; statusId: number; accountId: number; choices: number[] }
  /** `accountId` pinned (featured) its status `statusId`, or took the pin back. */
  | { type: "status.pinned"; accountId: number; statusId: number }
  | { type: "status.unpinned"; accountId: number; statusId: number }
  /** A poll's time came: its final counts stand (`accountId`: its author). */
  | { type: "poll.ended"; pollId: number; statusId: number; accountId: number }
  /**
   * Quote posts (src/services/quotes). Each carries the quote's row as it is after the change:
   * `statusId` the quoting status (by `accountId`), `quotedStatusId`/`quotedAccountId` the quoted
   * one (null while a remote quoted status is known only by `quotedUri`), `activityUri` the
   * QuoteRequest's id, `approvalUri` the QuoteAuthorization stamp of a remote quoted author.
   *
   * quote.requested: a local status quotes a remote one; the quote is pending, and the quoted
   * author's server is to be sent a QuoteRequest (id `activityUri`, object the quoted status's
   * IRI, instrument the quoting status) to answer with Accept (a stamp) or Reject.
   */
  | { type: "quote.requested"; quote: QuoteRow }
  /**
   * A quote was accepted: a local quoted status's (by its policy: a remote quoter is sent Accept
   * with our stamp), or a remote one's by its server's Accept or stamp. `withStatus`: decided as
   * the quoting status was stored, whose own announcement shows it; otherwise streams show the
   * quoting status again (Mastodon's DistributionWorker with `update`), as for rejected, revoked
   * and removed quotes.
   */
  | { type: "quote.accepted"; quote: QuoteRow; withStatus?: boolean }
  /** A pending quote was refused: by a local quoted status's policy (a remote quoter is sent Reject), or by the remote quoted author's server. */
  | { type: "quote.rejected"; quote: QuoteRow; withStatus?: boolean }
  /** An accepted quote was taken back by the quoted author (here: POST .../revoke, then its stamp's Delete is sent; or a remote stamp deleted). */
  | { type: "quote.revoked"; quote: QuoteRow }
  /** The quoting status is being deleted and its quote with it, or a remote quoting status's edit dropped or changed it (what an accepted one counted is counted back). */
  | { type: "quote.removed"; quote: QuoteRow }
  /** Who may quote a local status changed without an edit (PUT /api/v1/statuses/:id/interaction_policy): its quote_approval is new. */
  | { type: "quote_policy.changed"; status: StatusRow }
  /** The instance actor subscribed to a relay (it is sent Follow), or subscribes again after a refusal. */
  | { type: "relay.subscribed"; relay: RelayRow }
  /** A relay was unsubscribed from (it is sent Undo of its Follow); `relay` as it was. */
  | { type: "relay.unsubscribed"; relay: RelayRow }
  /** A federation rule (a domain blocked or allowed, or no longer) was written: other processes read the rules again. */
  | { type: "federation.rules_changed" };

/**
 * How a transport (streams, federation, push, link cards, the remote media cache) registers its
 * after-commit listeners; only the table of consequences (consequences.ts) calls it.
 */
export type Subscribe = (events: EventBus) => void;

/** A `within` listener may be async (it writes through the port); `emit` awaits each in turn. */
type Listener<T extends DomainEvent["type"]> = (event: Extract<DomainEvent, { type: T }>) => void | Promise<void>;

/** A transport is told after commit and nothing waits for it. */
type Transport<T extends DomainEvent["type"]> = (event: Extract<DomainEvent, { type: T }>) => void;

type AnyListener = (event: DomainEvent) => void | Promise<void>;

export class EventBus {
  private inside = new Map<string, AnyListener[]>();
  private after = new Map<string, AnyListener[]>();
  /** The database port says whether the emitting flow is in a transaction, and queues for its commit (AfterCommit on SQLite). */
  constructor(private db: Pick<DatabasePort, "inTransaction" | "afterCommit">) {}

  /** A consequence that is part of the write: runs inside the emitting transaction, awaited by `emit`. */
  within<T extends DomainEvent["type"]>(type: T, listener: Listener<T>) {
    add(this.inside, type, listener as AnyListener);
  }

  /** A transport: runs once the emitting transaction committed, never for one rolled back. */
  afterCommit<T extends DomainEvent["type"]>(type: T, listener: Transport<T>) {
    add(this.after, type, listener as AnyListener);
  }

  /**
   * Resolves once every `within` listener of the event ran, one after another in the order they
   * were registered (a nested transaction's statements must not interleave); a listener's
   * rejection rejects it, so the emitter's transaction rolls back, and its transports with it.
   */
  emit(event: DomainEvent): Promise<void> {
    // Transports hear an event before its consequences (the notification of a follow after
    // the follow), so inside a transaction they are queued before `within` listeners run;
    // outside one they are told at once, so only after the consequences are written.
    const listeners = this.inside.get(event.type);
    if (this.db.inTransaction) {
      this.tellTransports(event);
      return listeners ? runInTurn(listeners, event) : done;
    }
    if (!listeners) {
      // Nothing to wait for: told now (a serving thread's bus has no `within` listener).
      this.tellTransports(event);
      return done;
    }
    return runInTurn(listeners, event).then(() => this.tellTransports(event));
  }

  private tellTransports(event: DomainEvent) {
    // One task per transport: one that fails must not keep the others from the news.
    for (const listener of this.after.get(event.type) ?? []) this.db.afterCommit(() => void listener(event));
  }
}

const done = Promise.resolve();

async function runInTurn(listeners: AnyListener[], event: DomainEvent): Promise<void> {
  for (const listener of listeners) await listener(event);
}

function add(map: Map<string, AnyListener[]>, type: string, listener: AnyListener) {
  const list = map.get(type);
  if (list) list.push(listener);
  else map.set(type, [listener]);
}
