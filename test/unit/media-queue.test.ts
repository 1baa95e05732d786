import { describe, expect, test } from "bun:test";
import { MediaQueue, Slots } from "../../src/services/media/queue.ts";
import { eventually } from "../support/wait.ts";

describe("Slots", () => {
  test("one slot runs one job at a time, in arrival order, and frees the slot when a job fails", async () => {
    const slots = new Slots(1);
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const job = (name: string, fail = false) =>
      slots.run(async () => {
        running++;
        most = Math.max(most, running);
        log.push(`start ${name}`);
        await Promise.resolve();
        log.push(`end ${name}`);
        running--;
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([job("a"), job("b", true), job("c")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(most).toBe(1);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });
});

describe("MediaQueue lanes", () => {
  test("an image job runs while a video job holds the only video worker; each lane keeps its own bound", async () => {
    const started: number[] = [];
    const finish = new Map<number, () => void>();
    const queue = new MediaQueue(
      (id) =>
        new Promise<void>((resolve) => {
          started.push(id);
          finish.set(id, resolve);
        }),
      { image: 1, av: 1 },
    );
    queue.enqueue(1, "av");
    queue.enqueue(2, "av");
    queue.enqueue(3, "image");
    expect(started).toEqual([1, 3]);
    expect(queue.pending).toBe(3);
    finish.get(3)!();
    finish.get(1)!();
    await eventually(() => started.length === 3, "the second video job to start", 5_000);
    expect(started).toEqual([1, 3, 2]);
    const idle = queue.idle();
    finish.get(2)!();
    await idle;
    expect(queue.pending).toBe(0);
  });
});
