import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
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
 * this process's alone and start again at each start.
 */
export class FederationTraffic implements TrafficCounter {
  private pending = new Map<number, Record<Kind, number>>();
  private lastWrite: number;
  private readonly startedAt: number;
  /** Received activities by minute, a ring of the last hour: [minute start, count] per slot. */
  private minutes: [number, number][] = Array.from({ length: 60 }, () => [0, 0]);

  constructor(
    private db: Db,
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

  /** Writes what was counted since the last write, and forgets hours older than a week. */
  flush(): void {
    const now = this.clock.now();
    this.lastWrite = now;
    const rows = [...this.pending];
    this.pending.clear();
    const sqlite = this.db.$client;
    sqlite.transaction(() => {
      const upsert = sqlite.query(
        `INSERT INTO federation_traffic (hour, attempted, failed, received) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (hour) DO UPDATE SET attempted = attempted + ?2, failed = failed + ?3, received = received + ?4`,
      );
      for (const [hour, c] of rows) upsert.run(hour, c.attempted, c.failed, c.received);
      sqlite.run("DELETE FROM federation_traffic WHERE hour < ?", [hourOf(now) - KEPT_HOURS * HOUR]);
    })();
  }

  /** The last `count` hours, the current one last, hours with nothing counted as zeros. */
  hours(count = 24): TrafficHour[] {
    this.flush();
    const current = hourOf(this.clock.now());
    const first = current - (count - 1) * HOUR;
    const stored = new Map(
      this.db.$client
        .query<TrafficHour, [number]>("SELECT hour, attempted, failed, received FROM federation_traffic WHERE hour >= ? ORDER BY hour")
        .all(first)
        .map((r) => [r.hour, r]),
    );
    return Array.from({ length: count }, (_, i) => {
      const hour = first + i * HOUR;
      return stored.get(hour) ?? { hour, attempted: 0, failed: 0, received: 0 };
    });
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
    if (now - this.lastWrite >= MINUTE) this.flush();
  }
}

const hourOf = (ms: number) => ms - (ms % HOUR);
