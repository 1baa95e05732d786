import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock.ts";
import { TimerWheel } from "../../src/infra/timer-wheel.ts";

const START = Date.UTC(2026, 10, 22, 12, 0, 0);
const SECOND = 1000;

const wheels: TimerWheel[] = [];
afterEach(() => {
  for (const w of wheels.splice(0)) w.stop();
});

/** A wheel on a clock that stands still until the test moves it; `fired` records keys in firing order. */
function wheelAt(start = START) {
  const clock = new ManualClock(start);
  const wheel = new TimerWheel(clock);
  wheels.push(wheel);
  const fired: string[] = [];
  wheel.handle("t", (id) => void fired.push(id));
  wheel.tick();
  return { clock, wheel, fired };
}

describe("TimerWheel", () => {
  test("fires in order of due time when the clock passes several at once", () => {
    const { clock, wheel, fired } = wheelAt();
    wheel.schedule("t", "c", START + 30 * SECOND);
    wheel.schedule("t", "a", START + 5 * SECOND);
    wheel.schedule("t", "b", START + 12 * SECOND);
    clock.advance(60 * SECOND);
    expect(fired).toEqual(["a", "b", "c"]);
    expect(wheel.size).toBe(0);
  });

  test("never early: a timer due within a second fires once the clock reaches its time, not at the second's start", () => {
    const { clock, wheel, fired } = wheelAt();
    wheel.schedule("t", "x", START + 10 * SECOND + 700);
    clock.set(START + 10 * SECOND + 100);
    expect(fired).toEqual([]);
    clock.set(START + 10 * SECOND + 699);
    expect(fired).toEqual([]);
    clock.set(START + 10 * SECOND + 700);
    expect(fired).toEqual(["x"]);
  });

  test("timers in the same slot fire together, each once, and only when due", () => {
    const { clock, wheel, fired } = wheelAt();
    wheel.schedule("t", "first", START + 3 * SECOND + 200);
    wheel.schedule("t", "second", START + 3 * SECOND + 900);
    // The same slot one whole turn (512 s) later: must not fire with them.
    wheel.schedule("t", "next-turn", START + 3 * SECOND + 512 * SECOND + 200);
    clock.set(START + 3 * SECOND + 500);
    expect(fired).toEqual(["first"]);
    clock.set(START + 4 * SECOND);
    expect(fired).toEqual(["first", "second"]);
    clock.set(START + 515 * SECOND);
    expect(fired).toEqual(["first", "second"]);
    clock.set(START + 515 * SECOND + 200);
    expect(fired).toEqual(["first", "second", "next-turn"]);
  });

  test("far-future timers wait out their turns, stepped through second by second", () => {
    const { clock, wheel, fired } = wheelAt();
    const due = START + 3 * 512 * SECOND + 17 * SECOND;
    wheel.schedule("t", "far", due);
    // Step just under a turn at a time: the timer's slot comes round three times before its turn.
    while (clock.now() + 500 * SECOND < due) {
      clock.advance(500 * SECOND);
      expect(fired).toEqual([]);
    }
    clock.set(due - 1);
    expect(fired).toEqual([]);
    clock.set(due);
    expect(fired).toEqual(["far"]);
  });

  test("a jump of more than a whole turn fires what is due and keeps the rest at their times", () => {
    const { clock, wheel, fired } = wheelAt();
    wheel.schedule("t", "soon", START + 10 * SECOND);
    wheel.schedule("t", "mid", START + 2000 * SECOND);
    wheel.schedule("t", "late", START + 5000 * SECOND);
    clock.set(START + 3000 * SECOND);
    expect(fired).toEqual(["soon", "mid"]);
    clock.set(START + 5000 * SECOND - 1);
    expect(fired).toEqual(["soon", "mid"]);
    clock.set(START + 5000 * SECOND);
    expect(fired).toEqual(["soon", "mid", "late"]);
  });

  test("cancel removes a timer; scheduling a key again moves it", () => {
    const { clock, wheel, fired } = wheelAt();
    wheel.schedule("t", "gone", START + 5 * SECOND);
    wheel.schedule("t", "moved", START + 5 * SECOND);
    wheel.schedule("t", "earlier", START + 20 * SECOND);
    wheel.cancel("t", "gone");
    wheel.schedule("t", "moved", START + 30 * SECOND);
    wheel.schedule("t", "earlier", START + 2 * SECOND);
    expect(wheel.size).toBe(2);
    clock.advance(10 * SECOND);
    expect(fired).toEqual(["earlier"]);
    clock.advance(30 * SECOND);
    expect(fired).toEqual(["earlier", "moved"]);
    // Cancelling what is not there is harmless.
    wheel.cancel("t", "gone");
    wheel.cancel("t", "never");
    expect(wheel.size).toBe(0);
  });

  test("a timer already due fires at once, without waiting for the clock to move", async () => {
    const { wheel, fired } = wheelAt(START + 400);
    wheel.schedule("t", "overdue", START - 60 * SECOND);
    wheel.schedule("t", "now", START + 400);
    await wheel.idle();
    expect(fired).toEqual(["overdue", "now"]);
  });

  test("a handler may reschedule itself (a repeating beat)", () => {
    const { clock, wheel } = wheelAt();
    const beats: number[] = [];
    wheel.handle("beat", () => {
      beats.push(clock.now());
      wheel.schedule("beat", "x", clock.now() + 15 * SECOND);
    });
    wheel.schedule("beat", "x", START + 15 * SECOND);
    for (let i = 0; i < 4; i++) clock.advance(15 * SECOND);
    expect(beats).toEqual([1, 2, 3, 4].map((n) => START + n * 15 * SECOND));
    expect(wheel.size).toBe(1);
  });

  test("idle() waits for handlers that return a promise; a failing one does not stop the others", async () => {
    const { clock, wheel } = wheelAt();
    const done: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    wheel.handle("slow", async (id) => {
      await gate;
      done.push(id);
    });
    wheel.handle("bad", () => {
      throw new Error("handler failed");
    });
    wheel.handle("rejects", async () => {
      throw new Error("handler rejected");
    });
    wheel.schedule("bad", 1, START + SECOND);
    wheel.schedule("rejects", 1, START + SECOND);
    wheel.schedule("slow", "a", START + SECOND);
    clock.advance(2 * SECOND);
    const idle = wheel.idle();
    let settled = false;
    void idle.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    release();
    await idle;
    expect(done).toEqual(["a"]);
  });

  test("a restart rebuilds the wheel: timers due while it was down fire on the first tick, the rest on time", () => {
    const clock = new ManualClock(START);
    const before = new TimerWheel(clock);
    before.schedule("t", "during-downtime", START + 60 * SECOND);
    before.schedule("t", "after", START + 600 * SECOND);
    before.stop();
    // What the services keep in SQLite, re-read by restore() at start-up.
    const pending = [
      { id: "during-downtime", dueAt: START + 60 * SECOND },
      { id: "after", dueAt: START + 600 * SECOND },
    ];
    clock.set(START + 120 * SECOND);
    // A stopped wheel no longer listens to the clock.
    expect(before.size).toBe(2);

    const wheel = new TimerWheel(clock);
    wheels.push(wheel);
    const fired: string[] = [];
    wheel.handle("t", (id) => void fired.push(id));
    for (const p of pending) wheel.schedule("t", p.id, p.dueAt);
    wheel.tick();
    expect(fired).toEqual(["during-downtime"]);
    clock.set(START + 600 * SECOND - 1);
    expect(fired).toEqual(["during-downtime"]);
    clock.set(START + 600 * SECOND);
    expect(fired).toEqual(["during-downtime", "after"]);
  });
});
