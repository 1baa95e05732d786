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

export class IdGenerator {
  private lastMs = 0;
  private sequence = 0;

  constructor(private clock: Clock) {}

  /**
   * Continues after the largest id already stored, so a restart with the clock set back,
   * or a second process (the admin CLI), does not hand out an id twice.
   */
  seed(largestId: number) {
    const ms = Math.floor(largestId / SEQUENCE_SPAN);
    if (ms > this.lastMs || (ms === this.lastMs && largestId % SEQUENCE_SPAN >= this.sequence)) {
      this.lastMs = ms;
      this.sequence = largestId % SEQUENCE_SPAN;
    }
  }

  next(): number {
    const ms = this.clock.now();
    let t = Math.max(0, Math.floor(ms) - ID_EPOCH);
    if (t < this.lastMs) t = this.lastMs;
    if (t === this.lastMs) {
      this.sequence++;
      if (this.sequence >= SEQUENCE_SPAN) {
        t = this.lastMs + 1;
        this.sequence = 0;
      }
    } else {
      this.sequence = 0;
    }
    this.lastMs = t;
    return t * SEQUENCE_SPAN + this.sequence;
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
