/**
 * What an upload is, from its first bytes (as Marcel tells Mastodon), before anything decodes
 * it: which size limit applies, and which pipeline reads it. The name and the declared type
 * of an upload are never consulted; the pipelines then check that the contents agree.
 */
export type Sniffed =
  /** A still or animated image for sharp (JPEG, PNG, GIF, WebP, AVIF). */
  | "image"
  /** Video or audio for ffprobe/ffmpeg (MP4/MOV/M4A/3GP, Matroska/WebM, Ogg, MP3, FLAC, WAV, AAC, ASF). */
  | "av"
  | null;

const ascii = (bytes: Uint8Array, start: number, length: number) => String.fromCharCode(...bytes.subarray(start, start + length));

/** ISO BMFF brands that are still images (AVIF, HEIF): everything else in an ftyp box is video or audio. */
const IMAGE_BRANDS = new Set(["avif", "avis", "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"]);

export function sniff(bytes: Uint8Array): Sniffed {
  if (bytes.length < 12) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image";
  if (ascii(bytes, 0, 8) === "\x89PNG\r\n\x1a\n") return "image";
  if (ascii(bytes, 0, 4) === "GIF8") return "image";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return "image";
  if (ascii(bytes, 4, 4) === "ftyp") return IMAGE_BRANDS.has(ascii(bytes, 8, 4)) ? "image" : "av";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WAVE") return "av";
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return "av";
  if (ascii(bytes, 0, 4) === "OggS" || ascii(bytes, 0, 4) === "fLaC" || ascii(bytes, 0, 3) === "ID3") return "av";
  // MPEG audio (MP3 without a tag) and ADTS AAC: an 11- or 12-bit frame sync.
  if (bytes[0] === 0xff && ((bytes[1] as number) & 0xe0) === 0xe0) return "av";
  // ASF (WMA), Mastodon's video/x-ms-asf.
  if (bytes[0] === 0x30 && bytes[1] === 0x26 && bytes[2] === 0xb2 && bytes[3] === 0x75) return "av";
  // QuickTime files of old, with no ftyp box first.
  if (["moov", "mdat", "wide", "free", "skip"].includes(ascii(bytes, 4, 4))) return "av";
  return null;
}

/** Whether a PNG carries an animation (an acTL chunk before its image data). */
export function isAnimatedPng(bytes: Uint8Array): boolean {
  let offset = 8;
  while (offset + 8 <= bytes.length) {
    const length = ((bytes[offset] as number) << 24) | ((bytes[offset + 1] as number) << 16) | ((bytes[offset + 2] as number) << 8) | (bytes[offset + 3] as number);
    const type = ascii(bytes, offset + 4, 4);
    if (type === "acTL") return true;
    if (type === "IDAT" || length < 0) return false;
    offset += 12 + length;
  }
  return false;
}

/** Audio or video, from the container alone: the type a v2 upload shows that could not be read. */
export function avTypeGuess(bytes: Uint8Array): "video" | "audio" {
  if (ascii(bytes, 4, 4) === "ftyp") return ["M4A ", "M4B ", "M4P "].includes(ascii(bytes, 8, 4)) ? "audio" : "video";
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return "video";
  if (["moov", "mdat", "wide", "free", "skip"].includes(ascii(bytes, 4, 4))) return "video";
  return "audio";
}
