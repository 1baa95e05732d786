import type { Config } from "../config.ts";
import type { AfterCommit } from "../infra/after-commit.ts";
import type { DomainEvent, EventBus } from "../infra/events.ts";
import type { RenderCacheChange } from "../services/statuses/render-cache.ts";
import { log } from "../log.ts";
import { STREAM_EVENTS } from "../streaming/fanout.ts";
import { headerPairs, type FromThread, type PassedRequest, type ToThread } from "./protocol.ts";

/**
 * The serving thread's code: beside this file when run from source; inside the executable, the
 * entry point scripts/build.ts embeds, named by its path from the repository's root (--root).
 * The executable is told by Bun.main: --bytecode builds inline import.meta.url as the source's path.
 */
const WORKER_ENTRY = Bun.main.includes("/$bunfs/") ? "./src/threads/worker.ts" : new URL("./worker.ts", import.meta.url).href;

/** How the main thread answers a request another thread passed on (its edge, given the client's address). */
export type Answer = (request: Request, peer: string | null) => Promise<Response> | Response | undefined;

/**
 * The main thread's side of the serving threads (WEB_THREADS - 1 of them, src/threads/worker.ts):
 * it starts them on its own port, answers what they pass on through its own edge, tells them
 * the events its writes committed (for their streams), and stops them first when the server
 * stops (their requests in flight may still be passed here).
 */
export class ServingThreads {
  private workers: Worker[] = [];
  /** Per thread, whether it may have a stream open (see ThreadStart.listening). */
  private listening: Int32Array;
  /** The render cache's invalidations not yet posted, and the number of the last posted (ThreadStart.renderSeq). */
  private changes: RenderCacheChange[] = [];
  private renderSeq = new Int32Array(new SharedArrayBuffer(4));
  /** Requests the threads passed here so far (tests see that a write sent to a thread went through the main one). */
  passed = 0;

  constructor(
    private count: number,
    private config: Config,
    private counters: SharedArrayBuffer | null,
    private answer: Answer,
    /** The main thread's connection's after-commit queue: changes made in a transaction are posted once it committed. */
    private commits: AfterCommit,
  ) {
    this.listening = new Int32Array(new SharedArrayBuffer(4 * count));
  }

  /** Resolves once every thread listens; a thread that fails to start fails the start. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.count }, () => this.spawn()));
  }

  private spawn(): Promise<void> {
    const worker = new Worker(WORKER_ENTRY);
    const slot = this.workers.push(worker) - 1;
    let started = false;
    return new Promise<void>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<FromThread>) => {
        const message = e.data;
        if (message.type === "request") void this.serve(worker, message);
        else if (message.type === "ready") {
          started = true;
          resolve();
        } else if (message.type === "failed") reject(new Error(`a serving thread failed to start: ${message.error}`));
      };
      // Once it serves, a thread that fails is told in the log; the kernel gives its port's connections to the others.
      worker.onerror = (e) => (started ? log("error", "a serving thread failed", { error: e.message }) : reject(new Error(`a serving thread failed: ${e.message}`)));
      this.post(worker, { type: "start", config: this.config, counters: this.counters, listening: this.listening.buffer as SharedArrayBuffer, slot, renderSeq: this.renderSeq.buffer as SharedArrayBuffer });
    });
  }

  private async serve(worker: Worker, passed: PassedRequest) {
    this.passed++;
    let response: Response;
    try {
      const request = new Request(passed.url, { method: passed.method, headers: passed.headers, body: passed.body });
      response = (await this.answer(request, passed.peer)) ?? new Response(null, { status: 500 });
    } catch (e) {
      log("error", "a passed request failed", { error: String(e).split("\n")[0] });
      response = new Response(JSON.stringify({ error: "There was a problem processing your request" }), { status: 500, headers: { "content-type": "application/json; charset=utf-8" } });
    }
    const body = response.body ? await response.arrayBuffer() : null;
    this.post(worker, { type: "response", id: passed.id, status: response.status, headers: headerPairs(response.headers), body }, body ? [body] : []);
  }

  /**
   * The events streams hear of, told once committed to every thread that may have a stream open
   * (the table in consequences.ts registers this): the others have nobody to tell, and the copy
   * of each event was half of what a second thread added to a post.
   */
  subscribe(events: EventBus) {
    const tell = (event: DomainEvent) => {
      // The render cache's changes of the same write first: the thread renders the event with them applied.
      this.postChanges();
      for (let slot = 0; slot < this.workers.length; slot++) if (Atomics.load(this.listening, slot) === 1) this.post(this.workers[slot]!, { type: "event", event });
    };
    for (const type of STREAM_EVENTS) events.afterCommit(type, tell);
  }

  /**
   * The main thread's render cache was invalidated (RenderCache's `told`): the threads replay
   * it on theirs once the write committed (at once outside a transaction). A change of a write
   * rolled back is posted with the next ones: one entry dropped needlessly.
   */
  renderChanged(change: RenderCacheChange) {
    this.changes.push(change);
    this.commits.defer(() => this.postChanges());
  }

  private postChanges() {
    if (this.changes.length === 0) return;
    const changes = this.changes;
    this.changes = [];
    const seq = Atomics.load(this.renderSeq, 0) + 1;
    for (const worker of this.workers) this.post(worker, { type: "render", seq, changes });
    // Raised after the post, so that a thread that sees it has the message in its queue.
    Atomics.store(this.renderSeq, 0, seq);
  }

  private post(worker: Worker, message: ToThread, transfer: Transferable[] = []) {
    worker.postMessage(message, transfer);
  }

  /** Stops every thread: each stops listening, finishes what it serves, closes its connection. */
  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(async (worker) => {
        const stopped = new Promise<void>((resolve) => {
          worker.addEventListener("message", (e: MessageEvent<FromThread>) => e.data.type === "stopped" && resolve());
          worker.addEventListener("close", () => resolve());
        });
        this.post(worker, { type: "stop" });
        await Promise.race([stopped, Bun.sleep(5000)]);
        const closed = new Promise<void>((resolve) => worker.addEventListener("close", () => resolve()));
        worker.terminate();
        await Promise.race([closed, Bun.sleep(1000)]);
      }),
    );
    this.workers = [];
  }

  get threads(): number {
    return this.workers.length;
  }
}
