import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import type { AccountService } from "../accounts/accounts.ts";
import type { StatusActionService } from "../statuses/actions.ts";
import { BackgroundSlots } from "./background-slots.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { RemoteItem, RemotePages } from "./inputs.ts";
import type { FederationActors } from "./local-actors.ts";
import type { RemoteNotes } from "./notes.ts";

/**
 * The bounds of one profile's fill: the newest public posts of its outbox kept (read from two
 * pages at most), the pinned posts of its featured collection (one page), and the time it may take.
 */
export const HISTORY_BOUNDS = { statuses: 20, outboxPages: 2, pinned: 20, timeMs: 30_000 };

/** A profile is filled once a day at most (Mastodon's Account::STALE_THRESHOLD is a day too). */
export const HISTORY_COOLDOWN_MS = 24 * 60 * 60 * 1000;

/** Fewer of its statuses than this stored here: little of it is known, and opening its profile fills it. */
const LITTLE_KNOWN = 20;

/** How long opening a profile waits for its fill before answering with what is known. */
const VIEW_WAIT_MS = 3_000;

/** Profile fills under way at once, and waiting; past these, none starts. */
const RUNNING_FILLS = 2;
const WAITING_FILLS = 8;

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

/**
 * A remote account's pinned posts and newest public posts, fetched when a local account follows
 * it or a signed-in reader opens its profile while little of it is known, so that the profile is
 * not empty until its next post (Mastodon fetches the pinned posts, SynchronizeFeaturedCollection,
 * and not the outbox; GoToSocial neither). Once a day per account, two fills at once. Only the
 * account's own public posts are kept; they go into no home feed, neither now nor when the
 * follow is accepted (backfill). The pins are made what the featured collection says.
 */
export class AccountHistory {
  private slots = new BackgroundSlots(RUNNING_FILLS, WAITING_FILLS);
  private fills = new Map<number, Promise<unknown>>();

  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private accounts: AccountService,
    private notes: RemoteNotes,
    private actors: FederationActors,
    private actions: StatusActionService,
    /** Null while federation is off: nothing is fetched. */
    private fetcher: RemoteFetcher | null,
  ) {}

  /** A local account asked to follow `targetId`: a remote account's profile is filled in the background. */
  followed(followerId: number, targetId: number): void {
    // An after-commit listener: nothing waits for the fill, and a failed read starts none.
    void this.accounts
      .get(followerId)
      .then((follower) => (follower?.domain === null ? this.start(targetId) : null))
      .catch(() => null);
  }

  /** A signed-in reader opens a profile: when little of it is known, it is filled, waited for a moment. */
  async viewed(accountId: number): Promise<void> {
    const known = await this.db.get<{ n: number }>("SELECT count(*) AS n FROM (SELECT 1 FROM statuses WHERE account_id = ? LIMIT ?) AS s", [accountId, LITTLE_KNOWN]);
    if ((known?.n ?? 0) >= LITTLE_KNOWN) return;
    const started = await this.start(accountId);
    if (started) await Promise.race([started.fill, Bun.sleep(VIEW_WAIT_MS)]);
  }

  /** Resolves once the fills under way are done (tests, a stop). */
  async idle(): Promise<void> {
    while (this.fills.size > 0) await Promise.allSettled([...this.fills.values()]);
  }

  /** No fill starts any more; resolves once those under way are done (the database is closing). */
  async stop(): Promise<void> {
    this.slots.close();
    await this.idle();
  }

  /**
   * The fill of a remote account: the one under way, or one started now; null when none is due
   * (filled within the cooldown) or can start. Taken into `fills` while the cooldown is read, so
   * that two asking at once start one fill. The fill is returned in a box: an async function
   * would wait for the promise itself.
   */
  private async start(accountId: number): Promise<{ fill: Promise<unknown> } | null> {
    const running = this.fills.get(accountId);
    if (running) return { fill: running };
    if (!this.fetcher || this.slots.full()) return null;
    // The account is read inside what `fills` holds, so that two asking at once still start one fill.
    const due = (async () => {
      const account = await this.accounts.get(accountId);
      if (!account || account.domain === null || account.uri === null) return null;
      return (await this.due(accountId)) ? account : null;
    })().catch(() => null);
    this.fills.set(accountId, due);
    const account = await due;
    if (!account) {
      this.fills.delete(accountId);
      return null;
    }
    const fill = this.slots
      .run(() => this.fill(account))
      .catch(() => {})
      .finally(() => this.fills.delete(accountId));
    this.fills.set(accountId, fill);
    return { fill };
  }

  /** Not filled within the cooldown: marked filled now (a failed fill waits out the cooldown too). */
  private async due(accountId: number): Promise<boolean> {
    const last = await this.db.get<{ fetched_at: number }>("SELECT fetched_at FROM history_fetches WHERE account_id = ?", [accountId]);
    if (last !== undefined && this.clock.now() - last.fetched_at < HISTORY_COOLDOWN_MS) return false;
    await this.db.run("INSERT INTO history_fetches (account_id, fetched_at) VALUES (?, ?) ON CONFLICT (account_id) DO UPDATE SET fetched_at = excluded.fetched_at", [accountId, this.clock.now()]);
    return true;
  }

  private async fill(account: AccountRow): Promise<void> {
    const fetcher = this.fetcher!;
    const signal = AbortSignal.timeout(HISTORY_BOUNDS.timeMs);
    const actor = await fetcher.actor(account.uri!, signal).catch(() => null);
    if (!actor || actor.uri !== account.uri) return;
    if (actor.featuredUrl) {
      const featured = await fetcher.collection(actor.featuredUrl, signal).catch(() => null);
      const items = ((await featured?.nextPage(signal).catch(() => null)) ?? []).slice(0, HISTORY_BOUNDS.pinned);
      const pinned: StatusRow[] = [];
      for (const item of items) {
        const row = await this.keep(account, item, signal);
        if (row) pinned.push(row);
      }
      // A page was read: the pins become what it lists (Mastodon's SynchronizeFeaturedCollection).
      if (featured && !signal.aborted) await this.syncPins(account.id, pinned);
    }
    if (actor.outboxUrl) {
      const outbox = await fetcher.collection(actor.outboxUrl, signal).catch(() => null);
      await this.readOutbox(account, outbox, signal);
    }
  }

  /** The newest public posts of the outbox, page by page, up to the bounds. */
  private async readOutbox(account: AccountRow, outbox: RemotePages | null, signal: AbortSignal): Promise<void> {
    let kept = 0;
    for (let page = 0; outbox && page < HISTORY_BOUNDS.outboxPages && !signal.aborted && !this.slots.closed; page++) {
      const items = await outbox.nextPage(signal).catch(() => null);
      if (!items) return;
      for (const item of items) {
        if (kept >= HISTORY_BOUNDS.statuses || signal.aborted) return;
        if (await this.keep(account, item, signal)) kept++;
      }
    }
  }

  /**
   * An item stored when it is a public post of the account's own (fetched by its IRI unless its
   * page embedded it). One on another server than the account's is not its own (RemoteNotes
   * would refuse it) and is not fetched: a profile listing a thousand IRIs of a third server
   * would otherwise have this one ask that server for each (Mastodon's featured collection
   * skips them so, non_matching_uri_hosts?).
   */
  private async keep(account: AccountRow, item: RemoteItem, signal: AbortSignal): Promise<StatusRow | null> {
    if (!sameOrigin(item.uri, account.uri!)) return null;
    const node = item.embedded ?? (await this.fetcher!.thread(item.uri, signal).catch(() => null));
    if (!node || node.note.authorUri !== account.uri) return null;
    if (!node.note.to.includes(PUBLIC) && !node.note.cc.includes(PUBLIC)) return null;
    return this.notes.store(node.note, { fetched: true, backfill: true }).catch(() => null);
  }

  private async syncPins(accountId: number, listed: StatusRow[]): Promise<void> {
    const keep = new Set(listed.map((r) => r.id));
    for (const row of await this.actors.pinned(accountId)) if (!keep.has(row.id)) await this.quietly(() => this.actions.unpin(accountId, row.id));
    // Pinned in the order listed, the first on top (the newest pin shows first).
    for (const row of [...listed].reverse()) await this.quietly(() => this.actions.pin(accountId, row.id, { remote: true }));
  }

  /** Pinned already, or not pinnable (a boost, a private status): nothing changes. */
  private async quietly(change: () => Promise<unknown>): Promise<void> {
    try {
      await change();
    } catch {}
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
