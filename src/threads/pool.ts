import type { Config } from "../config.ts";
import type { AfterCommit } from "../infra/after-commit.ts";
import type { DomainEvent, EventBus } from "../infra/events.ts";
import type { RenderCacheChange } from "../services/statuses/render-cache.ts";
import { log } from "../log.ts";
import { STREAM_EVENTS } from "../streaming/fanout.ts";
import { BodyReceiver, BodySender } from "./body-stream.ts";
import { headerPairs, type FromThread, type PassedRequest, type ToThread } from "./protocol.ts";

/**
 * The serving thread's code: beside this file when run from source; inside the executable, the
 * entry point scripts/build.ts embeds, named by its path from the repository's root (--root).
 * The executable is told by Bun.main: --bytecode builds inline import.meta.url as the source's path.
 */
const WORKER_ENTRY = Bun.main.includes("/$bunfs/") ? "./src/serving-thread.ts" : new URL("../serving-thread.ts", import.meta.url).href;

/** How the main thread answers a request another thread passed on (its edge, given the client's address). */
export type Answer = (request: Request, peer: string | null, counted: boolean) => Promise<Response | undefined> | Response | undefined;

/** The bodies carried to and from one serving thread: its requests' bodies read here, the answers' sent back. */
interface Carried {
  requests: BodyReceiver;
  answers: BodySender;
}

const FAILED = JSON.stringify({ error: "There was a problem processing your request" });

/**
 * The main thread's side of the serving threads (WEB_THREADS - 1 of them, src/serving-thread.ts):
 * it starts them on its own port, answers what they pass on through its own edge, tells them
 * the events its writes committed (for their streams), and stops them first when the server
 * stops (their requests in flight may still be passed here).
 */
export class ServingThreads {
  private workers: Worker[] = [];
  private carried: Carried[] = [];
  /** Per thread, whether it may have a stream open (see ThreadStart.listening). */
  private listening: Int32Array;
  /** The render cache's invalidations not yet posted, and the number of the last posted (ThreadStart.renderSeq). */
  private changes: RenderCacheChange[] = [];
  private renderSeq = new Int32Array(new SharedArrayBuffer(4));
  /** Requests the threads passed here so far (tests see that a write sent to a thread went through the main one). */
  passed = 0;
  /** Passed requests being answered here (before their answer's head is sent). */
  private answering = 0;
  /** Per thread, its passes under way and its reads awaiting render changes (ThreadStart.gauges). */
  private gauges: Int32Array;
  /** While a test holds them: the render changes and events not yet posted (holdChanges). */
  private held: { worker: Worker; message: ToThread }[] | null = null;

  constructor(
    private count: number,
    private config: Config,
    private counters: SharedArrayBuffer | null,
    /** The thread fills under way (ThreadStart.fills). */
    private fills: SharedArrayBuffer,
    private answer: Answer,
    /** The main thread's connection's after-commit queue: changes made in a transaction are posted once it committed. */
    private commits: AfterCommit,
  ) {
    this.listening = new Int32Array(new SharedArrayBuffer(4 * count));
    this.gauges = new Int32Array(new SharedArrayBuffer(8 * count));
  }

  /** Resolves once every thread listens; a thread that fails to start fails the start. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.count }, () => this.spawn()));
  }

  private spawn(): Promise<void> {
    const worker = new Worker(WORKER_ENTRY);
    const slot = this.workers.push(worker) - 1;
    const post = (message: ToThread, transfer?: Transferable[]) => this.post(worker, message, transfer);
    const carried: Carried = { requests: new BodyReceiver(post), answers: new BodySender(post) };
    this.carried.push(carried);
    let started = false;
    return new Promise<void>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<FromThread>) => {
        const message = e.data;
        if (message.type === "request") void this.serve(worker, carried, message);
        else if (message.type === "pull") void carried.answers.pull(message.id);
        else if (message.type === "cancel") carried.answers.cancel(message.id);
        else if (message.type === "chunk" || message.type === "end" || message.type === "abort") carried.requests.receive(message);
        else if (message.type === "ready") {
          started = true;
          resolve();
        } else if (message.type === "failed") reject(new Error(`a serving thread failed to start: ${message.error}`));
      };
      // Once it serves, a thread that fails is told in the log; the kernel gives its port's connections to the others.
      worker.onerror = (e) => (started ? log("error", "a serving thread failed", { error: e.message }) : reject(new Error(`a serving thread failed: ${e.message}`)));
      this.post(worker, { type: "start", config: this.config, counters: this.counters, fills: this.fills, listening: this.listening.buffer as SharedArrayBuffer, slot, renderSeq: this.renderSeq.buffer as SharedArrayBuffer, gauges: this.gauges.buffer as SharedArrayBuffer });
    });
  }

  /**
   * Answers a passed request through the main thread's edge: its body is pulled from the thread
   * as the edge reads it (and capped there), and the answer's head goes back with its first
   * bytes, the rest as the thread pulls it.
   */
  private async serve(worker: Worker, carried: Carried, passed: PassedRequest) {
    this.passed++;
    this.answering++;
    let response: Response;
    try {
      const body = passed.more ? carried.requests.stream(passed.id, passed.body, true) : passed.body;
      const request = new Request(passed.url, { method: passed.method, headers: passed.headers, body });
      response = (await this.answer(request, passed.peer, passed.counted)) ?? new Response(null, { status: 500 });
    } catch (e) {
      log("error", "a passed request failed", { error: String(e).split("\n")[0] });
      response = new Response(FAILED, { status: 500, headers: { "content-type": "application/json; charset=utf-8" } });
    }
    // Answered: what the edge left unread of the body is not wanted (the thread cancels its side on the answer).
    carried.requests.drop(passed.id);
    // A HEAD's answer has no body to carry, whatever the route made.
    if (passed.method === "HEAD") void response.body?.cancel().catch(() => {});
    let opened: { first: ArrayBuffer | null; more: boolean };
    try {
      opened = await carried.answers.open(passed.id, passed.method === "HEAD" ? null : response.body);
    } catch (e) {
      log("error", "a passed request's answer failed", { error: String(e).split("\n")[0] });
      response = new Response(null, { status: 500, headers: { "content-type": "application/json; charset=utf-8" } });
      opened = { first: new TextEncoder().encode(FAILED).buffer as ArrayBuffer, more: false };
    }
    this.answering--;
    const { first, more } = opened;
    this.post(worker, { type: "response", id: passed.id, status: response.status, headers: headerPairs(response.headers), body: first, more }, first ? [first] : []);
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
    if (this.held && (message.type === "render" || message.type === "event")) this.held.push({ worker, message });
    else worker.postMessage(message, transfer);
  }

  /**
   * For tests of the race renderSeq closes: the render changes and events the threads would be
   * told are held here (the number is still raised, as when a message is on its way) until the
   * function answered is called, which posts them in order.
   */
  holdChanges(): () => void {
    this.held ??= [];
    return () => {
      const held = this.held ?? [];
      this.held = null;
      for (const { worker, message } of held) this.post(worker, message);
    };
  }

  /**
   * Passes under way: here (requests being answered, bodies carried either way) and on the
   * threads (requests awaiting their answer, bodies carried); a client gone mid-download leaves 0.
   */
  get inFlight(): { main: number; threads: number } {
    let main = this.answering;
    for (const c of this.carried) main += c.requests.size + c.answers.size;
    let threads = 0;
    for (let slot = 0; slot < this.workers.length; slot++) threads += Atomics.load(this.gauges, 2 * slot);
    return { main, threads };
  }

  /** Reads on the threads awaiting render changes the main thread posted. */
  get readsWaiting(): number {
    let waiting = 0;
    for (let slot = 0; slot < this.workers.length; slot++) waiting += Atomics.load(this.gauges, 2 * slot + 1);
    return waiting;
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
    for (const c of this.carried) {
      c.answers.cancelAll();
      c.requests.dropAll();
    }
    this.carried = [];
  }

  get threads(): number {
    return this.workers.length;
  }
}
