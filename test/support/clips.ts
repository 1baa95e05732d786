import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mediaTools, type MediaTools } from "../../src/media-files/ffmpeg.ts";

/**
 * Short clips made by ffmpeg from its own test sources (testsrc2, sine), in the formats
 * phones and clients send. Made once per test process, in a private folder.
 */
let tools: MediaTools | null = null;
let dir: string | null = null;

export async function clipTools(): Promise<MediaTools> {
  tools ??= await mediaTools(tmpdir());
  if (!tools) throw new Error("no ffmpeg for the tests: the @ffmpeg-installer/@ffprobe-installer packages are missing");
  return tools;
}

function folder(): string {
  dir ??= mkdtempSync(join(tmpdir(), "rookery-clips-"));
  return dir;
}

export function removeClips() {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
  // The clips made are gone with their folder: a later file (bun runs every test file in one
  // process) makes them again, as the rotated clip needs web.mp4 on disk, not only its bytes.
  made.clear();
}

async function ffmpeg(args: string[]): Promise<void> {
  const t = await clipTools();
  const proc = Bun.spawn([t.ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y", ...args], { stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${err}`);
}

const made = new Map<string, Promise<Uint8Array>>();

/** A clip by name, made on first use. */
function clip(name: string, args: (out: string) => string[]): Promise<Uint8Array> {
  let p = made.get(name);
  if (!p) {
    const out = join(folder(), name);
    p = ffmpeg(args(out)).then(() => new Uint8Array(readFileSync(out)));
    made.set(name, p);
  }
  return p;
}

const picture = (size: string, seconds: number, rate = 30) => ["-f", "lavfi", "-i", `testsrc2=size=${size}:rate=${rate}:duration=${seconds}`];
const tone = (seconds: number, frequency = 440) => ["-f", "lavfi", "-i", `sine=frequency=${frequency}:duration=${seconds}:sample_rate=44100`];

const webMp4 = () =>
  clip("web.mp4", (o) => [...picture("320x240", 2), ...tone(2), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-shortest", "-movflags", "+faststart", "-metadata", "title=Holiday", o]);

export const clips = {
  /** H.264 + AAC, yuv420p, faststart: a web-safe MP4, kept as it is. */
  mp4: () => webMp4(),
  /** The same with the index at the end, as cameras write: the kind a cut-off upload loses. */
  mp4IndexLast: () => clip("index-last.mp4", (o) => [...picture("320x240", 2), ...tone(2), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", o]),
  /** H.265 in MP4, which not every browser plays. */
  hevc: () => clip("hevc.mp4", (o) => [...picture("320x240", 1), ...tone(1), "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", o]),
  /** A QuickTime file as iPhones write, with the place it was filmed (a ©xyz atom). */
  mov: () =>
    clip("phone.mov", (o) => [...picture("240x320", 2), ...tone(2), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-metadata", "location=+48.8584+002.2945/", "-metadata", "make=Apple", "-f", "mov", o]),
  /** A phone held upright: 320x240 pixels turned by a display matrix. */
  rotated: async () => {
    // This ffmpeg writes the matrix only when copying, so the web-safe clip is copied with it.
    await webMp4();
    return clip("rotated.mp4", (o) => ["-i", join(folder(), "web.mp4"), "-c", "copy", "-metadata:s:v:0", "rotate=90", o]);
  },
  /** VP9 + Opus in WebM. */
  webm: () => clip("clip.webm", (o) => [...picture("320x240", 2), ...tone(2), "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libopus", "-shortest", o]),
  /** A screen recording: video and no sound (a gifv, as Mastodon types it). */
  silent: () => clip("silent.mp4", (o) => [...picture("320x240", 1), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", o]),
  /** An animated GIF of 10 frames. */
  gif: () => clip("anim.gif", (o) => [...picture("160x120", 1, 10), o]),
  /** An animated PNG. */
  apng: () => clip("anim.png", (o) => [...picture("160x120", 1, 10), "-plays", "0", "-f", "apng", o]),
  /** MP3 with a title tag and cover art. */
  mp3: () =>
    clip("song.mp3", (o) => [...tone(2), "-f", "lavfi", "-i", "testsrc2=size=300x300:duration=1", "-map", "0:a", "-map", "1:v", "-frames:v", "1", "-c:a", "libmp3lame", "-b:a", "128k", "-c:v", "png", "-disposition:v", "attached_pic", "-id3v2_version", "3", "-metadata", "title=Song", o]),
  /** A voice note: Opus in Ogg, mono. */
  opus: () => clip("voice.opus", (o) => [...tone(2, 330), "-ac", "1", "-c:a", "libopus", "-b:a", "32k", "-f", "ogg", o]),
  /** AV1 in MP4 and in WebM, VP8 in WebM (each with Opus where the container allows it). */
  av1Mp4: () => clip("av1.mp4", (o) => [...picture("128x96", 1, 10), ...tone(1), "-c:v", "libaom-av1", "-cpu-used", "8", "-strict", "experimental", "-b:v", "100k", "-c:a", "aac", "-shortest", o]),
  av1Webm: () => clip("av1.webm", (o) => [...picture("128x96", 1, 10), ...tone(1), "-c:v", "libaom-av1", "-cpu-used", "8", "-strict", "experimental", "-b:v", "100k", "-c:a", "libopus", "-shortest", o]),
  vp8: () => clip("vp8.webm", (o) => [...picture("128x96", 1, 10), ...tone(1), "-c:v", "libvpx", "-deadline", "realtime", "-b:v", "100k", "-c:a", "libvorbis", "-shortest", o]),
  /** Audio in the other containers people send. */
  flac: () => clip("tone.flac", (o) => [...tone(1), "-c:a", "flac", o]),
  wav: () => clip("tone.wav", (o) => [...tone(1), "-c:a", "pcm_s16le", o]),
  m4a: () => clip("memo.m4a", (o) => [...tone(1), "-c:a", "aac", "-f", "ipod", o]),
  webmAudio: () => clip("audio.webm", (o) => [...tone(1), "-c:a", "libopus", "-vn", "-f", "webm", o]),
  vorbis: () => clip("tone.ogg", (o) => [...tone(1), "-c:a", "libvorbis", o]),
  /** Matroska with two video tracks: a small one first, then one over the 4K limit. */
  twoTracks: () =>
    clip("two-tracks.mkv", (o) => [...picture("320x240", 1), "-f", "lavfi", "-i", "color=c=red:size=4096x2160:rate=30:duration=1", ...tone(1), "-map", "0:v", "-map", "1:v", "-map", "2:a", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "libopus", "-f", "matroska", o]),
  /** QuickTime Animation (qtrle) in a MOV: a codec no phone writes, whose decoder uploads may not reach. */
  qtrle: () => clip("animation.mov", (o) => [...picture("160x120", 1), "-c:v", "qtrle", "-f", "mov", o]),
  /** 4096x2160: over Mastodon's 4K matrix limit. */
  tooLarge: () => clip("dci4k.mp4", (o) => ["-f", "lavfi", "-i", "color=c=blue:size=4096x2160:rate=1:duration=1", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", o]),
  /** 150 frames a second: over the 120 fps limit. */
  tooFast: () => clip("fast.mp4", (o) => [...picture("160x120", 1, 150), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", o]),
};

/** ffprobe's view of bytes (format and streams), as the tests check what was served. */
export async function probeBytes(bytes: Uint8Array): Promise<{ format: { format_name: string; duration: string; tags?: Record<string, string> }; streams: { codec_type: string; codec_name: string; pix_fmt?: string; width?: number; height?: number; disposition?: { attached_pic?: number }; tags?: Record<string, string>; side_data_list?: unknown[] }[] }> {
  const t = await clipTools();
  const path = join(folder(), `probe-${crypto.randomUUID()}`);
  await Bun.write(path, bytes);
  try {
    const proc = Bun.spawn([t.ffprobe, "-v", "error", "-show_format", "-show_streams", "-of", "json", path], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`ffprobe: ${err}`);
    return JSON.parse(out);
  } finally {
    rmSync(path, { force: true });
  }
}

/** Decodes every frame of the bytes: whether a player could play them to the end. */
export async function decodes(bytes: Uint8Array): Promise<boolean> {
  const t = await clipTools();
  const path = join(folder(), `play-${crypto.randomUUID()}`);
  await Bun.write(path, bytes);
  try {
    const proc = Bun.spawn([t.ffmpeg, "-v", "error", "-xerror", "-i", path, "-f", "null", "-"], { stdout: "ignore", stderr: "pipe" });
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    return code === 0 && err.trim() === "";
  } finally {
    rmSync(path, { force: true });
  }
}

/** A clip long enough that its transcode can be caught running: `seconds` of small HEVC with sound. */
export function longClip(seconds: number): Promise<Uint8Array> {
  return clip(`long-${seconds}.mp4`, (o) => [...picture("320x240", seconds), ...tone(seconds), "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", o]);
}
