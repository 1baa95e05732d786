import { expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { ID_EPOCH, IdGenerator, timeOfId } from "../../src/ids.ts";

/**
 * Ids made by several processes on one database (ID_WORKER): each keeps its own low bits, so
 * two never make the same id; one process (0/1, the default) makes the ids it always made.
 */
const AT = Date.UTC(2026, 10, 26, 12, 0, 0);

function take(ids: IdGenerator, n: number): number[] {
  return Array.from({ length: n }, () => ids.next());
}

test("one worker (the default) makes the ids it made before workers: the whole 12 bits a sequence", () => {
  const ids = new IdGenerator(new ManualClock(AT));
  const made = take(ids, 4097);
  const base = (AT - ID_EPOCH) * 4096;
  expect(made.slice(0, 3)).toEqual([base, base + 1, base + 2]);
  // The 4097th in one millisecond borrows the next one.
  expect(made.slice(-2)).toEqual([base + 4095, base + 4096]);
  expect(new IdGenerator(new ManualClock(AT), { worker: 0, workers: 1 }).next()).toBe(base);
});

test("generators with different worker numbers never make the same id, in the same milliseconds or not, and each one's ids rise", () => {
  for (const workers of [2, 4, 5, 256]) {
    const clock = new ManualClock(AT);
    const generators = Array.from({ length: Math.min(workers, 8) }, (_, i) => new IdGenerator(clock, { worker: workers - 1 - i, workers }));
    const all: number[] = [];
    for (let round = 0; round < 3; round++) {
      // More than a millisecond's sequence each (16 ids a millisecond at 256 workers), then a later millisecond.
      for (const ids of generators) {
        const made = take(ids, 300);
        for (let i = 1; i < made.length; i++) expect(made[i]!).toBeGreaterThan(made[i - 1]!);
        all.push(...made);
      }
      clock.advance(1);
    }
    expect({ workers, distinct: new Set(all).size }).toEqual({ workers, distinct: all.length });
  }
});

test("ids of several workers sort by the time they were made, and stay below 2^53 until 2089", () => {
  const clock = new ManualClock(AT);
  const a = new IdGenerator(clock, { worker: 0, workers: 4 });
  const b = new IdGenerator(clock, { worker: 3, workers: 4 });
  const timeline: number[] = [];
  for (let ms = 0; ms < 5; ms++) {
    timeline.push(...take(ms % 2 ? a : b, 3), ...take(ms % 2 ? b : a, 3));
    clock.advance(1);
  }
  const byMs = timeline.map(timeOfId);
  expect(byMs).toEqual([...byMs].sort((x, y) => x - y));
  // Within a millisecond the order is the workers', across milliseconds the clock's.
  expect(byMs[0]).toBe(AT);
  expect(byMs.at(-1)).toBe(AT + 4);

  const late = new ManualClock(Date.UTC(2089, 0, 1));
  const last = take(new IdGenerator(late, { worker: 255, workers: 256 }), 20);
  for (const id of last) expect(Number.isSafeInteger(id)).toBe(true);
  expect(timeOfId(last[0]!)).toBe(Date.UTC(2089, 0, 1));
});

test("a worker seeded with another's newer id in the same millisecond continues above it", () => {
  const clock = new ManualClock(AT);
  const other = new IdGenerator(clock, { worker: 1, workers: 2 });
  const newest = take(other, 10).at(-1)!;
  const ids = new IdGenerator(clock, { worker: 0, workers: 2 });
  ids.seed(newest);
  const next = ids.next();
  expect(next).toBeGreaterThan(newest);
  expect(next % 2).toBe(0);
  // The clock set back: still after the seed.
  clock.set(AT - 60_000);
  expect(ids.next()).toBeGreaterThan(next);
});

test("a worker number outside its count is refused", () => {
  const clock = new ManualClock(AT);
  expect(() => new IdGenerator(clock, { worker: 2, workers: 2 })).toThrow(RangeError);
  expect(() => new IdGenerator(clock, { worker: 0, workers: 257 })).toThrow(RangeError);
  expect(() => new IdGenerator(clock, { worker: -1, workers: 4 })).toThrow(RangeError);
});

test("ID_WORKER is <number>/<how many>, 0/1 by default", () => {
  expect(loadConfig({}).idWorker).toEqual({ worker: 0, workers: 1 });
  expect(loadConfig({ ID_WORKER: " 2/4 " }).idWorker).toEqual({ worker: 2, workers: 4 });
  expect(loadConfig({ ID_WORKER: "255/256" }).idWorker).toEqual({ worker: 255, workers: 256 });
  for (const bad of ["1", "4/4", "0/0", "0/257", "-1/4", "a/b", "1/2/3"]) {
    expect(() => loadConfig({ ID_WORKER: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ ID_WORKER: bad })).toThrow(`ID_WORKER must be <number>/<how many>, how many from 1 to 256 and the number below it (such as 0/1 or 2/4) (got "${bad}")`);
  }
});
