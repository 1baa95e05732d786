import type { SQL } from "bun";
import { log } from "../log.ts";

/** The database's clock in epoch ms: leases are measured on it, one clock for every machine. */
const DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * How long a claim holds a job without renewal (renewed every third of it). Shorter than the
 * federation queue's: a server killed with -9 and started again gets another id worker number (the
 * dead one's is leased 30 s), so its name differs and its jobs wait for the lease; a renewal every
 * 10 s of an ffmpeg run of minutes costs nothing.
 */
export const MEDIA_LEASE_MS = 30_000;

/** The channel an upload's job NOTIFYs, waking every process's media queue at once. */
const MEDIA_CHANNEL = "rookery_media";

/** Images (sharp) or everything ffmpeg does (video, audio, gifv): the media queue's two lanes. */
export type MediaLane = "image" | "av";

/**
 * How the media queue (services/media/queue.ts) takes its jobs when several processes share
 * them. The single process on SQLite has none: its queue keeps the ids in memory.
 */
export interface MediaClaims {
  /** Takes the oldest waiting job of the lane that no live lease holds: its id, or null. */
  claim(lane: MediaLane): Promise<number | null>;
  /** Holds a running job longer; false once the lease is no longer this process's. */
  renew(id: number): Promise<boolean>;
  /** Tells every process that a job waits (after its row committed). */
  announce(): Promise<void>;
  /** Frees what this process's name held in an earlier life, and calls `wake` on each announcement. */
  start(wake: () => void): Promise<{ stop(): Promise<void> }>;
  /** How often a running job's lease is renewed, and how often an idle queue looks anyway, in ms. */
  readonly renewEveryMs: number;
  readonly pollMs: number;
}

export interface PgMediaClaimsOptions {
  sql: SQL;
  /** This process: the same name across its restarts, so that a restart frees what it held at once. */
  holder: string;
  /** How long a claim holds a job without renewal; renewed every third of it. */
  leaseMs?: number;
  /** How often an idle queue looks for jobs it was not told of (a lease run out, a missed NOTIFY). */
  pollMs?: number;
}

/**
 * Media jobs claimed from media_attachments itself (docs/scaling.md, "The media queue across
 * processes"): a row waiting (`queued`), or `in_progress` under a lease that ran out (its
 * process was killed), is taken with one UPDATE over a `FOR UPDATE SKIP LOCKED` subquery, so two
 * processes claiming at once never take the same row and never wait for each other.
 */
export class PgMediaClaims implements MediaClaims {
  private readonly sql: SQL;
  readonly holder: string;
  private readonly leaseMs: number;
  readonly renewEveryMs: number;
  readonly pollMs: number;

  constructor(options: PgMediaClaimsOptions) {
    this.sql = options.sql;
    this.holder = options.holder;
    this.leaseMs = options.leaseMs ?? MEDIA_LEASE_MS;
    this.renewEveryMs = Math.max(1, Math.floor(this.leaseMs / 3));
    this.pollMs = options.pollMs ?? 1000;
  }

  async claim(lane: MediaLane): Promise<number | null> {
    // `processing IN (...)` is the partial index's own condition, so the search is that index.
    const [row] = await this.sql.unsafe(
      `UPDATE media_attachments SET processing = 'in_progress', claimed_by = $1, claimed_until = ${DB_NOW} + $2
       WHERE id = (
         SELECT id FROM media_attachments
         WHERE processing IN ('queued', 'in_progress') AND (type = 'image') = $3
           AND (processing = 'queued' OR claimed_until IS NULL OR claimed_until < ${DB_NOW})
         ORDER BY id LIMIT 1
         FOR UPDATE SKIP LOCKED)
       RETURNING id::text AS id`,
      [this.holder, this.leaseMs, lane === "image"],
    );
    return row ? Number(row.id) : null;
  }

  async renew(id: number): Promise<boolean> {
    try {
      const rows = await this.sql.unsafe(`UPDATE media_attachments SET claimed_until = ${DB_NOW} + $1 WHERE id = $2 AND claimed_by = $3 AND processing = 'in_progress' RETURNING 1`, [
        this.leaseMs,
        id,
        this.holder,
      ]);
      return rows.length > 0;
    } catch (e) {
      log("warn", "media queue: a claim could not be renewed", { media_id: id, error: String(e).split("\n")[0] });
      return true;
    }
  }

  async announce(): Promise<void> {
    await this.sql`SELECT pg_notify(${MEDIA_CHANNEL}, '')`;
  }

  async start(wake: () => void): Promise<{ stop(): Promise<void> }> {
    // Only this name's own claims: other processes' live leases are theirs.
    await this.sql`UPDATE media_attachments SET claimed_until = NULL WHERE claimed_by = ${this.holder} AND processing = 'in_progress'`;
    const subscription = await this.sql.listen(MEDIA_CHANNEL, () => wake());
    return { stop: () => subscription.unlisten().catch(() => {}) };
  }
}
