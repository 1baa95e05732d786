/**
 * A small set of ids in a SharedArrayBuffer, written by one thread (the main one) and read by
 * any (the serving threads, WEB_THREADS > 1): the thread fills under way, so that a serving
 * thread answers a thread's context itself only when the main thread would not report a fill
 * of it. The writer adds before it answers the request that started the work, so a read that
 * follows on any thread sees it. Past SLOTS entries (more than the fills that can be under way)
 * the set counts the others without their ids and answers that it holds every id: a reader
 * then passes every such request to the main thread, slower but never wrong.
 */
const SLOTS = 32;

export class SharedIds {
  readonly buffer: SharedArrayBuffer;
  /** [entries, entries without a slot]: a reader sees an empty set from the first alone. */
  private counts: Int32Array;
  private slots: BigInt64Array;

  /** A new set, or (given the buffer another thread made) the same one. */
  constructor(buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(8 + 8 * SLOTS);
    this.counts = new Int32Array(this.buffer, 0, 2);
    this.slots = new BigInt64Array(this.buffer, 8, SLOTS);
  }

  /** Adds `id` (a positive integer); the writer's only. */
  add(id: number): void {
    const free = this.slotOf(0n);
    if (free >= 0) Atomics.store(this.slots, free, BigInt(id));
    else Atomics.add(this.counts, 1, 1);
    Atomics.add(this.counts, 0, 1);
  }

  /** Removes `id`, added before; the writer's only. */
  remove(id: number): void {
    const slot = this.slotOf(BigInt(id));
    if (slot >= 0) Atomics.store(this.slots, slot, 0n);
    else Atomics.sub(this.counts, 1, 1);
    Atomics.sub(this.counts, 0, 1);
  }

  has(id: number): boolean {
    if (Atomics.load(this.counts, 0) === 0) return false;
    return Atomics.load(this.counts, 1) > 0 || this.slotOf(BigInt(id)) >= 0;
  }

  private slotOf(value: bigint): number {
    for (let i = 0; i < SLOTS; i++) if (Atomics.load(this.slots, i) === value) return i;
    return -1;
  }
}
