import type { Clock } from "../clock.ts";
import { log } from "../log.ts";
import type { TimerClaims } from "./pg-timer-claims.ts";
import type { TimerShare } from "./pg-timer-relay.ts";

const SLOT_MS = 1000;
const SLOTS = 512;

interface Timer {
  key: string;
  dueAt: number;
  /** Full turns of the wheel left before the timer's slot is really its time. */
  rounds: number;
  slot: number;
}

/**
 * A hashed timer wheel over the injectable clock: 512 one-second slots, each timer in the
 * slot of its due second with a count of remaining turns. Adding and cancelling are O(1);
 * each tick looks at one slot. Timers hold only a key and a time (the work they stand for
 * lives in SQLite and is re-read when they fire), so 100,000 pending schedules stay small,
 * and a restart rebuilds the wheel from the database.
 *
 * The wheel ticks every second of real time and also whenever a test moves the clock.
 *
 * With `claims` (several processes on PostgreSQL, each with a wheel holding the same timers) a
 * fired timer runs only if this process wins its claim; a loser holds it again until the
 * winner's lease ends, and runs it then if the winner died without finishing it. With `share`
 * as well, the timers this wheel is given are told to the other processes' wheels and theirs to
 * this one (pg-timer-relay.ts), so every process holds them: when the process that set a timer
 * dies, another runs it at its time.
 */
export class TimerWheel {
  private slots: Map<string, Timer>[] = Array.from({ length: SLOTS }, () => new Map());
  private timers = new Map<string, Timer>();
  private handlers = new Map<string, (id: string) => void | Promise<void>>();
  /** The last second the wheel has processed. */
  private cursor: number;
  private interval: ReturnType<typeof setInterval> | null = null;
  private stopJump: () => void;
  private ticking = false;
  /** Handlers that returned a promise and have not settled yet. */
  private running = new Set<Promise<void>>();
  /**
   * With claims: the due time a timer's claim is for, while the timer waits in the wheel for
   * another process's lease to end (it is placed at the lease's end). Kept out of Timer, whose
   * size the wheel without claims keeps as it was.
   */
  private claimDue = new Map<string, number>();

  constructor(
    private clock: Clock,
    private claims: TimerClaims | null = null,
    private share: TimerShare | null = null,
  ) {
    this.cursor = Math.floor(clock.now() / SLOT_MS) - 1;
    this.stopJump = clock.onJump(() => this.tick());
    share?.hear((key, dueAt) => this.heard(key, dueAt));
  }

  /** Handles timers whose key starts with `kind:`; the rest of the key is passed on. */
  handle(kind: string, handler: (id: string) => void | Promise<void>) {
    this.handlers.set(kind, handler);
  }

  start() {
    this.interval ??= setInterval(() => this.tick(), SLOT_MS / 4);
    this.interval.unref?.();
    this.tick();
  }

  stop() {
    if (this.interval) clearInterval(this.interval);
    this.interval = null;
    this.stopJump();
  }

  get size() {
    return this.timers.size;
  }

  /** Whether the timer `kind:id` is on the wheel (tests: one heard from another process). */
  holds(key: string): boolean {
    return this.timers.has(key);
  }

  /**
   * Fires whatever is due by the clock now and resolves once every handler started so far
   * (and any they started in turn) has finished: tests await it after moving the clock.
   */
  async idle(): Promise<void> {
    this.tick();
    while (this.running.size > 0) {
      await Promise.allSettled([...this.running]);
      this.tick();
    }
  }

  schedule(kind: string, id: string | number, dueAt: number) {
    const key = `${kind}:${id}`;
    this.hold(kind, id, dueAt);
    this.share?.told(key, dueAt);
  }

  /**
   * As `schedule`, for a timer read from the database (a restore at start): with several
   * processes, each reads the rows itself, so the others are not told.
   */
  hold(kind: string, id: string | number, dueAt: number) {
    const key = `${kind}:${id}`;
    if (this.claims) this.claimDue.delete(key);
    this.place(key, dueAt);
  }

  /** A timer another process set (a time) or dropped (null). */
  private heard(key: string, dueAt: number | null) {
    if (this.claims) this.claimDue.delete(key);
    if (dueAt === null) this.cancelKey(key);
    else this.place(key, dueAt);
  }

  private place(key: string, dueAt: number) {
    this.cancelKey(key);
    // The tick of second T runs once the clock has reached T: a timer goes in the first second
    // at or after its time, so it never fires early. Already due: the next slot, which tick()
    // looks into for what is due (see there), so it fires at once, not at the next second.
    const second = Math.ceil(dueAt / SLOT_MS);
    const ahead = Math.max(0, second - this.cursor - 1);
    const slot = (this.cursor + 1 + ahead) % SLOTS;
    const timer: Timer = { key, dueAt, rounds: Math.floor(ahead / SLOTS), slot };
    this.slots[slot]!.set(key, timer);
    this.timers.set(key, timer);
    if (dueAt <= this.clock.now()) queueMicrotask(() => this.tick());
  }

  cancel(kind: string, id: string | number) {
    const key = `${kind}:${id}`;
    if (this.claims) this.claimDue.delete(key);
    this.cancelKey(key);
    this.share?.told(key, null);
  }

  private cancelKey(key: string) {
    const existing = this.timers.get(key);
    if (!existing) return;
    this.slots[existing.slot]!.delete(key);
    this.timers.delete(key);
  }

  /** Processes every second from the cursor up to now. */
  tick() {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now();
      const target = Math.floor(now / SLOT_MS);
      if (target - this.cursor > SLOTS) {
        // The clock jumped more than a whole turn: one pass over every timer is cheaper.
        this.cursor = target;
        this.reslot(now);
        return;
      }
      while (this.cursor < target) {
        this.cursor++;
        const slot = this.slots[this.cursor % SLOTS]!;
        for (const timer of [...slot.values()]) {
          if (timer.rounds > 0) timer.rounds--;
          else this.fire(timer);
        }
      }
      // The coming second's slot holds, in its last turn, timers due within that second; those
      // whose time the clock has passed already fire now rather than at the second's end.
      for (const timer of [...this.slots[(this.cursor + 1) % SLOTS]!.values()]) {
        if (timer.rounds === 0 && timer.dueAt <= now) this.fire(timer);
      }
    } finally {
      this.ticking = false;
    }
  }

  private reslot(now: number) {
    const all = [...this.timers.values()];
    this.timers.clear();
    for (const s of this.slots) s.clear();
    for (const timer of all) {
      if (timer.dueAt <= now) this.fire(timer);
      else this.place(timer.key, timer.dueAt);
    }
  }

  private fire(timer: Timer) {
    this.slots[timer.slot]!.delete(timer.key);
    this.timers.delete(timer.key);
    const colon = timer.key.indexOf(":");
    const handler = this.handlers.get(timer.key.slice(0, colon));
    if (!handler) return;
    if (this.claims) {
      this.track(this.fireClaimed(this.claims, timer, handler));
      return;
    }
    try {
      const result = handler(timer.key.slice(colon + 1));
      if (result instanceof Promise) this.track(result, timer.key);
    } catch (e) {
      log("error", "timer failed", { timer: timer.key, error: String(e) });
    }
  }

  private track(work: Promise<void>, key?: string) {
    const settled = work.catch((e) => log("error", "timer failed", { ...(key ? { timer: key } : {}), error: String(e) })).finally(() => this.running.delete(settled));
    this.running.add(settled);
  }

  /** Runs the timer if this process wins its claim; else holds it until the winner's lease ends. */
  private async fireClaimed(claims: TimerClaims, timer: Timer, handler: (id: string) => void | Promise<void>) {
    const dueAt = this.claimDue.get(timer.key) ?? timer.dueAt;
    this.claimDue.delete(timer.key);
    const answer = await claims.claim(timer.key, dueAt);
    if (!answer.run) {
      // Scheduled again meanwhile (a new time): that timer stands instead.
      if (answer.retryAt !== null && !this.timers.has(timer.key)) {
        this.claimDue.set(timer.key, dueAt);
        this.place(timer.key, answer.retryAt);
      }
      return;
    }
    let renewing: Promise<unknown> = Promise.resolve();
    const renewal = setInterval(() => {
      renewing = answer.renew();
    }, claims.renewEveryMs);
    try {
      await handler(timer.key.slice(timer.key.indexOf(":") + 1));
    } catch (e) {
      log("error", "timer failed", { timer: timer.key, error: String(e) });
    } finally {
      clearInterval(renewal);
      // A renewal still on its way would find the claim done and call it lost.
      await renewing;
    }
    await claims.finish(timer.key, dueAt);
  }
}
