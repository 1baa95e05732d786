/**
 * The requests whose handlers are still running. Bun's `server.stop()` resolves once the
 * connections are done with, but a handler whose client hung up (a load balancer's timeout, a
 * benchmark's end) runs on: a stop that closed the database under it failed its writes and
 * what follows them (stream events, other processes' cache notices). The server's stop waits
 * for these before closing anything (with a deadline: a handler stuck on another server's
 * answer does not hold the stop for ever).
 */
export class RequestsInFlight {
  private running = 0;
  private waiters: (() => void)[] = [];

  /** `handled`, counted until it settles. */
  track<T>(handled: Promise<T>): Promise<T> {
    this.running++;
    return handled.finally(() => {
      if (--this.running === 0) for (const done of this.waiters.splice(0)) done();
    });
  }

  get count(): number {
    return this.running;
  }

  /** Resolves true once none is running, or false after `deadlineMs`. */
  settled(deadlineMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), deadlineMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
