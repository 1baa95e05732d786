/**
 * Memory given back once a burst of requests is over. Under load the JavaScript heap grows
 * far past what the server holds at rest (188 MB right after three 3-second wrk runs on the
 * status and home timeline routes, 101 MB three seconds later, 63 MB at start), and the engine
 * shrinks it only as later allocations call for collections. When requests came in one period
 * and none in the next, a full collection runs and SQLite drops its page cache
 * (`release`): once per burst, while nothing waits, so no request pays for it.
 */
export class IdleMemory {
  private requests = 0;
  private seen = 0;
  private busy = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly release: () => void,
    private readonly periodMs = 5000,
  ) {}

  /** A request came in (one increment: this is on every request's path). */
  request(): void {
    this.requests++;
  }

  /** One period: busy if requests came since the last, released if the last was busy and this one was not. */
  tick(): void {
    if (this.requests !== this.seen) {
      this.seen = this.requests;
      this.busy = true;
      return;
    }
    if (!this.busy) return;
    this.busy = false;
    this.release();
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.periodMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
