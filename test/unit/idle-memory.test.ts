import { expect, test } from "bun:test";
import { IdleMemory } from "../../src/infra/idle-memory.ts";

// The periods are driven by hand (tick), as the server's timer would drive them.

test("memory is released once per burst: in the first period without requests after one with them", () => {
  let released = 0;
  const idle = new IdleMemory(() => released++);
  idle.tick();
  expect(released).toBe(0); // idle from the start: nothing to give back

  idle.request();
  idle.request();
  idle.tick(); // the burst's period
  expect(released).toBe(0);
  idle.request();
  idle.tick(); // still busy
  expect(released).toBe(0);
  idle.tick(); // the first quiet period
  expect(released).toBe(1);
  idle.tick();
  idle.tick();
  expect(released).toBe(1); // once, not every quiet period

  idle.request();
  idle.tick();
  idle.tick();
  expect(released).toBe(2); // the next burst, released again
});

test("a server that keeps serving is never interrupted by a release", () => {
  let released = 0;
  const idle = new IdleMemory(() => released++);
  for (let i = 0; i < 10; i++) {
    idle.request();
    idle.tick();
  }
  expect(released).toBe(0);
});
