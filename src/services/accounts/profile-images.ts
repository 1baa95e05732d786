import sharp, { MAX_INPUT_PIXELS, SharpUnavailable } from "../../media-files/sharp.ts";
import type { MediaStorage } from "../../media-files/storage.ts";
import { validationFailed } from "../../errors.ts";

const LIMIT_BYTES = 8 * 1024 * 1024;
const ACCEPTED = new Set(["jpeg", "png", "gif", "webp"]);
// Mastodon's avatar (400x400) and header (1500x500) geometry, cropped to fill.
const SIZES = { avatar: { width: 400, height: 400 }, header: { width: 1500, height: 500 } } as const;

/** Avatar and header pictures: decoded by sharp (never trusting the name or type), re-encoded without metadata. */
export class ProfileImageService {
  constructor(private storage: MediaStorage) {}

  async store(file: File, kind: "avatar" | "header"): Promise<string> {
    const label = kind === "avatar" ? "Avatar" : "Header";
    if (file.size > LIMIT_BYTES) throw validationFailed(`${label} file size must be less than 8 MB`);
    const input = Buffer.from(await file.arrayBuffer());
    let format: string | undefined;
    try {
      format = (await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata()).format;
    } catch (e) {
      if (e instanceof SharpUnavailable) throw e;
      format = undefined;
    }
    if (!format || !ACCEPTED.has(format)) throw validationFailed(`${label} content type is invalid`, `${label} is invalid`);
    const { width, height } = SIZES[kind];
    let output: Buffer;
    try {
      output = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS })
        .rotate()
        .resize(width, height, { fit: "cover", withoutEnlargement: false })
        .webp({ quality: 85 })
        .toBuffer();
    } catch {
      throw validationFailed(`${label} is invalid`);
    }
    const path = this.storage.newPath(kind === "avatar" ? "avatars" : "headers", "webp");
    await this.storage.write(path, output);
    return path;
  }

  /** Never throws (a store's failure is logged): the account no longer names the file. */
  remove(path: string): Promise<void> {
    return this.storage.remove(path);
  }
}
