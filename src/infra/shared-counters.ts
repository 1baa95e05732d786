/**
 * The rate limits' counters when several threads serve requests (WEB_THREADS > 1): one table in
 * a SharedArrayBuffer that every thread counts in, so that a burst spread over the threads is
 * limited as one. Each slot holds a key (a bucket's index with the account id or address it
 * counts; 53 bits of a hash for a string key), the fixed window it counts in and the count.
 * Open addressing with a bounded probe; a slot whose window is over is taken again, and when
 * every slot of a probe is live the oldest window's goes (a flood of new clients: as the
 * in-memory counters drop their oldest). One spin lock over the table: an increment holds it
 * for a probe of at most PROBE slots, well under a microsecond.
 */
const SLOTS = 1 << 16;
const PROBE = 32;
/** Int32s per slot: key high, key low, window, count. */
const WIDTH = 4;
const OCCUPIED = 0x40000000;
const STRING_KEY = 0x20000000;

export class SharedCounters {
  readonly buffer: SharedArrayBuffer;
  private lock: Int32Array;
  private slots: Int32Array;

  /** A new table, or (given the buffer another thread made) the same one. */
  constructor(buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(4 * (1 + SLOTS * WIDTH));
    this.lock = new Int32Array(this.buffer, 0, 1);
    this.slots = new Int32Array(this.buffer, 4, SLOTS * WIDTH);
  }

  /** Counts one more request of `key` in bucket `bucket` during `window`; answers the count so far. */
  add(bucket: number, key: number | string, window: number): number {
    let hi: number;
    let lo: number;
    if (typeof key === "number") {
      hi = OCCUPIED | (bucket << 21) | (Math.floor(key / 0x100000000) & 0x1fffff);
      lo = key | 0;
    } else {
      hi = OCCUPIED | STRING_KEY | (bucket << 21) | (Bun.hash.murmur32v3(key, 1) & 0x1fffff);
      lo = Bun.hash.murmur32v3(key, 0) | 0;
    }
    const w = window | 0;
    const start = (Math.imul(hi ^ Math.imul(lo, 0x9e3779b1), 0x85ebca6b) >>> 16) & (SLOTS - 1);
    const s = this.slots;
    while (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0);
    try {
      let free = -1;
      let oldest = start;
      for (let i = 0; i < PROBE; i++) {
        const at = ((start + i) & (SLOTS - 1)) * WIDTH;
        const slotHi = s[at]!;
        if (slotHi === hi && s[at + 1] === lo) {
          if (s[at + 2] !== w) {
            s[at + 2] = w;
            s[at + 3] = 0;
          }
          return ++s[at + 3]!;
        }
        // An empty slot ends the key's probe: it was never further on.
        if (slotHi === 0) {
          if (free < 0) free = at;
          break;
        }
        // A slot of a window over (windows only grow; other buckets' are compared loosely, at worst a live count goes early).
        if (free < 0 && s[at + 2]! < w && (slotHi & 0x1fe00000) === (hi & 0x1fe00000)) free = at;
        if (s[at + 2]! < s[(oldest & (SLOTS - 1)) * WIDTH + 2]!) oldest = (start + i) & (SLOTS - 1);
      }
      const at = free >= 0 ? free : oldest * WIDTH;
      s[at] = hi;
      s[at + 1] = lo;
      s[at + 2] = w;
      s[at + 3] = 1;
      return 1;
    } finally {
      Atomics.store(this.lock, 0, 0);
    }
  }
}
