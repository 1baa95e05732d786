import { and, asc, eq, inArray, isNull, or } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import type { DatabasePort } from "../../db/port.ts";
import { mediaAttachments, type MediaRow } from "../../db/schema.ts";
import { ApiError, unprocessable } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import type { MediaAttacher } from "../statuses/posting.ts";
import { parseFocus } from "./media-input.ts";
import type { Meta } from "./media.ts";
import { visibleToSql } from "../statuses/visibility.ts";

const SHORTCODE_FILE = `SELECT m.file FROM media_attachments m JOIN statuses s ON s.id = m.status_id
  WHERE m.shortcode = ? AND m.processing = 'complete' AND ${visibleToSql("s", null)}`;

const NOT_READY = "Cannot attach files that have not finished processing. Try again in a moment!";

/**
 * Mastodon's PostStatusService#validate_media!: a video or audio file goes alone, and only
 * once processed (a Note sent without it would never be completed). Images may still be
 * processing: they are ready within a second, and the status shows them once they are.
 */
function checkCombination(rows: { type: string; processing: string }[]) {
  const av = (r: { type: string }) => r.type === "video" || r.type === "audio";
  if (rows.length > 1 && rows.some(av)) throw unprocessable("Cannot attach a video to a post that already contains images");
  if (rows.some((r) => r.processing === "failed" || (r.type !== "image" && r.processing !== "complete"))) throw unprocessable(NOT_READY);
}

/**
 * Attachments as parts of statuses: checked and attached when a status is posted or edited,
 * read in order for rendering, let go when a status is deleted, and reached by their short
 * link once public. The uploads themselves are the media service's.
 *
 * On the database port (issue 31) only the short link, an entry of its own. The rest stays on
 * `Db`, synchronous, for its callers not yet converted: posting resolves and attaches inside
 * its transaction, editing (`forEdit`, `reattach`), removal (`detachFrom`) and the status
 * reader (`forStatuses`, also the archive export's and federation's) need the result at once.
 */
export class StatusMedia implements MediaAttacher {
  constructor(
    private db: Db,
    private port: DatabasePort,
    private clock: Clock,
  ) {}

  resolve(accountId: number, ids: string[]): number[] {
    const numeric = ids.map((id) => (/^\d{1,16}$/.test(id) ? Number(id) : 0));
    const rows = this.db
      .select({ id: mediaAttachments.id, type: mediaAttachments.type, processing: mediaAttachments.processing })
      .from(mediaAttachments)
      .where(and(eq(mediaAttachments.accountId, accountId), isNull(mediaAttachments.statusId), inArray(mediaAttachments.id, numeric.slice(0, LIMITS.mediaAttachments))))
      .all();
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((_, i) => !found.has(numeric[i] as number));
    if (missing.length > 0) throw new ApiError(422, `Media ${missing.join(", ")} not found or already attached to another post`);
    checkCombination(rows);
    return [...new Set(numeric)];
  }

  attach(tx: Db, statusId: number, mediaIds: number[]) {
    mediaIds.forEach((id, position) => {
      tx.update(mediaAttachments).set({ statusId, scheduledStatusId: null, position, detachedAt: null }).where(eq(mediaAttachments.id, id)).run();
    });
  }

  /**
   * The attachments an edit may leave on a status, in the order asked: the author's own,
   * unattached or already on this status, at most four (unknown ids are passed over, as
   * Mastodon does). All must be processed.
   */
  forEdit(accountId: number, statusId: number, ids: string[]): MediaRow[] {
    const wanted = ids.slice(0, LIMITS.mediaAttachments).map((id) => (/^\d{1,16}$/.test(id) ? Number(id) : 0));
    const rows = this.db
      .select()
      .from(mediaAttachments)
      .where(
        and(
          eq(mediaAttachments.accountId, accountId),
          or(isNull(mediaAttachments.statusId), eq(mediaAttachments.statusId, statusId)),
          isNull(mediaAttachments.scheduledStatusId),
          inArray(mediaAttachments.id, wanted),
        ),
      )
      .all();
    checkCombination(rows);
    if (rows.some((r) => r.processing !== "complete")) throw unprocessable(NOT_READY);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return [...new Set(wanted)].flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }

  /**
   * Puts exactly `next` on the status, in order, with their new descriptions and focus
   * points; attachments it drops start the grace period of unattached media.
   */
  reattach(tx: Db, statusId: number, next: MediaRow[], attributes: { id: string; description?: string; focus?: string }[]) {
    const keep = new Set(next.map((m) => m.id));
    for (const old of tx.select({ id: mediaAttachments.id }).from(mediaAttachments).where(eq(mediaAttachments.statusId, statusId)).all()) {
      if (!keep.has(old.id)) tx.update(mediaAttachments).set({ statusId: null, detachedAt: this.clock.now() }).where(eq(mediaAttachments.id, old.id)).run();
    }
    next.forEach((m, position) => {
      const changes: Partial<MediaRow> = { statusId, position, detachedAt: null };
      const attr = attributes.find((a) => a.id === String(m.id));
      if (attr?.description !== undefined) changes.description = attr.description;
      const focus = attr?.focus ? parseFocus(attr.focus) : null;
      if (focus) changes.meta = JSON.stringify({ ...(JSON.parse(m.meta) as Meta), focus });
      tx.update(mediaAttachments).set(changes).where(eq(mediaAttachments.id, m.id)).run();
    });
  }

  /** Media of a status about to be deleted start their redraft grace period now. */
  detachFrom(statusId: number) {
    this.db.update(mediaAttachments).set({ detachedAt: this.clock.now() }).where(eq(mediaAttachments.statusId, statusId)).run();
  }

  /**
   * The original file behind a `text_url`, for anyone: only media on a public or unlisted
   * status, once processed (Mastodon's MediaController lets through what the status lets through).
   */
  async publicFileByShortcode(shortcode: string): Promise<string | null> {
    const row = await this.port.get<{ file: string | null }>(SHORTCODE_FILE, [shortcode]);
    return row?.file ?? null;
  }

  /** Attachments of these statuses, in their order (for rendering statuses). */
  forStatuses(statusIds: number[]): Map<number, MediaRow[]> {
    const out = new Map<number, MediaRow[]>();
    if (statusIds.length === 0) return out;
    for (const row of this.db
      .select()
      .from(mediaAttachments)
      .where(inArray(mediaAttachments.statusId, statusIds))
      .orderBy(asc(mediaAttachments.statusId), asc(mediaAttachments.position))
      .all()) {
      const list = out.get(row.statusId as number) ?? out.set(row.statusId as number, []).get(row.statusId as number)!;
      list.push(row);
    }
    return out;
  }
}
