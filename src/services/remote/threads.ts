import type { StatusRow } from "../../db/schema.ts";
import { OwnersWork } from "../../errors.ts";
import type { AsyncRefreshView } from "../async-refreshes.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { ThreadService } from "../statuses/threads.ts";
import type { RemoteFetcher } from "./fetcher.ts";
import type { RemoteNotes } from "./notes.ts";
import type { ThreadFill } from "./thread-fill.ts";

/** Ancestors fetched for one context request at most, and how long that may take. */
const MAX_FETCHED = 10;
const FETCH_BUDGET_MS = 10_000;

/**
 * The ancestors of a remote reply that are not stored here yet, fetched from their servers
 * when its thread is asked for by a signed-in reader (`GET /api/v1/statuses/:id/context`), as Mastodon's
 * ThreadResolveWorker fetches them: each one up the chain, at most ten and for ten seconds,
 * stored as fetched statuses; a reply stored earlier is linked to its parent when that comes.
 * Then the thread's missing replies are fetched in the background (ThreadFill), as Mastodon
 * 4.5 fetches them, and the reader is told of that work (its async refresh).
 */
export class RemoteThreads {
  constructor(
    private threads: ThreadService,
    private reader: StatusReader,
    private notes: RemoteNotes,
    private replies: ThreadFill,
    /** Null while federation is off: nothing is fetched. */
    private fetcher: RemoteFetcher | null,
    /**
     * On a serving thread (WEB_THREADS > 1): whether the main thread federates. Such a thread
     * fetches nothing (it has no fetcher) and answers a context only when the main thread would
     * fetch nothing and tell of no fill either; else it throws OwnersWork, and the request is
     * passed to the main thread. Null on the main thread.
     */
    private servingThread: { federation: boolean } | null = null,
  ) {}

  /**
   * A status's thread (ThreadService.context), its missing remote ancestors fetched first, and
   * the refresh of its replies when they are being fetched (started now for a signed-in reader).
   */
  async context(row: StatusRow, viewerId: number | null): Promise<{ ancestors: StatusRow[]; descendants: StatusRow[]; refresh: AsyncRefreshView | null }> {
    if (this.servingThread) return this.contextHere(row, viewerId, this.servingThread.federation);
    // Fetching is for signed-in readers: an anonymous request sets off no requests elsewhere.
    const filled = viewerId !== null ? await this.fillAncestors(row) : null;
    // The whole thread's replies, from its top; when the top is this server's own (replies to it
    // are delivered here, and no one else lists them), those of the remote status opened.
    const top = filled ?? (await this.threads.topAncestor(row));
    const from = top.uri === null && row.uri !== null ? row : top;
    // Anyone is told of a fill under way, as Mastodon does; only a signed-in reader starts one.
    const refresh = viewerId !== null ? await this.replies.refresh(from) : this.replies.running(from);
    return { ...(await this.threads.context(row, viewerId)), refresh };
  }

  /**
   * `context` on a serving thread, the same decisions read without acting on them: with
   * federation on, a signed-in reader has missing ancestors fetched and a due fill started, and
   * anyone is told of a fill under way (its refresh, counted as it goes, is the main thread's).
   */
  private async contextHere(row: StatusRow, viewerId: number | null, federation: boolean): Promise<{ ancestors: StatusRow[]; descendants: StatusRow[]; refresh: null }> {
    const starts = federation && viewerId !== null;
    const top = await this.threads.topAncestor(row);
    if (starts && top.inReplyToUri !== null) throw new OwnersWork();
    const from = top.uri === null && row.uri !== null ? row : top;
    if (await this.replies.ownersWork(from, starts)) throw new OwnersWork();
    return { ...(await this.threads.context(row, viewerId)), refresh: null };
  }

  /** The status's top ancestor once those missing were fetched (null without a fetcher, or when a fetch stopped). */
  private async fillAncestors(row: StatusRow): Promise<StatusRow | null> {
    const fetcher = this.fetcher;
    if (!fetcher) return null;
    const signal = AbortSignal.timeout(FETCH_BUDGET_MS);
    let top = await this.threads.topAncestor(row);
    for (let fetched = 0; fetched < MAX_FETCHED && top.inReplyToUri !== null && !signal.aborted; fetched++) {
      const parent = await this.fetchStatus(fetcher, top.inReplyToUri, signal).catch(() => null);
      // Not found, or stored but not linked (a status of this server's own that is not visible): stop.
      const linked = parent && (await this.reader.findRow(top.id))?.inReplyToId === parent.id;
      if (!parent || !linked) return null;
      top = await this.threads.topAncestor(parent);
    }
    return top;
  }

  /** A status of another server by its IRI, fetched and stored (null when it is none). */
  private async fetchStatus(fetcher: RemoteFetcher, uri: string, signal: AbortSignal): Promise<StatusRow | null> {
    const found = await fetcher.object(uri, signal);
    return found && "note" in found ? this.notes.store(found.note, { fetched: true }) : null;
  }
}
