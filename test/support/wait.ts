import type { TestServer } from "./server.ts";

/**
 * Polls `check` until it gives a value (not undefined), or throws once `timeoutMs` has passed.
 * For conditions with no event of their own to await (a socket seen closed, a count reached);
 * never a fixed sleep. The deadline is generous: a busy 2-core machine is slow, not broken.
 */
export async function waitUntil<T>(check: () => T | undefined, timeoutMs = 10_000, what: () => string = () => "a condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await Bun.sleep(5);
  }
}

/** `waitUntil` for a boolean condition. */
export function waitFor(condition: () => boolean, timeoutMs = 10_000, what = "a condition"): Promise<true> {
  return waitUntil(() => (condition() ? true : undefined), timeoutMs, () => what);
}

/**
 * Lets the server finish everything already set in motion, through each queue's own drain:
 * timers due by the (test-moved) clock fire and their handlers finish, queued writes commit,
 * the media queue empties, and the stream fan-out hands out what was announced.
 */
export async function drain(server: TestServer): Promise<void> {
  const { wheel, writes, media } = server.ctx.services;
  await wheel.idle();
  writes.flush();
  await media.queue.idle();
  await server.streaming.fanout.idle();
}
