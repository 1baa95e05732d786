import type { MediaClaims } from "../../infra/pg-media-claims.ts";
import { log } from "../../log.ts";
import type { Lane } from "./queue.ts";

/**
 * The media queue's lanes when several processes share the jobs (MediaQueue with claims): each
 * free worker claims the next row of its lane from the database, whoever uploaded it. A lane
 * looks when told of a job (an upload here, or a NOTIFY from another process), when one of its
 * jobs ends, and every `pollMs` (a lease that ran out, a NOTIFY missed while reconnecting). One
 * claim per lane is under way at a time; one that finds a job looks again at once for the next.
 */
export class SharedLanes {
  private lanes: Record<Lane, { running: number; concurrency: number; looking: boolean; again: boolean }>;
  private stopped = false;
  private listening: { stop(): Promise<void> } | null = null;
  private poll: ReturnType<typeof setInterval> | null = null;
  private drained: (() => void)[] = [];

  constructor(
    private claims: MediaClaims,
    private work: (id: number) => Promise<void>,
    concurrency: Record<Lane, number>,
    /** Called whenever a job or a claim ends: MediaQueue's idle() looks then. */
    private settled: () => void,
  ) {
    const lane = (n: number) => ({ running: 0, concurrency: n, looking: false, again: false });
    this.lanes = { image: lane(concurrency.image), av: lane(concurrency.av) };
  }

  get running(): number {
    return this.lanes.image.running + this.lanes.av.running;
  }

  get looking(): number {
    return (this.lanes.image.looking ? 1 : 0) + (this.lanes.av.looking ? 1 : 0);
  }

  async start() {
    this.listening = await this.claims.start(() => this.lookAll());
    this.poll = setInterval(() => this.lookAll(), this.claims.pollMs);
    this.lookAll();
  }

  /** A job of this process's was written: the others are told, and this process looks at once. */
  enqueued(lane: Lane) {
    this.claims.announce().catch((e) => log("warn", "media queue: could not tell the other processes of a job", { error: String(e).split("\n")[0] }));
    this.look(lane);
  }

  private lookAll() {
    this.look("image");
    this.look("av");
  }

  private look(name: Lane) {
    const lane = this.lanes[name];
    if (this.stopped) return;
    // Told while a claim is under way: that claim may have missed the new row; look once more.
    if (lane.looking) {
      lane.again = true;
      return;
    }
    if (lane.running >= lane.concurrency) return;
    lane.looking = true;
    lane.again = false;
    this.claims.claim(name).then(
      (id) => {
        lane.looking = false;
        // A job claimed as the queue stops is run all the same (stop waits for it): it is ours now.
        if (id !== null) this.run(name, id);
        if (id !== null || lane.again) this.look(name);
        this.ended();
      },
      (e) => {
        lane.looking = false;
        log("warn", "media queue: a claim failed", { error: String(e).split("\n")[0] });
        this.ended();
      },
    );
  }

  private run(name: Lane, id: number) {
    const lane = this.lanes[name];
    lane.running++;
    const renewal = setInterval(() => {
      void this.claims.renew(id).then((held) => {
        if (!held) log("warn", "media queue: a claim was lost while its job ran; another process may run it again", { media_id: id });
      });
    }, this.claims.renewEveryMs);
    this.work(id)
      .catch((e) => log("error", "media job failed", { media_id: id, error: String(e).split("\n")[0] }))
      .finally(() => {
        clearInterval(renewal);
        lane.running--;
        this.look(name);
        this.ended();
      });
  }

  private ended() {
    this.settled();
    if (this.running === 0 && this.looking === 0) for (const done of this.drained.splice(0)) done();
  }

  /** Claims nothing more; the jobs running (and a claim under way) finish. */
  async stop() {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    await this.listening?.stop();
    while (this.running > 0 || this.looking > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }
}
