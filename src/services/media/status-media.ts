import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { marks, padded, paddedSize } from "../../db/prepared.ts";
import { rowReader } from "../../db/rows.ts";
import { mediaAttachments, type MediaRow } from "../../db/schema.ts";
import { ApiError, unprocessable } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import type { MediaAttacher } from "../statuses/posting.ts";
import { parseFocus } from "./media-input.ts";
import type { Meta } from "./media.ts";
import { visibleToSql } from "../statuses/visibility.ts";

const SHORTCODE_FILE = `SELECT m.file FROM media_attachments m JOIN statuses s ON s.id = m.status_id
  WHERE m.shortcode = ? AND m.processing = 'complete' AND ${visibleToSql("s", null)}`;

const ATTACH = "UPDATE media_attachments SET status_id = ?, scheduled_status_id = NULL, position = ?, detached_at = NULL WHERE id = ?";
const MEDIA = rowReader(mediaAttachments);

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
 * All on the database port (issue 31): what posting and editing call inside their port
 * transactions (`resolve`, `attach`, `forEdit`, `reattach`), removal's `detachFrom`, and the
 * reads rendering awaits (`forStatuses`: the status reader, federation's Notes, the archive).
 */
export class StatusMedia implements MediaAttacher {
  constructor(
    private port: DatabasePort,
    private clock: Clock,
  ) {}

  /** The caller's unattached media for these ids (posting checks them before its transaction, publishing again inside it). */
  async resolve(accountId: number, ids: string[]): Promise<number[]> {
    const numeric = ids.map((id) => (/^\d{1,16}$/.test(id) ? Number(id) : 0));
    const wanted = numeric.slice(0, LIMITS.mediaAttachments);
    // Raw, one shape per count (at most four): a builder's building costs more than the statement.
    const rows = await this.port.all<{ id: number; type: string; processing: string }>(
      `SELECT id, type, processing FROM media_attachments WHERE account_id = ? AND status_id IS NULL AND id IN (${wanted.map(() => "?").join(", ")})`,
      [accountId, ...wanted],
    );
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((_, i) => !found.has(numeric[i] as number));
    if (missing.length > 0) throw new ApiError(422, `Media ${missing.join(", ")} not found or already attached to another post`);
    checkCombination(rows);
    return [...new Set(numeric)];
  }

  /** Puts these media on a new status, in order (inside the post's transaction). */
  async attach(statusId: number, mediaIds: number[]): Promise<void> {
    for (const [position, id] of mediaIds.entries()) await this.port.run(ATTACH, [statusId, position, id]);
  }

  /**
   * The attachments an edit may leave on a status, in the order asked: the author's own,
   * unattached or already on this status, at most four (unknown ids are passed over, as
   * Mastodon does). All must be processed.
   */
  async forEdit(accountId: number, statusId: number, ids: string[]): Promise<MediaRow[]> {
    const wanted = ids.slice(0, LIMITS.mediaAttachments).map((id) => (/^\d{1,16}$/.test(id) ? Number(id) : 0));
    const rows = (
      await this.port.values(
        `SELECT ${MEDIA.columns} ${MEDIA.from} WHERE account_id = ? AND (status_id IS NULL OR status_id = ?) AND scheduled_status_id IS NULL AND id IN (${wanted.map(() => "?").join(", ")})`,
        [accountId, statusId, ...wanted],
      )
    ).map(MEDIA.map);
    checkCombination(rows);
    if (rows.some((r) => r.processing !== "complete")) throw unprocessable(NOT_READY);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return [...new Set(wanted)].flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }

  /**
   * Puts exactly `next` on the status, in order, with their new descriptions and focus
   * points; attachments it drops start the grace period of unattached media. Inside the edit's transaction.
   */
  async reattach(statusId: number, next: MediaRow[], attributes: { id: string; description?: string; focus?: string }[]): Promise<void> {
    // Raw statements, one shape per count or set of changes (cached by the driver): builders' building cost the edit's path CPU.
    const keep = next.map((m) => m.id);
    await this.port.run(
      `UPDATE media_attachments SET status_id = NULL, detached_at = ? WHERE status_id = ?${keep.length > 0 ? ` AND id NOT IN (${keep.map(() => "?").join(", ")})` : ""}`,
      [this.clock.now(), statusId, ...keep],
    );
    for (const [position, m] of next.entries()) {
      const sets = ["status_id = ?", "position = ?", "detached_at = NULL"];
      const params: unknown[] = [statusId, position];
      const attr = attributes.find((a) => a.id === String(m.id));
      if (attr?.description !== undefined) sets.push("description = ?"), params.push(attr.description);
      const focus = attr?.focus ? parseFocus(attr.focus) : null;
      if (focus) sets.push("meta = ?"), params.push(JSON.stringify({ ...(JSON.parse(m.meta) as Meta), focus }));
      await this.port.run(`UPDATE media_attachments SET ${sets.join(", ")} WHERE id = ?`, [...params, m.id]);
    }
  }

  /** Media of a status about to be deleted start their redraft grace period now. */
  async detachFrom(statusId: number): Promise<void> {
    await this.port.run("UPDATE media_attachments SET detached_at = ? WHERE status_id = ?", [this.clock.now(), statusId]);
  }

  /**
   * The original file behind a `text_url`, for anyone: only media on a public or unlisted
   * status, once processed (Mastodon's MediaController lets through what the status lets through).
   */
  async publicFileByShortcode(shortcode: string): Promise<string | null> {
    const row = await this.port.get<{ file: string | null }>(SHORTCODE_FILE, [shortcode]);
    return row?.file ?? null;
  }

  /** Attachments of these statuses, in their order (for rendering statuses; the ids padded, db/prepared.ts). */
  async forStatuses(statusIds: number[]): Promise<Map<number, MediaRow[]>> {
    if (statusIds.length === 0) return new Map();
    const size = paddedSize(statusIds.length);
    const found = await this.port.values(
      `SELECT ${MEDIA.columns} ${MEDIA.from} WHERE status_id IN (${marks(size)}) ORDER BY status_id, position`,
      padded(statusIds, size),
    );
    return byStatus(found.map(MEDIA.map));
  }
}

function byStatus(rows: MediaRow[]): Map<number, MediaRow[]> {
  const out = new Map<number, MediaRow[]>();
  for (const row of rows) {
    const list = out.get(row.statusId as number) ?? out.set(row.statusId as number, []).get(row.statusId as number)!;
    list.push(row);
  }
  return out;
}
