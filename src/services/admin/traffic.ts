import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { log } from "../../log.ts";
import type { InboxRate, TrafficHour } from "../../models/federation-health.ts";

export type { InboxRate, TrafficHour };

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
/** Hours kept in federation_traffic: a week, of which the pages chart the last day. */
const KEPT_HOURS = 7 * 24;

/** What federation counts as it works (src/federation: the queue, the outbox errors, the inbox listeners). */
export interface TrafficCounter {
  /** A delivery was handled by the queue (sent, or failed: Fedify tells failures apart). */
  attempted(): void;
  /** A delivery attempt failed (it is retried, or given up). */
  failed(): void;
  /** An activity from another server was verified and handed to a listener. */
  received(): void;
}

type Kind = "attempted" | "failed" | "received";

/**
 * Federation's traffic for the health page. Counting must cost nothing on the paths it counts
 * (every delivery, every inbound activity), so counts are kept in memory and written to
 * federation_traffic by the hour at most a minute after they were made, when something is
 * next counted or read, and at a clean stop. What survives a restart: the hourly counts up to
 * the last write (a kill -9 loses at most the last minute's); the per-minute inbox figures are
 * this process's alone and start again at each start. Counting stays synchronous (federation
 * cannot wait); a write goes through the port and is awaited by whoever asks (`flush`, `hours`).
 * Each write adds its own counts (ON CONFLICT adds, on either database), so writes in flight
 * together lose nothing; one that fails loses its minute, and says so.
 */
export class FederationTraffic implements TrafficCounter {
  private pending = new Map<number, Record<Kind, number>>();
  private lastWrite: number;
  private readonly startedAt: number;
  /** Received activities by minute, a ring of the last hour: [minute start, count] per slot. */
  private minutes: [number, number][] = Array.from({ length: 60 }, () => [0, 0]);
  /** Writes under way, for flush() and hours() to await. */
  private writing = new Set<Promise<void>>();

  constructor(
    private port: DatabasePort,
    private clock: Clock,
  ) {
    this.startedAt = clock.now();
    this.lastWrite = this.startedAt;
  }

  attempted(): void {
    this.count("attempted");
  }

  failed(): void {
    this.count("failed");
  }

  received(): void {
    const now = this.clock.now();
    const minute = now - (now % MINUTE);
    const slot = this.minutes[(minute / MINUTE) % 60]!;
    if (slot[0] !== minute) {
      slot[0] = minute;
      slot[1] = 0;
    }
    slot[1]++;
    this.count("received");
  }

  /** Writes what was counted since the last write, and forgets hours older than a week; resolves once every write begun is done. */
  async flush(): Promise<void> {
    this.write();
    while (this.writing.size > 0) await Promise.all([...this.writing]);
  }

  /** The last `count` hours, the current one last, hours with nothing counted as zeros. */
  async hours(count = 24): Promise<TrafficHour[]> {
    await this.flush();
    const current = hourOf(this.clock.now());
    const first = current - (count - 1) * HOUR;
    const rows = await this.port.all<TrafficHour>("SELECT hour, attempted, failed, received FROM federation_traffic WHERE hour >= ? ORDER BY hour", [first]);
    const stored = new Map(rows.map((r) => [r.hour, r]));
    return Array.from({ length: count }, (_, i) => {
      const hour = first + i * HOUR;
      return stored.get(hour) ?? { hour, attempted: 0, failed: 0, received: 0 };
    });
  }

  /** Starts writing what was counted (taken from memory at once, so a count made meanwhile waits for the next write). */
  private write(): void {
    const now = this.clock.now();
    this.lastWrite = now;
    const rows = [...this.pending];
    this.pending.clear();
    const written = this.port
      .transaction(async () => {
        for (const [hour, c] of rows) {
          await this.port.run(
            `INSERT INTO federation_traffic (hour, attempted, failed, received) VALUES (?, ?, ?, ?)
             ON CONFLICT (hour) DO UPDATE SET attempted = federation_traffic.attempted + excluded.attempted, failed = federation_traffic.failed + excluded.failed, received = federation_traffic.received + excluded.received`,
            [hour, c.attempted, c.failed, c.received],
          );
        }
        await this.port.run("DELETE FROM federation_traffic WHERE hour < ?", [hourOf(now) - KEPT_HOURS * HOUR]);
      })
      .catch((e) => log("warn", "federation traffic could not be written", { error: String(e).split("\n")[0] }));
    this.writing.add(written);
    void written.finally(() => this.writing.delete(written));
  }

  inboxRate(): InboxRate {
    const now = this.clock.now();
    const minute = now - (now % MINUTE);
    let lastMinute = 0;
    let lastHour = 0;
    for (const [at, n] of this.minutes) {
      if (at === minute - MINUTE) lastMinute = n;
      if (at > minute - HOUR && at <= minute) lastHour += n;
    }
    return { lastMinute, lastHour, countingSince: this.startedAt };
  }

  private count(kind: Kind): void {
    const now = this.clock.now();
    const hour = hourOf(now);
    let bucket = this.pending.get(hour);
    if (!bucket) this.pending.set(hour, (bucket = { attempted: 0, failed: 0, received: 0 }));
    bucket[kind]++;
    if (now - this.lastWrite >= MINUTE) {
      this.lastWrite = now;
      // Counted from wherever federation works, perhaps inside a write's transaction: the write
      // goes after its commit (or at once outside one), never into it; after a rollback the
      // counts stay in memory for the next write.
      this.port.afterCommit(() => this.write());
    }
  }
}

const hourOf = (ms: number) => ms - (ms % HOUR);
