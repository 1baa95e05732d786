import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { SharedIds } from "../../infra/shared-ids.ts";
import type { AsyncRefreshes, AsyncRefreshView } from "../async-refreshes.ts";
import { BackgroundSlots } from "./background-slots.ts";
import type { RemoteAccounts } from "./accounts.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { RemoteItem, RemotePages, RemoteThreadNode } from "./inputs.ts";
import type { RemoteNotes } from "./notes.ts";

/**
 * The bounds of one thread's fill (Mastodon's FetchAllRepliesWorker has 1,000 replies and 500
 * pages; a small server takes less): statuses read (fetched, or embedded in a page), collection
 * pages read (an empty collection is none), levels of replies below the top followed, and the time it may take. Requests go
 * four at a time within a fill, under the outgoing-HTTP module's own per-host and total limits.
 */
export const THREAD_FILL_BOUNDS = { statuses: 200, pages: 100, depth: 20, timeMs: 60_000, parallel: 4 };

/** Mastodon's Status::FETCH_REPLIES_COOLDOWN_MINUTES: a thread's replies are fetched once in this. */
export const REPLIES_COOLDOWN_MS = 15 * 60 * 1000;

/** When a thread's replies were last fetched (reply_fetches), read when it is opened and written when a fill starts. */
const FETCHED_AT = "SELECT fetched_at FROM reply_fetches WHERE status_id = ?";
const TOUCH = "INSERT INTO reply_fetches (status_id, fetched_at) VALUES (?, ?) ON CONFLICT (status_id) DO UPDATE SET fetched_at = excluded.fetched_at";

/** Fills of different threads under way at once, and waiting for a turn; past these, none starts (the next request tries again). */
const RUNNING_FILLS = 2;
const WAITING_FILLS = 8;

/** One job of a fill: a status to read, how deep it is, and the status it must answer (null: any of the thread, from its context). */
interface Job {
  uri: string;
  embedded: RemoteThreadNode | null;
  depth: number;
  parentUri: string | null;
}

/**
 * The missing replies of a remote thread, fetched in the background when a signed-in reader
 * opens it (Mastodon 4.5's ActivityPub::FetchAllRepliesWorker): from the thread's top, through
 * each status's `replies` collection, page after page, and through the top's `context`
 * collection (FEP-7888) when its server offers one. The request is answered at once with what
 * is known; the client is given an async refresh to follow (`Mastodon-Async-Refresh`), whose
 * result count is the statuses stored so far, and asks again once it is finished.
 *
 * At most once per thread per REPLIES_COOLDOWN_MS (kept in reply_fetches, so a restart does
 * not undo it), one fill per thread at a time, RUNNING_FILLS at a time in all. Only what its
 * own server says is believed: a status is stored as fetched by its IRI (RemoteNotes checks
 * that its author is of the same origin), a status listed among another's replies is kept
 * only if it says it answers that one, and one listed in the context only if it answers a
 * status of the thread kept before it (or after it, in the same fill). What is stored goes
 * into no home feed (backfill).
 */
export class ThreadFill {
  private slots = new BackgroundSlots(RUNNING_FILLS, WAITING_FILLS);
  /** Fills under way, by the top's id. */
  private fills = new Map<number, Promise<unknown>>();

  constructor(
    private db: DatabasePort,
    private clock: Clock,
    private notes: RemoteNotes,
    private remote: RemoteAccounts,
    private refreshes: AsyncRefreshes,
    /** Null while federation is off: nothing is fetched. */
    private fetcher: RemoteFetcher | null,
    /**
     * The tops of the fills under way, shared with the serving threads (WEB_THREADS > 1; null
     * without): the main thread adds and removes, a serving thread reads (`ownersWork`).
     */
    private underWay: SharedIds | null = null,
  ) {}

  /**
   * The thread of `top` is being filled, or starts to be now: its refresh; null when it is not
   * to be filled (a local or non-public top, fetched within the cooldown, too many fills).
   */
  async refresh(top: StatusRow): Promise<AsyncRefreshView | null> {
    const known = this.running(top);
    if (known) return known;
    const key = refreshKey(top);
    if (!(await this.shouldFill(top))) return null;
    // Another request may have started it while this one read the cooldown.
    const started = this.running(top);
    if (started) return started;
    if (this.slots.full()) return null;
    // Running from here on: a request that comes meanwhile is told of this fill and starts none.
    const refresh = this.refreshes.create(key, { countResults: true });
    try {
      await this.db.run(TOUCH, [top.id, this.clock.now()]);
    } catch (error) {
      this.refreshes.finish(key);
      throw error;
    }
    // Before the answer: a read of this thread on a serving thread, from now on, is passed here.
    this.underWay?.add(top.id);
    const fill = this.slots
      .run(() => this.fill(top, key))
      .catch(() => {})
      .finally(() => {
        this.refreshes.finish(key);
        this.fills.delete(top.id);
        this.underWay?.remove(top.id);
      });
    this.fills.set(top.id, fill);
    return refresh;
  }

  /** The refresh of the thread of `top` while it is being filled. */
  running(top: StatusRow): AsyncRefreshView | null {
    const known = this.refreshes.find(refreshKey(top));
    return known?.status === "running" ? known : null;
  }

  /** Resolves once the fills under way are done (tests, the benchmark, a stop). */
  async idle(): Promise<void> {
    while (this.fills.size > 0) await Promise.allSettled([...this.fills.values()]);
  }

  /** No fill starts any more; resolves once those under way are done (the database is closing). */
  async stop(): Promise<void> {
    this.slots.close();
    await this.idle();
  }

  /**
   * On a serving thread, which starts no fill and has none of the main thread's refreshes:
   * whether the main thread would tell of a fill of `top`'s thread (one under way, for anyone)
   * or try to start one (for a signed-in reader, `starts`, when one is due; whether a slot is
   * free is the main thread's to say). Read only: the reply_fetches row the main thread wrote
   * before it answered, and the tops under way it shares.
   */
  async ownersWork(top: StatusRow, starts: boolean): Promise<boolean> {
    return (this.underWay?.has(top.id) ?? false) || (starts && (await this.due(top)));
  }

  /** Mastodon's should_fetch_replies?, while federation is on. */
  private async shouldFill(top: StatusRow): Promise<boolean> {
    return this.fetcher !== null && (await this.due(top));
  }

  /** Mastodon's should_fetch_replies?: a remote status others may see, not fetched within the cooldown. */
  private async due(top: StatusRow): Promise<boolean> {
    if (top.uri === null || (top.visibility !== "public" && top.visibility !== "unlisted")) return false;
    const last = (await this.db.get<{ fetched_at: number }>(FETCHED_AT, [top.id]))?.fetched_at;
    return last === undefined || this.clock.now() - last >= REPLIES_COOLDOWN_MS;
  }

  private async fill(top: StatusRow, key: string): Promise<void> {
    const fetcher = this.fetcher!;
    const bounds = THREAD_FILL_BOUNDS;
    const signal = AbortSignal.timeout(bounds.timeMs);
    const seen = new Set<string>([top.uri!]);
    let statuses = 0;
    let pages = 0;
    const stop = () => signal.aborted || this.slots.closed;
    const queue: Job[] = [];
    /** Items of a page become jobs while the bound of statuses allows. */
    const enqueue = (items: RemoteItem[], depth: number, parentUri: string | null) => {
      for (const item of items) {
        if (seen.size > bounds.statuses) return;
        if (seen.has(item.uri)) continue;
        seen.add(item.uri);
        queue.push({ uri: item.uri, embedded: item.embedded, depth, parentUri });
      }
    };
    /** A collection's pages, while the bounds allow. */
    const walk = async (collection: RemotePages | null, depth: number, parentUri: string | null) => {
      while (collection && pages < bounds.pages && seen.size <= bounds.statuses && !stop()) {
        const items = await collection.nextPage(signal).catch(() => null);
        if (!items) return;
        pages++;
        enqueue(items, depth, parentUri);
      }
    };
    /** The thread's statuses kept so far (and its top): a status from the context is kept only by answering one of them. */
    const joined = new Set<string>([top.uri!]);
    /** Statuses from the context whose parent has not been kept (yet), by that parent: kept once it is, else never. */
    const parked = new Map<string, { node: RemoteThreadNode; job: Job }[]>();
    const keep = async (node: RemoteThreadNode, job: Job): Promise<void> => {
      const known = (await this.remote.statusByUri(node.note.uri)) !== undefined;
      const row = await this.notes.store(node.note, { fetched: true, backfill: true }).catch(() => null);
      if (!row) return;
      if (!known) this.refreshes.increment(key);
      joined.add(node.note.uri);
      const waiting = parked.get(node.note.uri) ?? [];
      parked.delete(node.note.uri);
      for (const child of waiting) await keep(child.node, child.job);
      if (job.depth < bounds.depth) await walk(node.replies, job.depth + 1, node.note.uri);
    };
    const visit = async (job: Job) => {
      statuses++;
      const node = job.embedded ?? (await fetcher.thread(job.uri, signal).catch(() => null));
      if (!node || stop()) return;
      // A status listed among another's replies must say it answers that one; one from the
      // context, that it answers a status of the thread: a context may list anything of any
      // server (replies to other threads, statuses answering each other), and what hangs from
      // nothing kept here is not of this thread.
      const answers = node.note.inReplyTo?.href ?? null;
      if (job.parentUri !== null ? answers !== job.parentUri : answers === null) return;
      if (job.parentUri === null && !joined.has(answers!)) {
        parked.set(answers!, [...(parked.get(answers!) ?? []), { node, job }]);
        return;
      }
      await keep(node, job);
    };

    const root = await fetcher.thread(top.uri!, signal).catch(() => null);
    if (!root) return;
    joined.add(root.note.uri);
    // The context first: a server that offers one lists the whole thread there.
    await walk(root.context, 1, null);
    await walk(root.replies, 1, root.note.uri);
    const working = new Set<Promise<void>>();
    while (!stop()) {
      while (queue.length > 0 && working.size < bounds.parallel && statuses < bounds.statuses && !stop()) {
        const job = visit(queue.shift()!).catch(() => {});
        working.add(job);
        void job.finally(() => working.delete(job));
      }
      if (working.size === 0) break;
      await Promise.race(working);
    }
    await Promise.allSettled(working);
  }
}

/** Mastodon's key of a status's context refresh, here the thread's top's. */
export const refreshKey = (top: StatusRow) => `context:${top.id}:refresh`;
