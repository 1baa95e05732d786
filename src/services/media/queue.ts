import type { MediaClaims } from "../../infra/pg-media-claims.ts";
import { log } from "../../log.ts";
import { SharedLanes } from "./shared-queue.ts";

/** Where a processing job can be held: once it has claimed its row, and before it writes its result. */
export type JobStage = "claimed" | "rendered";

/** Images (sharp, well under a second each) and video/audio (ffmpeg, seconds to minutes). */
export type Lane = "image" | "av";

/**
 * The background processing queue, with a fixed number of workers per lane (images: by
 * default one per core but one, so that a core stays free to answer requests; sharp works
 * off the main thread, so each job is a wait, not a block; video and audio: one at a time by
 * default). The lanes keep an image from waiting behind a video's minutes of transcoding.
 * Jobs are only ids; their state lives in the media_attachments table, so a restart
 * re-queues what was unfinished.
 *
 * With `claims` (several processes on PostgreSQL) the jobs are the rows themselves: a free
 * worker claims the next one under a lease (pg-media-claims.ts), whichever process it was
 * uploaded through, and nothing waits in memory (see shared-queue.ts).
 */
export class MediaQueue {
  private lanes: Record<Lane, { waiting: number[]; running: number; concurrency: number }>;
  private queued = new Set<number>();
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  private gates = new Map<JobStage, { reach: () => void; waiting: (() => void)[] }>();
  private shared: SharedLanes | null;
  constructor(
    private work: (id: number) => Promise<void>,
    concurrency: Record<Lane, number>,
    claims: MediaClaims | null = null,
  ) {
    this.lanes = { image: { waiting: [], running: 0, concurrency: concurrency.image }, av: { waiting: [], running: 0, concurrency: concurrency.av } };
    this.shared = claims ? new SharedLanes(claims, work, concurrency, () => this.settled()) : null;
  }

  /** Whether the jobs are claimed from the database (several processes) rather than kept here. */
  get claimed(): boolean {
    return this.shared !== null;
  }

  /** Shared: listens for other processes' jobs and takes what is waiting (restore, at start). */
  async start() {
    await this.shared?.start();
  }

  enqueue(id: number, lane: Lane = "image") {
    if (this.stopped) return;
    if (this.shared) return this.shared.enqueued(lane);
    if (this.queued.has(id)) return;
    this.queued.add(id);
    this.lanes[lane].waiting.push(id);
    this.pump(lane);
  }

  private settled() {
    if (this.running === 0 && this.waiting === 0) for (const done of this.idleWaiters.splice(0)) done();
  }

  private get running(): number {
    return this.lanes.image.running + this.lanes.av.running + (this.shared?.running ?? 0);
  }

  /** Shared: a claim under way counts as waiting (it may find a job). */
  private get waiting(): number {
    return this.lanes.image.waiting.length + this.lanes.av.waiting.length + (this.shared?.looking ?? 0);
  }

  private pump(name: Lane) {
    const lane = this.lanes[name];
    while (!this.stopped && lane.running < lane.concurrency && lane.waiting.length > 0) {
      const id = lane.waiting.shift() as number;
      lane.running++;
      this.work(id)
        .catch((e) => log("error", "media job failed", { media_id: id, error: String(e).split("\n")[0] }))
        .finally(() => {
          lane.running--;
          this.queued.delete(id);
          this.pump(name);
          this.settled();
        });
    }
  }

  /**
   * Holds jobs at a stage until released: lets a test put a request exactly between a job's
   * steps (no sleeps). `reached` resolves once a job waits there; `held` says how many do.
   * Costs nothing unheld.
   */
  hold(stage: JobStage): { reached: Promise<void>; release: () => void; held: () => number } {
    let reach!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const waiting: (() => void)[] = [];
    const gate = { reach, waiting };
    this.gates.set(stage, gate);
    return {
      reached,
      held: () => waiting.length,
      release: () => {
        if (this.gates.get(stage) === gate) this.gates.delete(stage);
        for (const go of waiting.splice(0)) go();
      },
    };
  }

  /** Called by a job as it passes `stage`; waits while that stage is held. */
  pass(stage: JobStage): Promise<void> | void {
    const gate = this.gates.get(stage);
    if (!gate) return;
    return new Promise<void>((resolve) => {
      gate.waiting.push(resolve);
      gate.reach();
    });
  }

  get pending(): number {
    return this.waiting + this.running;
  }

  /** Resolves when nothing is waiting or running (tests, shutdown). */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no new jobs; the running ones finish. Unstarted ones stay queued in the database. */
  async stop() {
    this.stopped = true;
    this.lanes.image.waiting = [];
    this.lanes.av.waiting = [];
    await this.shared?.stop();
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}

/**
 * A bound on how many ffmpeg processes run at once (the v1 uploads that transcode while the
 * client waits, and the queue's jobs alike): a video takes seconds of a core, an image does not.
 */
export class Slots {
  private free: number;
  private waiting: (() => void)[] = [];
  constructor(readonly size: number) {
    this.free = size;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}
