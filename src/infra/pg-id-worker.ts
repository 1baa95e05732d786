import type { SQL } from "bun";
import { hostname } from "node:os";
import { MAX_ID_WORKERS, type IdWorker } from "../ids.ts";
import { log } from "../log.ts";

/** The database's clock in epoch ms: leases are measured on it, one clock for every machine. */
const DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

export interface IdWorkerLeaseOptions {
  sql: SQL;
  /** How many numbers there are (ID_WORKER's <how many>): a power of two up to 256. */
  workers: number;
  /** Who holds it, for the operator reading id_workers; the host and process id by default. */
  holder?: string;
  /** How long a number stays taken without renewal; renewed every third of it. */
  leaseMs?: number;
  /**
   * Told when a renewal finds the number taken by another process (this one stalled past its
   * lease): both would make the same ids, so the process must stop making them (exit).
   */
  onLost?: () => void;
}

/**
 * ID_WORKER claimed from PostgreSQL when the operator gives none: the lowest number no live
 * lease holds (a row of id_workers per number), leased and renewed while the process lives. A
 * process killed without a word (kill -9, a lost machine) stops renewing and its number is free
 * again once the lease is over, so no two live processes share a number. A dead process's ids
 * all predate its lease's end, and the next holder seeds its generator from the largest id
 * stored (IdGenerator.seed), so a number handed on makes no id twice either.
 */
export class IdWorkerLease {
  private constructor(
    private readonly sql: SQL,
    readonly idWorker: IdWorker,
    readonly holder: string,
    private readonly leaseMs: number,
    private readonly onLost: () => void,
    private timer: ReturnType<typeof setInterval> | null = null,
  ) {}

  /** Leases the lowest free number; throws when every number is held by a live process. */
  static async claim(options: IdWorkerLeaseOptions): Promise<IdWorkerLease> {
    const { sql, workers } = options;
    if (!Number.isInteger(workers) || workers < 1 || workers > MAX_ID_WORKERS) throw new RangeError(`workers must be a whole number from 1 to ${MAX_ID_WORKERS}`);
    const holder = options.holder ?? `${hostname()}:${process.pid}`;
    const leaseMs = options.leaseMs ?? 30_000;
    // One claimer at a time (a transaction-scoped advisory lock): two processes starting together
    // would otherwise both see the same number free.
    const worker = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended('id_workers', 0))`;
      const [row] = await tx.unsafe(
        `INSERT INTO id_workers (worker, holder, leased_until)
         SELECT n, $1, ${DB_NOW} + $2 FROM generate_series(0, $3 - 1) AS n
         WHERE NOT EXISTS (SELECT 1 FROM id_workers w WHERE w.worker = n AND w.leased_until >= ${DB_NOW})
         ORDER BY n LIMIT 1
         ON CONFLICT (worker) DO UPDATE SET holder = excluded.holder, leased_until = excluded.leased_until
         RETURNING worker`,
        [holder, leaseMs, workers],
      );
      return row ? Number(row.worker) : null;
    });
    if (worker === null) throw new Error(`every id worker number (${workers}) is held by a live process: raise ID_WORKER's <how many> or stop one`);
    const lease = new IdWorkerLease(sql, { worker, workers }, holder, leaseMs, options.onLost ?? (() => {}));
    lease.timer = setInterval(() => void lease.renew(), Math.max(1, Math.floor(leaseMs / 3)));
    lease.timer.unref?.();
    return lease;
  }

  /** Extends the lease; false (and onLost) when another process holds the number now. */
  async renew(): Promise<boolean> {
    try {
      const rows = await this.sql.unsafe(`UPDATE id_workers SET leased_until = ${DB_NOW} + $1 WHERE worker = $2 AND holder = $3 RETURNING 1`, [
        this.leaseMs,
        this.idWorker.worker,
        this.holder,
      ]);
      if (rows.length > 0) return true;
      this.stopRenewing();
      log("error", "id worker: the number's lease was lost to another process", { worker: this.idWorker.worker });
      this.onLost();
      return false;
    } catch (e) {
      // The database is away for a moment: the lease runs on until the next try.
      log("warn", "id worker: the lease could not be renewed", { worker: this.idWorker.worker, error: String(e).split("\n")[0] });
      return true;
    }
  }

  /** Gives the number back at a clean stop, so the next process need not wait for the lease. */
  async release(): Promise<void> {
    this.stopRenewing();
    await this.sql`DELETE FROM id_workers WHERE worker = ${this.idWorker.worker} AND holder = ${this.holder}`;
  }

  private stopRenewing() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
