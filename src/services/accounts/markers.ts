import { and, eq, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";

export const MARKER_TIMELINES = ["home", "notifications"] as const;
export type MarkerTimeline = (typeof MARKER_TIMELINES)[number];

export interface Marker {
  timeline: MarkerTimeline;
  lastReadId: string;
  version: number;
  updatedAt: number;
}

/** Read positions of the home and notifications timelines, synced across a user's clients. */
export class MarkerService {
  // Built once: drizzle spends more building a query than SQLite running it (about 25 µs
  // against 5 µs a statement, measured), and a prepared query runs in whichever transaction
  // executes it (src/db/port.ts).
  private q;

  constructor(
    private db: DatabasePort,
    private clock: Clock,
  ) {
    const { markers } = db.tables;
    const orm = db.orm;
    const mine = and(eq(markers.accountId, sql.placeholder("accountId")), eq(markers.timeline, sql.placeholder("timeline")));
    this.q = {
      ofAccount: orm.select().from(markers).where(eq(markers.accountId, sql.placeholder("accountId"))).prepare(),
      one: orm.select().from(markers).where(mine).prepare(),
      // The first save makes the row; a later one moves it, and its version, only when the
      // position changes (RETURNING gives nothing then). One statement, so that two clients'
      // first saves at once (PostgreSQL) make one row rather than the second failing on the key.
      save: orm
        .insert(markers)
        .values({ accountId: sql.placeholder("accountId"), timeline: sql.placeholder("timeline"), lastReadId: sql.placeholder("lastReadId"), version: 1, updatedAt: sql.placeholder("updatedAt") })
        .onConflictDoUpdate({
          target: [markers.accountId, markers.timeline],
          set: { lastReadId: sql`excluded.last_read_id`, version: sql`${markers.version} + 1`, updatedAt: sql`excluded.updated_at` },
          setWhere: sql`${markers.lastReadId} <> excluded.last_read_id`,
        })
        .returning()
        .prepare(),
    };
  }

  async get(accountId: number, timelines: string[]): Promise<Marker[]> {
    const wanted = timelines.filter((t): t is MarkerTimeline => (MARKER_TIMELINES as readonly string[]).includes(t));
    if (wanted.length === 0) return [];
    // An account has at most one marker per timeline (two rows).
    return ((await this.q.ofAccount.execute({ accountId })) as Marker[]).filter((m) => wanted.includes(m.timeline));
  }

  /** Saves positions; the version moves only when the position does, as Rails' lock_version. */
  async set(accountId: number, positions: Partial<Record<MarkerTimeline, string>>): Promise<Marker[]> {
    const now = this.clock.now();
    const saved: Marker[] = [];
    await this.db.transaction(async () => {
      for (const timeline of MARKER_TIMELINES) {
        const lastReadId = positions[timeline];
        if (lastReadId === undefined) continue;
        const [moved] = (await this.q.save.execute({ accountId, timeline, lastReadId, updatedAt: now })) as Marker[];
        saved.push(moved ?? ((await this.q.one.execute({ accountId, timeline })) as Marker[])[0]!);
      }
    });
    return saved;
  }
}
