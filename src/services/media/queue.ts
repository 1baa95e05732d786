import { log } from "../../log.ts";

/**
 * The background processing queue, with a fixed number of workers (by default one per core
 * but one, so that a core stays free to answer requests; sharp works off the main thread,
 * so each job is a wait, not a block). Jobs are only ids; their state
 * lives in the media_attachments table, so a restart re-queues what was unfinished.
 */
export class MediaQueue {
  private waiting: number[] = [];
  private queued = new Set<number>();
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  constructor(
    private work: (id: number) => Promise<void>,
    readonly concurrency: number,
  ) {}

  enqueue(id: number) {
    if (this.stopped || this.queued.has(id)) return;
    this.queued.add(id);
    this.waiting.push(id);
    this.pump();
  }

  private pump() {
    while (!this.stopped && this.running < this.concurrency && this.waiting.length > 0) {
      const id = this.waiting.shift() as number;
      this.running++;
      this.work(id)
        .catch((e) => log("error", "media job failed", { media_id: id, error: String(e).split("\n")[0] }))
        .finally(() => {
          this.running--;
          this.queued.delete(id);
          this.pump();
          if (this.running === 0 && this.waiting.length === 0) for (const done of this.idleWaiters.splice(0)) done();
        });
    }
  }

  get pending(): number {
    return this.waiting.length + this.running;
  }

  /** Resolves when nothing is waiting or running (tests, shutdown). */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no new jobs; the running ones finish. Unstarted ones stay queued in the database. */
  async stop() {
    this.stopped = true;
    this.waiting = [];
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
