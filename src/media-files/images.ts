import { encode as encodeBlurhash } from "blurhash";
import sharp, { MAX_INPUT_PIXELS, SharpUnavailable } from "./sharp.ts";

/** Mastodon's IMAGE_STYLES: the original is capped at 3840x2160 worth of pixels, the preview at 640x360. */
export const ORIGINAL_PIXELS = 8_294_400;
export const PREVIEW_PIXELS = 230_400;
/** Larger images are refused outright (Attachmentable::MAX_MATRIX_LIMIT). */
export const MATRIX_LIMIT = 33_177_600;
/** Animated GIFs above this are refused (GIF_MATRIX_LIMIT). */
export const GIF_MATRIX_LIMIT = 921_600;

const FORMATS = new Set(["jpeg", "png", "gif", "webp", "heif"]);

export interface ImageInfo {
  /** jpeg | png | gif | webp | avif */
  format: string;
  /** Size as shown, after EXIF orientation. */
  width: number;
  height: number;
  animated: boolean;
}

export class ImageError extends Error {
  constructor(
    message: string,
    /** Whether the message is Mastodon's whole answer rather than a validation message. */
    public bare = false,
  ) {
    super(message);
  }
}

export interface Geometry {
  width: number;
  height: number;
  size: string;
  aspect: number;
}

export function geometry(width: number, height: number): Geometry {
  return { width, height, size: `${width}x${height}`, aspect: width / height };
}

/**
 * Mastodon's PixelGeometryParser box, rounded down rather than to nearest: Mastodon's
 * rounding can overshoot the cap by a few hundred pixels; this never does, and agrees with
 * Mastodon whenever the box is exact (1920x1080 gives a 640x360 preview in both).
 */
export function box(width: number, height: number, pixels: number): { width: number; height: number } {
  return { width: Math.floor(Math.sqrt((pixels * width) / height)), height: Math.floor(Math.sqrt((pixels * height) / width)) };
}

/** The size an image of w x h gets when fitted inside the box, never enlarged, never over the cap. */
export function fitted(width: number, height: number, pixels: number): { width: number; height: number } {
  if (width * height <= pixels) return { width, height };
  const target = box(width, height, pixels);
  const scale = Math.min(target.width / width, target.height / height);
  const out = { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
  return out;
}

/**
 * What the bytes are, read from their header alone (nothing is decoded yet, so a
 * decompression bomb is refused before it can allocate). The name and declared type of an
 * upload are never consulted.
 */
export async function inspect(input: Uint8Array): Promise<ImageInfo> {
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (e) {
    if (e instanceof SharpUnavailable) throw e;
    throw new ImageError("File content type is invalid, File is invalid");
  }
  if (!meta.format || !FORMATS.has(meta.format) || !meta.width || !meta.height) {
    throw new ImageError("File content type is invalid, File is invalid");
  }
  // libheif here decodes AV1 (AVIF) only; HEIC (HEVC) cannot be read.
  if (meta.format === "heif" && meta.compression !== "av1") throw new ImageError("File content type is invalid, File is invalid");
  const rotated = (meta.orientation ?? 1) >= 5;
  const width = rotated ? meta.height : meta.width;
  const height = rotated ? meta.width : (meta.pageHeight ?? meta.height);
  const animated = (meta.format === "gif" || meta.format === "webp") && (meta.pages ?? 1) > 1;
  const frameHeight = animated ? (meta.pageHeight ?? height) : height;
  if (width * frameHeight > MATRIX_LIMIT) throw new ImageError(`${width}x${frameHeight} images are not supported`, true);
  // Mastodon's GIF_MATRIX_LIMIT; an animated WebP, which becomes a gifv too, is held to it as well.
  if (animated && width * frameHeight > GIF_MATRIX_LIMIT) throw new ImageError(`${width}x${frameHeight} ${meta.format === "gif" ? "GIF files" : "images"} are not supported`, true);
  return { format: meta.format === "heif" ? "avif" : meta.format, width, height: frameHeight, animated };
}

export interface Rendition {
  data: Buffer;
  ext: string;
  width: number;
  height: number;
}

function pipeline(input: Uint8Array, animated: boolean) {
  // failOn "error": a truncated or undecodable image is refused (libvips would otherwise fill
  // the missing rows with black and store that); mere warnings, which browsers shrug off, pass.
  return sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error", animated }).rotate();
}

/** Encodes in the upload's own format (AVIF becomes JPEG, as Mastodon converts it); no metadata kept but the colour profile. */
function encode(image: ReturnType<typeof sharp>, format: string, preview: boolean) {
  image.keepIccProfile();
  switch (format) {
    case "png":
      return { image: image.png({ compressionLevel: 6 }), ext: "png" };
    case "webp":
      return { image: image.webp({ quality: preview ? 75 : 85 }), ext: "webp" };
    case "gif":
      return preview ? { image: image.png(), ext: "png" } : { image: image.gif(), ext: "gif" };
    default:
      return { image: image.jpeg({ quality: preview ? 75 : 85 }), ext: "jpg" };
  }
}

async function render(input: Uint8Array, info: ImageInfo, pixels: number, preview: boolean): Promise<Rendition> {
  const animated = info.animated && !preview;
  const target = fitted(info.width, info.height, pixels);
  let image = pipeline(input, animated);
  // Exactly the computed size (the aspect is already right to the pixel), so that the
  // geometry announced before processing is the one the file gets.
  if (target.width !== info.width || target.height !== info.height) image = image.resize(target.width, target.height, { fit: "fill" });
  const { image: encoded, ext } = encode(image, info.format, preview);
  try {
    const { data, info: out } = await encoded.toBuffer({ resolveWithObject: true });
    return { data, ext, width: out.width, height: animated && out.pageHeight ? out.pageHeight : out.height };
  } catch {
    throw new ImageError("File content type is invalid, File is invalid");
  }
}

/** The full-size version: oriented, capped at ORIGINAL_PIXELS, stripped of EXIF (GPS included). */
export function renderOriginal(input: Uint8Array, info: ImageInfo): Promise<Rendition> {
  return render(input, info, ORIGINAL_PIXELS, false);
}

/** The preview: within PREVIEW_PIXELS, never cropped, a still image. */
export function renderPreview(input: Uint8Array, info: ImageInfo): Promise<Rendition> {
  return render(input, info, PREVIEW_PIXELS, true);
}

/** Mastodon's blurhash: 4x4 components over the preview fitted in 100x100, alpha dropped. */
export async function blurhashOf(preview: Uint8Array): Promise<string> {
  const { data, info } = await sharp(preview)
    .resize(100, 100, { fit: "inside" })
    .toColourspace("srgb")
    .removeAlpha()
    .ensureAlpha(1)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return encodeBlurhash(new Uint8ClampedArray(data.buffer, data.byteOffset, data.byteLength), info.width, info.height, 4, 4);
}

/** The geometry the original will have once processed, known from the header alone. */
export function expectedOriginal(info: ImageInfo): Geometry {
  const size = fitted(info.width, info.height, ORIGINAL_PIXELS);
  return geometry(size.width, size.height);
}
