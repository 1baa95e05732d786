import { validationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { VIDEO_SIZE_LIMIT } from "../../media-files/video.ts";

/** The parameters of an upload (POST /api/v1/media, /api/v2/media) and of PUT /api/v1/media/:id. */
export interface MediaInput {
  file?: File;
  thumbnail?: File;
  description?: string;
  focus?: string;
}

/** `x,y`, each from -1.0 to 1.0; anything else is refused. */
export function parseFocus(value: string): { x: number; y: number } | null {
  const parts = value.split(",").map((p) => p.trim());
  if (parts.length !== 2 || parts.some((p) => !/^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(p))) return null;
  const [x, y] = parts.map(Number) as [number, number];
  return Math.abs(x) <= 1 && Math.abs(y) <= 1 ? { x, y } : null;
}

/**
 * Mastodon's validations of those parameters, all collected into one 422: the file's presence
 * and size (video and audio may be larger), the thumbnail's size, the description's length, the focus.
 */
export function validateMediaInput(input: MediaInput, options: { fileRequired: boolean; larger?: boolean }): { focus?: { x: number; y: number } } {
  const errors: string[] = [];
  if (options.fileRequired && !input.file) errors.push("File can't be blank");
  // Video and audio may be larger (Mastodon's larger_media_format?).
  const limit = options.larger ? VIDEO_SIZE_LIMIT : LIMITS.imageSizeLimit;
  const mb = limit / (1024 * 1024);
  if (input.file && input.file.size >= limit) errors.push(`File must be less than ${mb} MB`, `File file size must be less than ${mb} MB`);
  if (input.thumbnail && input.thumbnail.size >= LIMITS.imageSizeLimit) {
    errors.push("Thumbnail must be less than 16 MB", "Thumbnail file size must be less than 16 MB");
  }
  if (input.description !== undefined && [...input.description].length > LIMITS.descriptionLimit) {
    errors.push(`Description is too long (maximum is ${LIMITS.descriptionLimit} characters)`);
  }
  let focus: { x: number; y: number } | undefined;
  if (input.focus !== undefined && input.focus.trim() !== "") {
    focus = parseFocus(input.focus) ?? undefined;
    if (!focus) errors.push("Focus must be two numbers from -1.0 to 1.0, as x,y");
  }
  if (errors.length > 0) throw validationFailed(...errors);
  return { focus };
}
