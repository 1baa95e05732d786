import { expect, test } from "bun:test";
import { SharedIds } from "../../src/infra/shared-ids.ts";

// The thread fills under way as the serving threads read them (src/infra/shared-ids.ts): a
// second view over the same buffer stands for another thread's.
test("ids added are seen through another view of the buffer until removed; past its slots the set holds every id, never forgets one", () => {
  const writer = new SharedIds();
  const other = new SharedIds(writer.buffer);
  const big = 2 ** 53 - 1;
  expect(other.has(1)).toBe(false);
  writer.add(1);
  writer.add(big);
  expect([other.has(1), other.has(big), other.has(2)]).toEqual([true, true, false]);
  writer.remove(1);
  expect([other.has(1), other.has(big)]).toEqual([false, true]);
  // 40 more than its 32 slots: the set answers yes to any id while one is kept without its slot.
  for (let id = 100; id < 140; id++) writer.add(id);
  expect([other.has(139), other.has(5)]).toEqual([true, true]);
  for (let id = 100; id < 140; id++) writer.remove(id);
  expect([other.has(139), other.has(5), other.has(big)]).toEqual([false, false, true]);
  writer.remove(big);
  expect(other.has(big)).toBe(false);
});
