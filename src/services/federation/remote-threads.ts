import type { StatusRow } from "../../db/schema.ts";
import type { StatusReader } from "../statuses/reader.ts";
import type { ThreadService } from "../statuses/threads.ts";

/** Fetches a status of another server by its IRI and stores it; set by src/federation. */
export type NoteFetcher = (uri: string, signal: AbortSignal) => Promise<StatusRow | null>;

/** Ancestors fetched for one context request at most, and how long that may take. */
const MAX_FETCHED = 10;
const FETCH_BUDGET_MS = 10_000;

/**
 * The ancestors of a remote reply that are not stored here yet, fetched from their servers
 * when its thread is asked for by a signed-in reader (`GET /api/v1/statuses/:id/context`), as Mastodon's
 * ThreadResolveWorker fetches them: each one up the chain, at most ten and for ten seconds,
 * stored as fetched statuses; a reply stored earlier is linked to its parent when that comes.
 */
export class RemoteThreads {
  /** Null while federation is off: nothing is fetched. */
  fetcher: NoteFetcher | null = null;

  constructor(
    private threads: ThreadService,
    private reader: StatusReader,
  ) {}

  /** A status's thread (ThreadService.context), its missing remote ancestors fetched first. */
  async context(row: StatusRow, viewerId: number | null): Promise<{ ancestors: StatusRow[]; descendants: StatusRow[] }> {
    // Fetching is for signed-in readers: an anonymous request sets off no requests elsewhere.
    if (viewerId !== null) await this.fillAncestors(row);
    return this.threads.context(row, viewerId);
  }

  private async fillAncestors(row: StatusRow): Promise<void> {
    if (!this.fetcher) return;
    const signal = AbortSignal.timeout(FETCH_BUDGET_MS);
    let top = this.threads.topAncestor(row);
    for (let fetched = 0; fetched < MAX_FETCHED && top.inReplyToUri !== null && !signal.aborted; fetched++) {
      const parent = await this.fetcher(top.inReplyToUri, signal).catch(() => null);
      // Not found, or stored but not linked (a status of this server's own that is not visible): stop.
      const linked = parent && this.reader.findRow(top.id)?.inReplyToId === parent.id;
      if (!parent || !linked) return;
      top = this.threads.topAncestor(parent);
    }
  }
}
