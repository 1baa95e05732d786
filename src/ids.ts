import type { Clock } from "./clock.ts";

/**
 * Time-sortable identifiers in the spirit of Mastodon's snowflakes: milliseconds since
 * 2020-01-01 in the high bits, a 12-bit sequence in the low bits. They stay below 2^53
 * until 2089, so SQLite keeps them as INTEGER PRIMARY KEY (rowid) and JavaScript as a plain
 * number, and a max_id/since_id page is a range scan on the primary key.
 */
export const ID_EPOCH = Date.UTC(2020, 0, 1);
const SEQUENCE_BITS = 12;
const SEQUENCE_SPAN = 2 ** SEQUENCE_BITS;
/** At most 2^8 processes: each keeps 2^4 ids a millisecond of its own (16,000 a second). */
export const MAX_ID_WORKERS = 256;

/**
 * Which of the processes making ids on one database this one is (`ID_WORKER`): with several
 * (on PostgreSQL), the low bits of each id's 12 are the worker's number, so two processes can
 * never make the same id, even in the same millisecond; what is left of the 12 is the sequence.
 * One worker (the default) keeps the whole 12 bits for the sequence, as before workers.
 */
export interface IdWorker {
  /** This process's number, from 0 to workers - 1. */
  worker: number;
  /** How many processes may make ids at once (rounded up to a power of two), 1 to 256. */
  workers: number;
}

export const ONE_WORKER: IdWorker = { worker: 0, workers: 1 };

export class IdGenerator {
  private lastMs = 0;
  private sequence = 0;
  /** The worker's number takes the low `workerBits` bits; the sequence the rest of the 12. */
  private readonly workerBits: number;
  private readonly sequenceSpan: number;
  private readonly worker: number;

  constructor(
    private clock: Clock,
    { worker, workers }: IdWorker = ONE_WORKER,
  ) {
    if (!Number.isInteger(workers) || workers < 1 || workers > MAX_ID_WORKERS) throw new RangeError(`workers must be a whole number from 1 to ${MAX_ID_WORKERS}`);
    if (!Number.isInteger(worker) || worker < 0 || worker >= workers) throw new RangeError(`worker must be a whole number from 0 to ${workers - 1}`);
    this.workerBits = Math.ceil(Math.log2(workers));
    this.sequenceSpan = 2 ** (SEQUENCE_BITS - this.workerBits);
    this.worker = worker;
  }

  /**
   * Continues after the largest id already stored, so a restart with the clock set back,
   * or a second process (the admin CLI), does not hand out an id twice.
   */
  seed(largestId: number) {
    const ms = Math.floor(largestId / SEQUENCE_SPAN);
    const sequence = Math.floor((largestId % SEQUENCE_SPAN) / 2 ** this.workerBits);
    if (ms > this.lastMs || (ms === this.lastMs && sequence >= this.sequence)) {
      this.lastMs = ms;
      this.sequence = sequence;
    }
  }

  next(): number {
    const ms = this.clock.now();
    let t = Math.max(0, Math.floor(ms) - ID_EPOCH);
    if (t < this.lastMs) t = this.lastMs;
    if (t === this.lastMs) {
      this.sequence++;
      if (this.sequence >= this.sequenceSpan) {
        t = this.lastMs + 1;
        this.sequence = 0;
      }
    } else {
      this.sequence = 0;
    }
    this.lastMs = t;
    return t * SEQUENCE_SPAN + this.sequence * 2 ** this.workerBits + this.worker;
  }
}

/**
 * An id for something made at `ms` in the past (a remote status, dated by its server), as
 * Mastodon's Snowflake.id_at: its time in the high bits and random low bits, so a status
 * fetched long after it was written sorts where it belongs. The caller checks that it is free.
 */
export function idAt(ms: number): number {
  return Math.max(0, Math.floor(ms) - ID_EPOCH) * SEQUENCE_SPAN + Math.floor(Math.random() * SEQUENCE_SPAN);
}

/** The smallest id that could have been made at `ms`: for turning a time into a page bound. */
export function idFloorForTime(ms: number): number {
  return Math.max(0, Math.floor(ms) - ID_EPOCH) * SEQUENCE_SPAN;
}

export function timeOfId(id: number): number {
  return Math.floor(id / SEQUENCE_SPAN) + ID_EPOCH;
}

/** Parses an id from a client; anything that is not a plain decimal in range is null. */
export function parseId(value: unknown): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : null;
  if (typeof value !== "string" || !/^\d{1,16}$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}
