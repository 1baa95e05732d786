import type { MediaRow } from "../../db/schema.ts";
import { unprocessable } from "../../errors.ts";
import type { MediaTools } from "../../media-files/ffmpeg.ts";
import { geometry, ImageError, inspect, type ImageInfo } from "../../media-files/images.ts";
import { avTypeGuess, isAnimatedPng, sniff } from "../../media-files/sniff.ts";
import type { MediaStorage } from "../../media-files/storage.ts";
import { imageError, PROCESSING_FAILED, prepareAv, renderAv, type AvPrepared, type AvSource } from "./av.ts";
import type { MediaInput } from "./media-input.ts";
import type { Meta } from "./media.ts";
import type { MediaQueue, Slots } from "./queue.ts";

/** Said when a video or audio file arrives and there is no ffmpeg to read it. */
export const NO_FFMPEG = "Video and audio uploads are not supported on this server (ffmpeg is not available)";

type Image = { bytes: Uint8Array; info: ImageInfo };

/** What the uploads of video, gifv and audio share with those of images (MediaService's parts). */
export interface MediaParts {
  storage: MediaStorage;
  queue: MediaQueue;
  slots: Slots;
  previews: Slots;
  tools: () => Promise<MediaTools | null>;
  readImage(file: File, label: "File" | "Thumbnail"): Promise<Image>;
  store(kind: string, data: Uint8Array, ext: string): Promise<string>;
  previewOf(image: Image): Promise<{ preview: { data: Uint8Array; ext: string; width: number; height: number }; blurhash: string }>;
  insertUpload(fields: Pick<MediaRow, "accountId" | "type" | "processing" | "uploadFile" | "file" | "preview" | "thumbnail" | "meta" | "description" | "blurhash">): Promise<MediaRow>;
}

/** An animation that becomes a gifv, or null for a still image. */
export function animatedSource(image: { bytes: Uint8Array; info: ImageInfo }): AvSource | null {
  if (image.info.animated && (image.info.format === "gif" || image.info.format === "webp")) return image.info.format;
  if (image.info.format === "png" && isAnimatedPng(image.bytes)) return "apng";
  return null;
}

/**
 * Uploads that ffmpeg reads: video, audio, and the animations (GIF, APNG, WebP) that become
 * gifv. The media queue, its crash recovery and the deletion rules are MediaService's, as for images.
 */
export class AvUploads {
  constructor(private m: MediaParts) {}

  /**
   * Video, audio, and animations that become gifv: kept as a file for ffmpeg, read and checked
   * and given a preview before answering; the original then made at once (v1) or on the queue (v2).
   */
  async upload(accountId: number, input: MediaInput, source: AvSource, bytes: Uint8Array | null, focus: Meta["focus"], options: { background: boolean }): Promise<MediaRow> {
    const tools = await this.m.tools();
    if (!tools) throw unprocessable(NO_FFMPEG);
    // Video goes to disk as it came (up to 99 MB), never copied into memory again.
    const file0 = input.file as File;
    const thumb = input.thumbnail ? await this.m.readImage(input.thumbnail, "Thumbnail") : undefined;
    const written: string[] = [];
    try {
      const { uploadFile, prepared } = await this.take(tools, source, file0, bytes, written, { keepUnreadable: options.background });
      let small: Meta["small"];
      let blurhash = prepared.blurhash;
      let previewPath: string | null = null;
      if (thumb) {
        const custom = await this.m.previewOf(thumb);
        previewPath = await this.m.store("media_previews", custom.preview.data, custom.preview.ext);
        small = geometry(custom.preview.width, custom.preview.height);
        blurhash = custom.blurhash;
      } else if (prepared.preview) {
        previewPath = await this.m.store("media_previews", prepared.preview.data, "png");
        small = geometry(prepared.preview.width, prepared.preview.height);
      }
      if (previewPath) written.push(previewPath);
      let file: string | null = null;
      let rendered: Record<string, unknown> = {};
      if (!options.background && !prepared.failed) {
        const made = await this.render(tools, source, prepared.type, uploadFile).catch(imageError);
        file = made.file;
        written.push(file);
        rendered = made.meta;
      }
      const row = await this.m.insertUpload({
        accountId,
        type: prepared.type,
        processing: prepared.failed ? "failed" : options.background ? "queued" : "complete",
        uploadFile: options.background && !prepared.failed ? uploadFile : null,
        file,
        preview: thumb ? null : previewPath,
        thumbnail: thumb ? previewPath : null,
        meta: JSON.stringify({ focus, ...rendered, small }),
        description: input.description ?? null,
        blurhash,
      });
      if (row.processing === "queued") this.m.queue.enqueue(row.id, "av");
      else await this.m.storage.remove(uploadFile);
      return row;
    } catch (e) {
      await this.m.storage.removeAll(written);
      throw e;
    }
  }

  /**
   * PUT with a new file that ffmpeg reads: made at once, as a v1 upload makes it. The caller
   * writes the row; `written` is what it must remove if it does not. The preview (a frame, or
   * an audio file's cover art, or none) is made only when asked for: a custom thumbnail stays.
   */
  async replacement(source: AvSource, file: File, bytes: Uint8Array | null, options: { preview: boolean }) {
    const tools = await this.m.tools();
    if (!tools) throw unprocessable(NO_FFMPEG);
    const written: string[] = [];
    try {
      const { uploadFile, prepared } = await this.take(tools, source, file, bytes, written, { keepUnreadable: false });
      let preview: { path: string; small: Meta["small"]; blurhash: string | null } | null = null;
      if (options.preview && prepared.preview) {
        const path = await this.m.store("media_previews", prepared.preview.data, "png");
        written.push(path);
        preview = { path, small: geometry(prepared.preview.width, prepared.preview.height), blurhash: prepared.blurhash };
      }
      const made = await this.render(tools, source, prepared.type, uploadFile).catch(imageError);
      written.push(made.file);
      await this.m.storage.remove(uploadFile);
      return { type: prepared.type, file: made.file, meta: made.meta, preview, written };
    } catch (e) {
      await this.m.storage.removeAll(written);
      throw e;
    }
  }

  /**
   * The upload kept as a file for ffmpeg (added to `written`), read and checked, its preview
   * made. A file that cannot be read is refused, or, with `keepUnreadable` (v2 answers before
   * processing), comes back as failed.
   */
  private async take(tools: MediaTools, source: AvSource, file: File, bytes: Uint8Array | null, written: string[], options: { keepUnreadable: boolean }) {
    const uploadFile = this.m.storage.newPath("media_uploads", "bin");
    await this.m.storage.write(uploadFile, bytes ?? file);
    written.push(uploadFile);
    const uploadPath = this.m.storage.resolve(uploadFile) as string;
    const scratch = this.m.storage.prepare(this.m.storage.newPath("media_uploads", "png"));
    let prepared: AvPrepared;
    try {
      prepared = await this.m.previews.run(() => prepareAv(tools, source, uploadPath, scratch));
    } catch (e) {
      if (!(options.keepUnreadable && e instanceof ImageError && e.message === PROCESSING_FAILED)) imageError(e);
      const type = source === "av" ? avTypeGuess(new Uint8Array(await file.slice(0, 64).arrayBuffer())) : "gifv";
      prepared = { type, preview: null, blurhash: null, failed: true };
    }
    return { uploadFile, prepared };
  }

  /** What a kept upload becomes, told again from its bytes (the queue keeps only the file). */
  private async sourceOf(path: string): Promise<AvSource> {
    if (sniff(new Uint8Array(await Bun.file(path).slice(0, 64).arrayBuffer())) === "av") return "av";
    const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
    const source = animatedSource({ bytes, info: await inspect(bytes) });
    if (!source) throw new Error("the upload is no longer an animation");
    return source;
  }

  /** The queue's step for video, gifv and audio: the original, and the meta read from it. */
  async renderQueued(row: MediaRow): Promise<{ file: string; meta: Record<string, unknown> }> {
    const tools = await this.m.tools();
    if (!tools) throw new Error(NO_FFMPEG);
    const source = await this.sourceOf(this.m.storage.resolve(row.uploadFile as string) as string);
    return this.render(tools, source, row.type as AvPrepared["type"], row.uploadFile as string);
  }

  /**
   * ffmpeg writes beside the upload, under a name that follows from it, and the result is then
   * handed to the store (moved into place, or uploaded and removed): a job run again after a
   * crash overwrites what the killed one left.
   */
  private async render(tools: MediaTools, source: AvSource, type: AvPrepared["type"], uploadFile: string): Promise<{ file: string; meta: Record<string, unknown> }> {
    const ext = type === "audio" ? "mp3" : "mp4";
    const scratch = uploadFile.replace(/\.bin$/, `.${ext}`);
    const output = this.m.storage.prepare(scratch);
    const rendered = await this.m.slots.run(() => renderAv(tools, source, type, this.m.storage.resolve(uploadFile) as string, output));
    const file = this.m.storage.newPath("media_attachments", ext);
    await this.m.storage.keep(scratch, file);
    return { file, meta: rendered.meta };
  }
}
