import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { readFile } from "node:fs/promises";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { MediaRow } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import type { MediaClaims } from "../../infra/pg-media-claims.ts";
import { notFound, unprocessable, validationFailed } from "../../errors.ts";
import { log } from "../../log.ts";
import type { MediaTools } from "../../media-files/ffmpeg.ts";
import { blurhashOf, expectedOriginal, geometry, ImageError, inspect, renderOriginal, renderPreview, type ImageInfo } from "../../media-files/images.ts";
import { sniff } from "../../media-files/sniff.ts";
import type { MediaStorage } from "../../media-files/storage.ts";
import type { RenderCache } from "../statuses/render-cache.ts";
import { imageError, PROCESSING_FAILED } from "./av.ts";
import { validateMediaInput, type MediaInput } from "./media-input.ts";
import { animatedSource, AvUploads } from "./av-uploads.ts";
import { MediaQueue, Slots } from "./queue.ts";
import { unchangedSince } from "./row-guard.ts";
import { removeLeftoverUploads } from "./scratch.ts";

/** Unattached media are kept this long (from upload, or from the deletion of their status). */
export const UNATTACHED_TTL_MS = 24 * 60 * 60 * 1000;

export interface Meta {
  focus?: { x: number; y: number };
  original?: ReturnType<typeof geometry> | Record<string, unknown>;
  small?: ReturnType<typeof geometry>;
  /** Video and audio: length, duration, fps, audio_encode... (the documented top-level fields). */
  [key: string]: unknown;
}

export interface MediaOptions {
  /** Background jobs at a time. */
  workers: number;
  /** ffmpeg processes at a time. */
  transcodes: number;
  /** ffmpeg and ffprobe, ready to run (unpacked on first use), or null where there are none. */
  tools: () => Promise<MediaTools | null>;
  /** Whether there are any, known at start-up without unpacking anything. */
  available: boolean;
  /** Several processes on PostgreSQL: the jobs are claimed from the database (pg-media-claims.ts). */
  claims?: MediaClaims | null;
}

/**
 * Uploads, their processing and their lifecycle: made synchronously for v1, in two steps for
 * v2 (the preview and blurhash before answering, the original in the queue), attached to
 * statuses in order, kept a day when unattached, removed with their files.
 */
export class MediaService {
  readonly queue: MediaQueue;
  readonly slots: Slots;
  /** Probes and preview frames, before an upload is answered: never behind a transcode. */
  readonly previews = new Slots(2);
  readonly tools: () => Promise<MediaTools | null>;
  private av: AvUploads;
  // Built once (drizzle spends more building a query than SQLite running it); a prepared query
  // runs in whichever transaction executes it (src/db/port.ts).
  private q;

  constructor(
    readonly db: DatabasePort,
    readonly ids: IdGenerator,
    readonly clock: Clock,
    readonly storage: MediaStorage,
    private cache: RenderCache,
    options: MediaOptions,
  ) {
    this.queue = new MediaQueue((id) => this.processQueued(id), { image: options.workers, av: options.transcodes }, options.claims ?? null);
    this.slots = new Slots(options.transcodes);
    this.tools = options.tools;
    this.av = new AvUploads(this);
    this.avSupported = options.available;
    const m = db.tables.mediaAttachments;
    const byId = eq(m.id, sql.placeholder("id"));
    const ownRow = and(byId, eq(m.accountId, sql.placeholder("accountId")));
    this.q = {
      byId: db.orm.select().from(m).where(byId).prepare(),
      own: db.orm.select().from(m).where(and(ownRow, isNull(m.statusId))).prepare(),
      ownAttachedToo: db.orm.select().from(m).where(ownRow).prepare(),
      remove: db.orm.delete(m).where(byId).prepare(),
    };
    if (!this.avSupported) log("warn", "no ffmpeg found: video and audio uploads are refused (set FFMPEG_PATH and FFPROBE_PATH)");
  }

  /** Whether video and audio are taken: ffmpeg was found (the instance endpoints say so). */
  readonly avSupported: boolean;

  /**
   * Re-queues what a previous run left unprocessed, and removes what it left half-done in
   * media_uploads: uploads of requests it died in (up to 99 MB each), and the output of
   * transcodes it was killed in (their jobs start again from the upload). Shared (several
   * processes): nothing is re-queued here, the claims take what waits or what a dead process's
   * lease let go, and only uploads older than any request are removed.
   */
  async restore() {
    const m = this.db.tables.mediaAttachments;
    const unfinished = await this.db.orm
      .select({ id: m.id, type: m.type, uploadFile: m.uploadFile })
      .from(m)
      .where(or(eq(m.processing, "queued"), eq(m.processing, "in_progress")));
    const shared = this.queue.claimed;
    removeLeftoverUploads(this.storage, new Set(unfinished.map((row) => row.uploadFile)), shared);
    if (shared) return this.queue.start();
    for (const row of unfinished) this.queue.enqueue(row.id, row.type === "image" ? "image" : "av");
  }

  async readImage(file: File, label: "File" | "Thumbnail"): Promise<{ bytes: Uint8Array; info: ImageInfo }> {
    const bytes = new Uint8Array(await file.arrayBuffer());
    try {
      return { bytes, info: await inspect(bytes) };
    } catch (e) {
      if (e instanceof ImageError && !e.bare && label === "Thumbnail") throw validationFailed("Thumbnail content type is invalid, Thumbnail is invalid");
      imageError(e);
    }
  }

  /** Writes a rendition under a fresh name and returns its path. */
  async store(kind: string, data: Uint8Array, ext: string): Promise<string> {
    const path = this.storage.newPath(kind, ext, new Date(this.clock.now()));
    await this.storage.write(path, data);
    return path;
  }

  /** The preview (from a custom thumbnail when given) and its blurhash. */
  async previewOf(image: { bytes: Uint8Array; info: ImageInfo }, thumbnail?: { bytes: Uint8Array; info: ImageInfo }) {
    const source = thumbnail ?? image;
    const preview = await renderPreview(source.bytes, source.info).catch(imageError);
    return { preview, blurhash: await blurhashOf(preview.data) };
  }

  /** POST /api/v1/media (processed before answering) and /api/v2/media (`background`). */
  async upload(accountId: number, input: MediaInput, options: { background: boolean }): Promise<MediaRow> {
    const head = input.file ? sniff(new Uint8Array(await input.file.slice(0, 64).arrayBuffer())) : null;
    const { focus } = validateMediaInput(input, { fileRequired: true, larger: head === "av" });
    if (head === "av") return this.av.upload(accountId, input, "av", null, focus, options);
    const image = await this.readImage(input.file as File, "File");
    const animated = animatedSource(image);
    // Animations become gifv; where there is no ffmpeg, they stay animated images.
    if (animated && (await this.tools())) return this.av.upload(accountId, input, animated, image.bytes, focus, options);
    const thumb = input.thumbnail ? await this.readImage(input.thumbnail, "Thumbnail") : undefined;
    const written: string[] = [];
    try {
      const { preview, blurhash } = await this.previewOf(image, thumb);
      const previewPath = await this.store("media_previews", preview.data, preview.ext);
      written.push(previewPath);
      const meta: Meta = { original: expectedOriginal(image.info), small: geometry(preview.width, preview.height) };
      let file: string | null = null;
      let uploadFile: string | null = null;
      if (options.background) {
        uploadFile = await this.store("media_uploads", image.bytes, "bin");
        written.push(uploadFile);
      } else {
        const original = await renderOriginal(image.bytes, image.info).catch(imageError);
        file = await this.store("media_attachments", original.data, original.ext);
        written.push(file);
        meta.original = geometry(original.width, original.height);
      }
      if (focus) meta.focus = focus;
      const row = await this.insertUpload({
        accountId,
        type: "image",
        processing: options.background ? "queued" : "complete",
        uploadFile,
        file,
        preview: thumb ? null : previewPath,
        thumbnail: thumb ? previewPath : null,
        meta: JSON.stringify(meta),
        description: input.description ?? null,
        blurhash,
      });
      if (options.background) this.queue.enqueue(row.id);
      return row;
    } catch (e) {
      await this.storage.removeAll(written);
      throw e;
    }
  }

  /** A new upload's row, with what every upload starts as (unattached, its short link), stored. */
  async insertUpload(fields: Pick<MediaRow, "accountId" | "type" | "processing" | "uploadFile" | "file" | "preview" | "thumbnail" | "meta" | "description" | "blurhash">): Promise<MediaRow> {
    const row: MediaRow = {
      id: this.ids.next(),
      statusId: null,
      scheduledStatusId: null,
      position: 0,
      createdAt: this.clock.now(),
      detachedAt: null,
      shortcode: Buffer.from(crypto.getRandomValues(new Uint8Array(14))).toString("base64url"),
      remoteUrl: null,
      claimedBy: null,
      claimedUntil: null,
      ...fields,
    };
    await this.db.orm.insert(this.db.tables.mediaAttachments).values(row);
    return row;
  }

  /**
   * The background step of a v2 upload: the original, from the kept upload. A PUT with a new
   * file may land while this runs; the upload path then changes, and this job's result (or
   * failure) is stale: it is written only if the row still holds the upload it started from.
   */
  private async processQueued(id: number) {
    const { orm, tables } = this.db;
    const mediaAttachments = tables.mediaAttachments;
    const [row] = await this.q.byId.execute({ id });
    if (!row || (row.processing !== "queued" && row.processing !== "in_progress")) return;
    await orm.update(mediaAttachments).set({ processing: "in_progress" }).where(eq(mediaAttachments.id, id));
    await this.queue.pass("claimed");
    const uploadPath = row.uploadFile ? this.storage.resolve(row.uploadFile) : null;
    const stillCurrent = and(eq(mediaAttachments.id, id), row.uploadFile === null ? isNull(mediaAttachments.uploadFile) : eq(mediaAttachments.uploadFile, row.uploadFile));
    try {
      if (!uploadPath) throw new Error("the upload is missing");
      let file: string;
      let update: (meta: Meta) => Meta;
      if (row.type === "image") {
        const bytes = new Uint8Array(await readFile(uploadPath));
        const original = await renderOriginal(bytes, await inspect(bytes));
        file = await this.store("media_attachments", original.data, original.ext);
        update = (meta) => ({ ...meta, original: geometry(original.width, original.height) });
      } else {
        const rendered = await this.av.renderQueued(row);
        file = rendered.file;
        update = (meta) => ({ focus: meta.focus, ...rendered.meta, small: meta.small });
      }
      await this.queue.pass("rendered");
      // Written only over the row as read (a PUT may change its meta meanwhile: then read again).
      for (;;) {
        const [current] = await orm.select().from(mediaAttachments).where(stillCurrent).limit(1);
        if (!current) {
          await this.storage.remove(file);
          return;
        }
        const meta = update(JSON.parse(current.meta) as Meta);
        const set = { processing: "complete", file, uploadFile: null, meta: JSON.stringify(meta) } as const;
        if (this.db.changes(await orm.update(mediaAttachments).set(set).where(unchangedSince(mediaAttachments, current))) > 0) break;
      }
    } catch (e) {
      log("warn", "media processing failed", { media_id: id, error: String(e).split("\n")[0] });
      await orm.update(mediaAttachments).set({ processing: "failed", uploadFile: null }).where(stillCurrent);
    } finally {
      await this.storage.remove(row.uploadFile);
    }
    const [after] = await this.q.byId.execute({ id });
    if (after?.statusId) this.cache.invalidateStatus(after.statusId);
  }

  /** The caller's own attachment (by default only one not on a status yet, as GET and PUT want); else 404. */
  async own(accountId: number, id: number | null, options: { attachedToo?: boolean } = {}): Promise<MediaRow> {
    const [row] = id === null ? [] : await (options.attachedToo ? this.q.ownAttachedToo : this.q.own).execute({ id, accountId });
    if (!row) throw notFound();
    return row;
  }

  /** GET /api/v1/media/:id: the attachment, and whether it is ready (200) or not yet (206). */
  async show(accountId: number, id: number | null): Promise<{ row: MediaRow; ready: boolean }> {
    const row = await this.own(accountId, id);
    if (row.processing === "failed") throw unprocessable(PROCESSING_FAILED);
    return { row, ready: row.processing === "complete" };
  }

  /**
   * PUT /api/v1/media/:id: description, focus, thumbnail, or a new file. The renders take
   * time, during which the background job may finish: what they replace is read afterwards,
   * from the row as it is then, so no file is overwritten unseen or left behind.
   */
  async update(accountId: number, id: number | null, input: MediaInput): Promise<{ row: MediaRow; ready: boolean }> {
    const row = await this.own(accountId, id);
    if (row.processing === "failed" && !input.file) throw unprocessable(PROCESSING_FAILED);
    const head = input.file ? sniff(new Uint8Array(await input.file.slice(0, 64).arrayBuffer())) : null;
    const { focus } = validateMediaInput(input, { fileRequired: false, larger: head === "av" });
    const written: string[] = [];
    // The new file, what it makes the attachment, and its meta besides original and small
    // (video and audio's top-level fields; none for an image).
    let newOriginal: { path: string; type: MediaRow["type"]; original: Meta["original"]; fields: Record<string, unknown> } | undefined;
    // A new preview; `null` path: the new file has none (audio without cover art).
    let newPreview: { path: string | null; geometry: Meta["small"]; blurhash: string | null; custom: boolean } | undefined;
    try {
      const thumb = input.thumbnail ? await this.readImage(input.thumbnail, "Thumbnail") : undefined;
      // A custom thumbnail, once given, stays the preview even when the file changes.
      const ownPreview = !thumb && !row.thumbnail;
      // A new file is taken as POST /api/v1/media takes it: video, audio and animations through ffmpeg.
      const image = input.file && head !== "av" ? await this.readImage(input.file, "File") : undefined;
      const animated = image ? animatedSource(image) : null;
      if (input.file && (head === "av" || (animated && (await this.tools())))) {
        const made = await this.av.replacement(animated ?? "av", input.file, image?.bytes ?? null, { preview: ownPreview });
        written.push(...made.written);
        const { original, ...fields } = made.meta;
        newOriginal = { path: made.file, type: made.type, original: original as Meta["original"], fields };
        if (ownPreview) newPreview = { path: made.preview?.path ?? null, geometry: made.preview?.small, blurhash: made.preview?.blurhash ?? null, custom: false };
      } else if (image) {
        const original = await renderOriginal(image.bytes, image.info).catch(imageError);
        const path = await this.store("media_attachments", original.data, original.ext);
        written.push(path);
        newOriginal = { path, type: "image", original: geometry(original.width, original.height), fields: {} };
      }
      const source = thumb ?? (image && ownPreview && newOriginal?.type === "image" ? image : undefined);
      if (source) {
        const { preview, blurhash } = await this.previewOf(source);
        const path = await this.store("media_previews", preview.data, preview.ext);
        written.push(path);
        newPreview = { path, geometry: geometry(preview.width, preview.height), blurhash, custom: thumb !== undefined };
      }
    } catch (e) {
      await this.storage.removeAll(written);
      throw e;
    }
    // Written only over the row as read, so that the files replaced are the ones it held (the
    // background job may finish meanwhile: then read again).
    const mediaAttachments = this.db.tables.mediaAttachments;
    let saved: { current: MediaRow; changes: Partial<MediaRow>; replaced: (string | null)[] };
    for (;;) {
      const [current] = await this.q.byId.execute({ id: row.id });
      if (!current) {
        await this.storage.removeAll(written);
        throw notFound();
      }
      saved = { current, ...this.changesOf(current, input, focus, newOriginal, newPreview) };
      if (this.db.changes(await this.db.orm.update(mediaAttachments).set(saved.changes).where(unchangedSince(mediaAttachments, current))) > 0) break;
    }
    await this.storage.removeAll(saved.replaced);
    const updated = { ...saved.current, ...saved.changes };
    return { row: updated, ready: updated.processing === "complete" };
  }

  /** What a PUT makes of the row as it is now, and the files it replaces. */
  private changesOf(
    current: MediaRow,
    input: MediaInput,
    focus: Meta["focus"] | undefined,
    newOriginal: { path: string; type: MediaRow["type"]; original: Meta["original"]; fields: Record<string, unknown> } | undefined,
    newPreview: { path: string | null; geometry: Meta["small"]; blurhash: string | null; custom: boolean } | undefined,
  ): { changes: Partial<MediaRow>; replaced: (string | null)[] } {
    const changes: Partial<MediaRow> = {};
    const meta = JSON.parse(current.meta) as Meta;
    const replaced: (string | null)[] = [];
    if (newOriginal) {
      changes.file = newOriginal.path;
      // The attachment is what its new file is: a still image replacing a video makes it an image.
      changes.type = newOriginal.type;
      meta.original = newOriginal.original;
      changes.processing = "complete";
      changes.uploadFile = null;
      replaced.push(current.file, current.uploadFile);
    }
    if (newPreview) {
      meta.small = newPreview.geometry;
      changes.blurhash = newPreview.blurhash;
      replaced.push(current.preview);
      if (newPreview.custom) {
        replaced.push(current.thumbnail);
        changes.thumbnail = newPreview.path;
        changes.preview = null;
      } else {
        changes.preview = newPreview.path;
      }
    }
    if (input.description !== undefined) changes.description = input.description;
    if (focus) meta.focus = focus;
    // Mastodon rewrites meta in the order focus, original, small on every update.
    const { focus: f, original: o, small: sm, ...rest } = meta;
    changes.meta = JSON.stringify({ focus: f, ...(newOriginal ? newOriginal.fields : rest), original: o, small: sm });
    return { changes, replaced };
  }

  /** DELETE /api/v1/media/:id (Mastodon 4.4): only media not on a status. */
  async remove(accountId: number, id: number | null): Promise<void> {
    const row = await this.own(accountId, id, { attachedToo: true });
    if (row.statusId !== null) throw unprocessable("Media attachment is currently used by a status");
    await this.q.remove.execute({ id: row.id });
    await this.removeFiles(row);
  }

  private removeFiles(row: MediaRow): Promise<void> {
    return this.storage.removeAll([row.file, row.preview, row.thumbnail, row.uploadFile]);
  }

  /** Checks an edit's `media_attributes` (description, focus) before anything is written. */
  checkAttributes(attributes: { description?: string; focus?: string }[]) {
    for (const a of attributes) validateMediaInput({ description: a.description, focus: a.focus }, { fileRequired: false });
  }

  /** Removes unattached media past their day of grace, with their files. Returns how many went. */
  async cleanup(): Promise<number> {
    const cutoff = this.clock.now() - UNATTACHED_TTL_MS;
    const m = this.db.tables.mediaAttachments;
    const unattached = and(isNull(m.statusId), isNull(m.scheduledStatusId), lt(sql`coalesce(${m.detachedAt}, ${m.createdAt})`, cutoff));
    const stale = (await this.db.orm.select().from(m).where(unattached)).filter((row) => row.processing !== "queued" && row.processing !== "in_progress");
    let removed = 0;
    for (const row of stale) {
      // Deleted only if still unattached and unchanged: a post may have taken it since the read.
      if (this.db.changes(await this.db.orm.delete(m).where(and(unattached, unchangedSince(m, row)))) === 0) continue;
      removed++;
      // The row is gone; the files follow (a store's failure is logged by remove).
      void this.removeFiles(row);
    }
    return removed;
  }
}
