import { and, eq, inArray } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { markers } from "../../db/schema.ts";

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
  constructor(
    private db: Db,
    private clock: Clock,
  ) {}

  get(accountId: number, timelines: string[]): Marker[] {
    const wanted = timelines.filter((t): t is MarkerTimeline => (MARKER_TIMELINES as readonly string[]).includes(t));
    if (wanted.length === 0) return [];
    return this.db
      .select()
      .from(markers)
      .where(and(eq(markers.accountId, accountId), inArray(markers.timeline, wanted)))
      .all() as Marker[];
  }

  /** Saves positions; the version moves only when the position does, as Rails' lock_version. */
  set(accountId: number, positions: Partial<Record<MarkerTimeline, string>>): Marker[] {
    const now = this.clock.now();
    const saved: Marker[] = [];
    this.db.transaction((tx) => {
      for (const timeline of MARKER_TIMELINES) {
        const lastReadId = positions[timeline];
        if (lastReadId === undefined) continue;
        const existing = tx
          .select()
          .from(markers)
          .where(and(eq(markers.accountId, accountId), eq(markers.timeline, timeline)))
          .get();
        if (!existing) {
          const row = { accountId, timeline, lastReadId, version: 1, updatedAt: now };
          tx.insert(markers).values(row).run();
          saved.push(row);
        } else if (existing.lastReadId !== lastReadId) {
          const row = { ...existing, lastReadId, version: existing.version + 1, updatedAt: now } as Marker;
          tx.update(markers)
            .set({ lastReadId, version: row.version, updatedAt: now })
            .where(and(eq(markers.accountId, accountId), eq(markers.timeline, timeline)))
            .run();
          saved.push(row);
        } else {
          saved.push(existing as Marker);
        }
      }
    });
    return saved;
  }
}
