import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import type { MediaRow } from "../../db/schema.ts";
import { LIMITS } from "../../limits.ts";
import { log } from "../../log.ts";
import { blurhashOf, geometry, inspect, renderOriginal, renderPreview } from "../../media-files/images.ts";
import type { MediaStorage } from "../../media-files/storage.ts";
import type { EventBus } from "../../infra/events.ts";
import type { RenderCache } from "../statuses/render-cache.ts";
import type { Meta } from "./media.ts";
import { unchangedSince } from "./row-guard.ts";

export interface RemoteMediaCacheOptions {
  /** Bound of all cached files together; past it the oldest statuses' copies go first. */
  maxTotalBytes: number;
  /** What one download may be; larger media stay at their own server. */
  maxFileBytes?: number;
  /** Downloads a remote file under a cap (OutgoingHttp.bytes in src/net/outgoing.ts, in the server). */
  download(url: string, maxBytes: number): Promise<Uint8Array>;
}

/**
 * Local copies of remote images (CACHE_REMOTE_MEDIA), made with the pipeline of local uploads:
 * checked from the bytes alone, re-encoded without EXIF, a preview and a blurhash. Shown from
 * here once made, with `remote_url` still naming their origin (as Mastodon shows cached media);
 * what fails, is too large or is not an image stays at its own server's URL. One download at a
 * time, so memory stays bounded however many arrive at once.
 */
export class RemoteMediaCache {
  /** Bytes of the cached files, counted from the disk once, then kept up to date. */
  private total: number | null = null;
  private chain: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private db: DatabasePort,
    private storage: MediaStorage,
    private cache: RenderCache,
    private options: RemoteMediaCacheOptions,
  ) {}

  /** Remote statuses' images are copied once the status is stored (or edited). */
  subscribe(events: EventBus): void {
    for (const type of ["status.created", "status.updated"] as const) {
      events.afterCommit(type, (e) => {
        if (e.status.uri !== null && e.status.hasMedia) void this.cacheStatus(e.status.id);
      });
    }
  }

  /** Queues the images of a remote status for caching; resolves when they are done (never rejects). */
  cacheStatus(statusId: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    this.chain = this.chain.then(() =>
      this.run(statusId).catch((e) => log("warn", "remote media caching failed", { status_id: statusId, error: String(e).split("\n")[0] })),
    );
    return this.chain;
  }

  /** Takes no more and waits for the copies under way: the server closes the database after this. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.chain;
  }

  private async run(statusId: number) {
    const { orm, tables } = this.db;
    const mediaAttachments = tables.mediaAttachments;
    const rows = await orm
      .select()
      .from(mediaAttachments)
      .where(and(eq(mediaAttachments.statusId, statusId), isNotNull(mediaAttachments.remoteUrl), isNull(mediaAttachments.file), eq(mediaAttachments.type, "image")))
      .orderBy(asc(mediaAttachments.position));
    await this.cachedBytes();
    let changed = false;
    for (const row of rows) {
      try {
        changed = (await this.cacheOne(row)) || changed;
      } catch (e) {
        log("info", "remote media not cached; shown at its own server", { media_id: row.id, url: row.remoteUrl, error: String(e).split("\n")[0] });
      }
    }
    if (changed) {
      this.cache.invalidateStatus(statusId);
      await this.evict();
    }
  }

  private async cacheOne(row: MediaRow): Promise<boolean> {
    const bytes = await this.options.download(row.remoteUrl!, this.options.maxFileBytes ?? LIMITS.imageSizeLimit);
    const info = await inspect(bytes);
    const original = await renderOriginal(bytes, info);
    const preview = await renderPreview(bytes, info);
    const blurhash = row.blurhash ?? (await blurhashOf(preview.data));
    const file = this.storage.newPath("remote_media", original.ext);
    const small = this.storage.newPath("remote_previews", preview.ext);
    try {
      await this.storage.write(file, original.data);
      await this.storage.write(small, preview.data);
    } catch (e) {
      await this.storage.removeAll([file, small]);
      throw e;
    }
    // Written only over the row as read: a status deleted meanwhile keeps no copy (and a
    // change in between means reading again).
    const { orm, tables } = this.db;
    const mediaAttachments = tables.mediaAttachments;
    for (;;) {
      const [current] = await orm.select().from(mediaAttachments).where(and(eq(mediaAttachments.id, row.id), isNull(mediaAttachments.file))).limit(1);
      if (!current || current.statusId === null) {
        await this.storage.removeAll([file, small]);
        return false;
      }
      const meta: Meta = { ...(JSON.parse(current.meta) as Meta), original: geometry(original.width, original.height), small: geometry(preview.width, preview.height) };
      const set = { file, preview: small, meta: JSON.stringify(meta), blurhash, processing: "complete" };
      if (this.db.changes(await orm.update(mediaAttachments).set(set).where(unchangedSince(mediaAttachments, current))) > 0) break;
    }
    this.total! += original.data.byteLength + preview.data.byteLength;
    return true;
  }

  /** Past the bound, the copies of the oldest statuses are let go: they show at their origin again. */
  private async evict() {
    let total = await this.cachedBytes();
    if (total <= this.options.maxTotalBytes) return;
    const { orm, tables } = this.db;
    const mediaAttachments = tables.mediaAttachments;
    const cached = await orm
      .select()
      .from(mediaAttachments)
      .where(and(isNotNull(mediaAttachments.remoteUrl), isNotNull(mediaAttachments.file)))
      .orderBy(asc(mediaAttachments.statusId), asc(mediaAttachments.position));
    for (const row of cached) {
      if (total <= this.options.maxTotalBytes) break;
      total -= await this.sizeOf(row);
      // Let go only if it is still the copy sized: the condition is checked by the write itself.
      const [gone] = await orm
        .update(mediaAttachments)
        .set({ file: null, preview: null })
        .where(and(eq(mediaAttachments.id, row.id), eq(mediaAttachments.file, row.file!)))
        .returning({ id: mediaAttachments.id });
      if (!gone) continue;
      await this.storage.removeAll([row.file, row.preview]);
      if (row.statusId !== null) this.cache.invalidateStatus(row.statusId);
    }
    this.total = total;
  }

  /** The running total; the first time, read from the files of the copies made before this start. */
  private async cachedBytes(): Promise<number> {
    if (this.total !== null) return this.total;
    const mediaAttachments = this.db.tables.mediaAttachments;
    const rows = await this.db.orm
      .select()
      .from(mediaAttachments)
      .where(and(isNotNull(mediaAttachments.remoteUrl), isNotNull(mediaAttachments.file)));
    let total = 0;
    for (const row of rows) total += await this.sizeOf(row);
    this.total ??= total;
    return this.total;
  }

  /** A copy's bytes, from the store (a HEAD per file in a bucket); a file already gone counts nothing. */
  private async sizeOf(row: MediaRow): Promise<number> {
    let size = 0;
    for (const path of [row.file, row.preview]) {
      if (!path) continue;
      try {
        size += (await this.storage.size(path)) ?? 0;
      } catch {
        // the store cannot say now: counted as nothing, as a file gone
      }
    }
    return size;
  }
}
