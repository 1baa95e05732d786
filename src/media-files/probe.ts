import { probeJson, type MediaTools } from "./ffmpeg.ts";

/**
 * What ffprobe says of a file, reduced to what the rules need, read as Mastodon's
 * VideoMetadataExtractor reads it: the first video stream that is not a cover picture, the
 * first audio stream, the container's duration and bitrate, avg_frame_rate falling back to
 * r_frame_rate (screen recorders write "0/0"), and a 90-degree rotation swapping the sides.
 */
export interface MediaProbe {
  /** ffprobe's demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "gif", "mp3". */
  format: string;
  duration: number;
  bitrate: number;
  video: {
    /** The stream's index in the file: what ffmpeg is told to read (-map), so no other stream slips past the checks. */
    index: number;
    codec: string;
    pixFmt: string;
    /** As displayed (after rotation). */
    width: number;
    height: number;
    /** The average frame rate as a reduced fraction, e.g. "30/1", "30000/1001". */
    frameRate: string;
    /** Its value, frames per second. */
    fps: number;
    /** r_frame_rate: the container's base rate, which variable-rate files set high. */
    baseFps: number | null;
    /** Turned by a display matrix (phones held upright): a copy would lose it, so it is transcoded. */
    rotated: boolean;
  } | null;
  audio: {
    index: number;
    codec: string;
    sampleRate: number;
    channels: number;
    channelLayout: string | null;
    bitrate: number | null;
  } | null;
  /** The index of a still picture stream (an MP3's or M4A's cover art), or null. */
  coverArt: number | null;
}

interface RawStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  pix_fmt?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  bit_rate?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string };
  side_data_list?: { rotation?: number }[];
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** "60/2" gives "30/1", as Ruby's Rational prints; "0/0" or garbage gives null. */
export function reducedRate(raw: string | undefined): { text: string; value: number } | null {
  const m = /^(\d+)\/(\d+)$/.exec(raw ?? "");
  if (!m) return null;
  const [n, d] = [Number(m[1]), Number(m[2])];
  if (n === 0 || d === 0) return null;
  const g = gcd(n, d);
  return { text: `${n / g}/${d / g}`, value: n / d };
}

function rotated(stream: RawStream): boolean {
  const fromSideData = stream.side_data_list?.some((s) => Math.abs(s.rotation ?? 0) === 90 || Math.abs(s.rotation ?? 0) === 270);
  const fromTag = ["90", "270", "-90"].includes(stream.tags?.rotate ?? "");
  return !!fromSideData || fromTag;
}

export class ProbeFailed extends Error {}

/** Reads a file's streams with ffprobe; ProbeFailed when it is not something ffprobe can read. */
export async function probeMedia(tools: MediaTools, path: string): Promise<MediaProbe> {
  let raw: { format?: { format_name?: string; duration?: string; bit_rate?: string }; streams?: RawStream[] };
  try {
    raw = (await probeJson(tools, path)) as typeof raw;
  } catch (e) {
    throw new ProbeFailed(String(e));
  }
  const streams = raw.streams ?? [];
  if (!raw.format?.format_name) throw new ProbeFailed("no container");
  const videoStream = streams.find((s) => s.codec_type === "video" && !s.disposition?.attached_pic);
  const audioStream = streams.find((s) => s.codec_type === "audio");
  let video: MediaProbe["video"] = null;
  if (videoStream?.width && videoStream.height) {
    const rate = reducedRate(videoStream.avg_frame_rate) ?? reducedRate(videoStream.r_frame_rate);
    const turned = rotated(videoStream);
    video = {
      index: videoStream.index ?? 0,
      codec: videoStream.codec_name ?? "",
      pixFmt: videoStream.pix_fmt ?? "",
      width: turned ? videoStream.height : videoStream.width,
      height: turned ? videoStream.width : videoStream.height,
      frameRate: rate?.text ?? "0/1",
      fps: rate?.value ?? 0,
      baseFps: reducedRate(videoStream.r_frame_rate)?.value ?? null,
      rotated: turned || (videoStream.side_data_list ?? []).some((s) => (s.rotation ?? 0) !== 0) || !["", "0"].includes(videoStream.tags?.rotate ?? ""),
    };
  }
  const audio: MediaProbe["audio"] = audioStream
    ? {
        index: audioStream.index ?? 0,
        codec: audioStream.codec_name ?? "",
        sampleRate: Number(audioStream.sample_rate ?? 0),
        channels: audioStream.channels ?? 0,
        channelLayout: audioStream.channel_layout ?? null,
        bitrate: audioStream.bit_rate ? Number(audioStream.bit_rate) : null,
      }
    : null;
  return {
    format: raw.format.format_name,
    duration: Number(raw.format.duration ?? 0) || 0,
    bitrate: Number(raw.format.bit_rate ?? 0) || 0,
    video,
    audio,
    coverArt: streams.find((s) => s.codec_type === "video" && s.disposition?.attached_pic === 1)?.index ?? null,
  };
}
