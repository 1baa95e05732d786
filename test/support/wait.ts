import type { TestServer } from "./server.ts";

/**
 * The one poll of the suite: calls `check` until it gives a truthy value, which it returns, or
 * fails once `deadlineMs` has passed, naming what was waited for and what was last seen (a
 * check that throws counts as "not yet", its error as what was seen). For conditions with no
 * event of their own to await (a socket seen closed, a count reached, another server's answer);
 * never a fixed sleep. The deadline is generous: a busy 2-core machine is slow, not broken.
 * `what` may be a function, to describe the state at the deadline (the events a stream had).
 * A synchronous check is looked at every 5 ms; one that asks over the network, every 20 ms.
 */
export async function eventually<T>(check: () => T | Promise<T>, what: string | (() => string), deadlineMs = 10_000): Promise<NonNullable<T>> {
  const until = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    let asked = false;
    try {
      const pending = check();
      asked = pending instanceof Promise;
      const value = await pending;
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`timed out after ${deadlineMs} ms waiting for ${typeof what === "string" ? what : what()} (last seen: ${String(last)})`);
    await Bun.sleep(asked ? 20 : 5);
  }
}

/**
 * `eventually` with the deadline before the description, as tests written before the two
 * helpers were one call it. Kept so that the folders being edited while the suite was filed
 * (federation, statuses, streaming, notifications) need not change; new tests use `eventually`.
 */
export async function waitFor(condition: () => boolean, timeoutMs = 10_000, what = "a condition"): Promise<true> {
  await eventually(condition, what, timeoutMs);
  return true;
}

/**
 * Lets the server finish everything already set in motion, through each queue's own drain:
 * timers due by the (test-moved) clock fire and their handlers finish, queued writes commit,
 * the media queue empties, and the stream fan-out hands out what was announced.
 */
export async function drain(server: TestServer): Promise<void> {
  const { wheel, writes, media } = server.ctx.services;
  await wheel.idle();
  await writes.flush();
  await media.queue.idle();
  await server.streaming.fanout.idle();
}
