import { rmSync } from "node:fs";
import { unprocessable, validationFailed } from "../../errors.ts";
import type { MediaTools } from "../../media-files/ffmpeg.ts";
import { blurhashOf, geometry, ImageError, inspect, renderPreview } from "../../media-files/images.ts";
import { ProbeFailed, probeMedia, type MediaProbe } from "../../media-files/probe.ts";
import sharp from "../../media-files/sharp.ts";
import { animatedWebpToMp4, checkAnimation, checkVideo, extractFrame, transcodeAudio, transcodeVideo } from "../../media-files/video.ts";

/** An upload refused: a bare message (422 as it is), or a validation message ("Validation failed: ..."). */
export function imageError(e: unknown): never {
  if (e instanceof ImageError) throw e.bare ? unprocessable(e.message) : validationFailed(e.message);
  throw e;
}

/** Mastodon's answer to a file that looks like media but cannot be processed. */
export const PROCESSING_FAILED = "Error processing thumbnail for uploaded media";

/** Where an attachment that becomes video, gifv or audio comes from. */
export type AvSource = "av" | "gif" | "apng" | "webp";

export interface AvPrepared {
  type: "video" | "gifv" | "audio";
  /** The preview (a video's first frame, an audio file's cover art) as PNG, or none. */
  preview: { data: Uint8Array; width: number; height: number } | null;
  blurhash: string | null;
  /** Could not be read at all (v2 keeps it as a failed upload). */
  failed?: boolean;
}

export interface AvRendered {
  /** Mastodon's `original` and the documented top-level fields (length, duration, fps, audio_*...). */
  meta: Record<string, unknown>;
}

/** "0:01:28.65", the legacy `length` of the MediaAttachment entity. */
export function lengthOf(seconds: number): string {
  // Rounded to hundredths first, so that 59.999 s reads 0:01:00.00, not 0:00:60.00.
  const centis = Math.round(seconds * 100);
  const h = Math.floor(centis / 360_000);
  const m = Math.floor((centis % 360_000) / 6000);
  const s = (centis % 6000) / 100;
  return `${h}:${String(m).padStart(2, "0")}:${s.toFixed(2).padStart(5, "0")}`;
}

/** The meta of a processed original, read from the file itself: what viewers get is what is described. */
export function avMeta(type: AvPrepared["type"], probe: MediaProbe): Record<string, unknown> {
  const duration = Math.round(probe.duration * 1000) / 1000;
  const meta: Record<string, unknown> = { length: lengthOf(duration), duration };
  const v = probe.video;
  if (type !== "audio" && v) {
    Object.assign(meta, { fps: Math.round(v.fps), ...geometry(v.width, v.height) });
  }
  if (probe.audio && type !== "gifv") {
    meta.audio_encode = probe.audio.codec;
    meta.audio_bitrate = `${probe.audio.sampleRate} Hz`;
    meta.audio_channels = probe.audio.channelLayout ?? (probe.audio.channels === 1 ? "mono" : probe.audio.channels === 2 ? "stereo" : String(probe.audio.channels));
  }
  meta.original =
    type === "audio" || !v
      ? { duration, bitrate: probe.bitrate }
      : { width: v.width, height: v.height, frame_rate: v.frameRate, duration, bitrate: probe.bitrate };
  return meta;
}

async function probeOrFail(tools: MediaTools, path: string): Promise<MediaProbe> {
  try {
    return await probeMedia(tools, path);
  } catch (e) {
    if (e instanceof ProbeFailed) throw new ImageError(PROCESSING_FAILED, true);
    throw e;
  }
}

async function stillPreview(png: Uint8Array | null): Promise<AvPrepared["preview"]> {
  if (!png) return null;
  const info = await inspect(png);
  return { data: png, width: info.width, height: info.height };
}

/**
 * Before answering an upload: what it is, Mastodon's checks (a video stream, 4K at most, 120
 * fps at most), and its preview. A video with no sound is a gifv, as Mastodon types it.
 */
export async function prepareAv(tools: MediaTools, source: AvSource, path: string, scratch: string): Promise<AvPrepared> {
  if (source === "webp") {
    const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
    const frame = await firstFrame(bytes);
    checkAnimation(frame);
    const preview = await renderPreview(bytes, { format: "png", width: frame.width, height: frame.height, animated: false });
    return { type: "gifv", preview, blurhash: await blurhashOf(preview.data) };
  }
  const probe = await probeOrFail(tools, path);
  let type: AvPrepared["type"];
  if (probe.video) {
    checkVideo(probe);
    type = source === "av" && probe.audio ? "video" : "gifv";
  } else if (probe.audio && source === "av") {
    type = "audio";
  } else {
    throw new ImageError(PROCESSING_FAILED, true);
  }
  let frame: Uint8Array | null;
  try {
    const still = type === "audio" ? probe.coverArt : (probe.video?.index ?? null);
    frame = still === null ? null : await extractFrame(tools, path, scratch, still, { coverArt: type === "audio" });
  } catch {
    throw new ImageError(PROCESSING_FAILED, true);
  } finally {
    rmSync(scratch, { force: true });
  }
  let preview = await stillPreview(frame);
  // Cover art is fitted like an image's preview (Mastodon's thumbnail style); a frame is kept in 640x640.
  if (preview && type === "audio") {
    const fitted = await renderPreview(preview.data, { format: "png", width: preview.width, height: preview.height, animated: false });
    preview = { data: fitted.data, width: fitted.width, height: fitted.height };
  }
  return { type, preview, blurhash: preview ? await blurhashOf(preview.data) : null };
}

async function firstFrame(bytes: Uint8Array): Promise<{ width: number; height: number; pages: number }> {
  const meta = await sharp(bytes).metadata();
  return { width: meta.width ?? 1, height: meta.pageHeight ?? meta.height ?? 1, pages: meta.pages ?? 1 };
}

/**
 * The original, written to `output`: a video or gifv as MP4, audio as MP3, then probed, so
 * that a file ffmpeg wrote but no player could read fails here rather than in a client.
 */
export async function renderAv(tools: MediaTools, source: AvSource, type: AvPrepared["type"], path: string, output: string): Promise<AvRendered> {
  try {
    if (source === "webp") {
      // An animation (16 MB at most): sharp reads it from memory.
      const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
      const meta = await sharp(bytes, { animated: true }).metadata();
      const width = meta.width ?? 0;
      const height = meta.pageHeight ?? meta.height ?? 0;
      await animatedWebpToMp4(tools, bytes, output, { width, height, pages: meta.pages ?? 1, delay: meta.delay ?? [] });
    } else {
      const probe = await probeOrFail(tools, path);
      if (type === "audio") await transcodeAudio(tools, path, output, probe);
      else await transcodeVideo(tools, path, output, probe, { silent: type === "gifv" });
    }
    const result = await probeMedia(tools, output);
    if (type === "audio" ? !result.audio : !result.video) throw new Error("the output has no stream to play");
    return { meta: avMeta(type, result) };
  } catch (e) {
    rmSync(output, { force: true });
    if (e instanceof ImageError) throw e;
    throw new ImageError(PROCESSING_FAILED, true);
  }
}
