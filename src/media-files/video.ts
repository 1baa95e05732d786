import { FRAME_LIMITS, INPUT_CODECS, INPUT_FORMATS, runTool, type MediaTools } from "./ffmpeg.ts";
import { ImageError } from "./images.ts";
import type { MediaProbe } from "./probe.ts";
import sharp from "./sharp.ts";

/** Mastodon's MediaAttachment limits for video. */
export const VIDEO_SIZE_LIMIT = 99 * 1024 * 1024;
export const VIDEO_MATRIX_LIMIT = 8_294_400;
export const VIDEO_FRAME_RATE_LIMIT = 120;
/** About five minutes at 120 fps: longer videos are cut there (frames:v). */
export const MAX_VIDEO_FRAMES = 36_000;
/** Mastodon's Transcoder: H.264 High needs about this many bits per pixel per frame at 30 fps. */
const BITS_PER_PIXEL = 0.11;
const AUDIO_BITRATE = 192_000;

/** One thread per job (decoding here, encoding in OUTPUT): with one job at a time, a core stays free for requests. */
const COMMON = ["-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "1", "-filter_threads", "1"];
const INPUT = ["-protocol_whitelist", "file", "-format_whitelist", INPUT_FORMATS, "-codec_whitelist", INPUT_CODECS];
/** Options of the output file: before it, after every -i. */
const OUTPUT = ["-threads", "1"];

/** The streams that were checked, and only those (ffmpeg would otherwise pick the largest video). */
function streams(probe: MediaProbe, options: { video: boolean; audio: boolean }): string[] {
  const maps: string[] = [];
  if (options.video && probe.video) maps.push("-map", `0:${probe.video.index}`);
  if (options.audio && probe.audio) maps.push("-map", `0:${probe.audio.index}`);
  return maps;
}

/** Mastodon's check_video_dimensions, with its messages (shown bare, as its StreamValidationError). */
export function checkVideo(probe: MediaProbe) {
  const v = probe.video;
  if (!v || v.fps === 0) throw new ImageError("Video has no video stream", true);
  if (v.width * v.height > VIDEO_MATRIX_LIMIT) throw new ImageError(`${v.width}x${v.height} videos are not supported`, true);
  if (Math.floor(v.fps) > VIDEO_FRAME_RATE_LIMIT) throw new ImageError(`${Math.floor(v.fps)}fps videos are not supported`, true);
}

/**
 * Already what every browser plays, so kept as it is (only its metadata dropped), as
 * Mastodon's passthrough: an MP4 of H.264 in 4:2:0 with AAC or no sound. Rookery also wants it
 * upright (old muxers lose a rotation when metadata is dropped) and within the bitrate it would
 * be transcoded to, so a 99 MB upload of a few seconds is not passed on to every viewer.
 */
function passesThrough(probe: MediaProbe): boolean {
  const v = probe.video;
  if (!v || v.rotated) return false;
  if (!probe.format.split(",").includes("mp4")) return false;
  if (v.codec !== "h264" || !["yuv420p", "yuvj420p"].includes(v.pixFmt)) return false;
  if (probe.audio && probe.audio.codec !== "aac") return false;
  return probe.bitrate <= bitrateFor(v.width, v.height, probe.duration) + AUDIO_BITRATE;
}

/** Mastodon's Transcoder bitrate: enough for the picture, and never over what fits in 99 MB. */
function bitrateFor(width: number, height: number, seconds: number): number {
  const desired = Math.floor(width * height * 30 * BITS_PER_PIXEL);
  const duration = Math.max(seconds, 1);
  const maximum = Math.floor((VIDEO_SIZE_LIMIT * 8) / duration) - AUDIO_BITRATE;
  return Math.max(100_000, Math.min(desired, maximum));
}

/**
 * The original of a video or gifv: an MP4 of H.264 (yuv420p, even sides, faststart) and AAC
 * at 192k, or none for gifv, with no metadata (map_metadata -1 drops the GPS position MOV and
 * MP4 files carry), cut at MAX_VIDEO_FRAMES; or the input itself, copied, when it passes.
 */
export async function transcodeVideo(tools: MediaTools, input: string, output: string, probe: MediaProbe, options: { silent: boolean }) {
  const audio = options.silent || !probe.audio ? ["-an"] : [];
  const maps = streams(probe, { video: true, audio: audio.length === 0 });
  if (passesThrough(probe)) {
    await runTool(tools.ffmpeg, [...COMMON, ...INPUT, "-i", input, ...maps, "-map_metadata", "-1", "-map_chapters", "-1", "-c:v", "copy", ...(audio.length ? audio : ["-c:a", "copy"]), "-sn", "-dn", ...mp4(output)]);
    return;
  }
  const base = probe.video?.baseFps ?? 0;
  // A variable-rate file with a base rate above the limit (phones' 240 fps slow motion
  // containers, whose average passed the check): frames kept as they come, none made up.
  // Not with -r, which ffmpeg 6 and later refuse beside it (Mastodon dropped it too).
  const vfr = base > VIDEO_FRAME_RATE_LIMIT ? ["-vsync", "vfr"] : [];
  const v = probe.video as NonNullable<MediaProbe["video"]>;
  await runTool(tools.ffmpeg, [
    ...COMMON,
    ...INPUT,
    "-i",
    input,
    ...maps,
    ...OUTPUT,
    "-map_metadata",
    "-1",
    "-map_chapters",
    "-1",
    "-sn",
    "-dn",
    ...h264(bitrateFor(v.width, v.height, probe.duration)),
    ...vfr,
    ...(audio.length ? audio : ["-c:a", "aac", "-b:a", "192k"]),
    ...mp4(output),
  ]);
}

/** Mastodon's VIDEO_FORMAT encoder settings: H.264 veryfast, 4:2:0, even sides, capped length. */
function h264(bitrate: number): string[] {
  const rates = ["-b:v", String(bitrate), "-maxrate", String(bitrate + AUDIO_BITRATE), "-bufsize", String(bitrate * 5)];
  return ["-vf", "crop=floor(iw/2)*2:floor(ih/2)*2", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", ...rates, "-frames:v", String(MAX_VIDEO_FRAMES)];
}

/** An MP4 that starts playing before it has all arrived. */
function mp4(output: string): string[] {
  return ["-movflags", "+faststart", "-f", "mp4", "-y", output];
}

/** The original of an audio upload: MP3 as it is (metadata and cover art dropped), anything else to MP3 (LAME VBR q2, as Mastodon). */
export async function transcodeAudio(tools: MediaTools, input: string, output: string, probe: MediaProbe) {
  const codec = probe.audio?.codec === "mp3" && probe.format === "mp3" ? ["-c:a", "copy"] : ["-c:a", "libmp3lame", "-q:a", "2"];
  await runTool(tools.ffmpeg, [...COMMON, ...INPUT, "-i", input, ...streams(probe, { video: false, audio: true }), ...OUTPUT, "-vn", "-sn", "-dn", "-map_metadata", "-1", "-map_chapters", "-1", ...codec, "-id3v2_version", "0", "-write_id3v1", "0", "-f", "mp3", "-y", output]);
}

/**
 * The still a video's preview is made from: its first frame (Mastodon's `time: 0`), inside
 * 640x640, as PNG; with `coverArt`, the picture an audio file carries. Null when there is none.
 */
export async function extractFrame(tools: MediaTools, input: string, output: string, stream: number, options: { coverArt?: boolean } = {}): Promise<Uint8Array | null> {
  try {
    await runTool(tools.ffmpeg, [...COMMON, ...INPUT, "-i", input, "-map", `0:${stream}`, ...OUTPUT, "-map_metadata", "-1", "-frames:v", "1", "-vf", "scale='min(640,iw)':'min(640,ih)':force_original_aspect_ratio=decrease", "-c:v", "png", "-f", "image2", "-y", output], { limits: FRAME_LIMITS });
  } catch (e) {
    if (options.coverArt) return null;
    throw e;
  }
  const bytes = new Uint8Array(await Bun.file(output).arrayBuffer());
  return bytes.length > 0 ? bytes : null;
}

/** Frames times pixels an animated WebP may have: its frames are decoded in the server, by sharp. */
export const ANIMATION_PIXEL_BUDGET = 150_000_000;

/** Refuses an animation whose decoding would take more than the budget (or more frames than a video may have). */
export function checkAnimation(info: { width: number; height: number; pages: number }) {
  if (info.pages > MAX_VIDEO_FRAMES || info.width * info.height * info.pages > ANIMATION_PIXEL_BUDGET) {
    throw new ImageError(`${info.width}x${info.height} animations of ${info.pages} frames are not supported`, true);
  }
}

/**
 * An animated WebP as a silent MP4: ffmpeg reads no animated WebP, so sharp decodes the
 * frames one at a time and they are piped to ffmpeg as raw RGBA, each repeated for its delay
 * at a rate that shows every delay exactly (the delays' common divisor, at least 20 ms).
 */
export async function animatedWebpToMp4(tools: MediaTools, bytes: Uint8Array, output: string, info: { width: number; height: number; pages: number; delay: number[] }) {
  checkAnimation(info);
  const rounded = Array.from({ length: info.pages }, (_, i) => Math.max(20, Math.round((info.delay[i] || 100) / 10) * 10));
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const unit = rounded.reduce((a, b) => gcd(a, b));
  // libvips decodes every frame before the one asked for, so frames are taken in chunks of
  // up to 64 MB: far fewer passes over the file than one per frame.
  const frameBytes = info.width * info.height * 4;
  const chunk = Math.max(1, Math.floor((64 * 1024 * 1024) / frameBytes));
  let decoded: { first: number; data: Uint8Array } | null = null;
  let page = 0;
  let repeat = 0;
  let frame: Uint8Array | null = null;
  const frames = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (repeat === 0) {
        if (page >= info.pages) return controller.close();
        if (!decoded || page >= decoded.first + decoded.data.length / frameBytes) {
          const pages = Math.min(chunk, info.pages - page);
          decoded = { first: page, data: new Uint8Array(await sharp(bytes, { page, pages, limitInputPixels: false }).ensureAlpha().raw().toBuffer()) };
        }
        const at = (page - decoded.first) * frameBytes;
        frame = decoded.data.subarray(at, at + frameBytes);
        repeat = (rounded[page] as number) / unit;
        page++;
      }
      repeat--;
      controller.enqueue(frame as Uint8Array);
    },
  });
  await runTool(
    tools.ffmpeg,
    [
      ...COMMON,
      "-protocol_whitelist",
      "pipe",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "rgba",
      "-s",
      `${info.width}x${info.height}`,
      "-r",
      `1000/${unit}`,
      "-i",
      "pipe:0",
      ...h264(bitrateFor(info.width, info.height, (rounded.reduce((a, b) => a + b, 0) || 1000) / 1000)),
      ...mp4(output),
    ],
    { stdin: frames },
  );
}
