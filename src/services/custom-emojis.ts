import { asc, eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import type { DatabasePort } from "../db/port.ts";
import { rowReader } from "../db/rows.ts";
import { customEmojis, type CustomEmojiRow } from "../db/schema.ts";
import { notFound, validationFailed } from "../errors.ts";
import type { IdGenerator } from "../ids.ts";
import sharp, { MAX_INPUT_PIXELS, SharpUnavailable } from "../media-files/sharp.ts";
import type { MediaStorage } from "../media-files/storage.ts";
import type { CustomEmoji } from "../models/emojis.ts";

/** CustomEmoji::LOCAL_LIMIT. */
export const EMOJI_SIZE_LIMIT = 256 * 1024;
/** CustomEmoji::SHORTCODE_ONLY_RE. */
const SHORTCODE = /^[a-zA-Z0-9_]{2,}$/;
/** CustomEmoji::SCAN_RE: `:code:` not inside a word or next to another colon. */
const SCAN = /(?<=[^\p{L}\p{N}:]|^):([a-zA-Z0-9_]{2,}):(?=[^\p{L}\p{N}:]|$)/gmu;
const FORMATS: Record<string, string> = { png: "png", gif: "gif", webp: "webp" };
const EMOJI = rowReader(customEmojis);

/**
 * This server's custom emojis: added by the operator (CLI), listed by
 * /api/v1/custom_emojis, and found in local statuses and profiles when they are written,
 * where they are kept in the row's `emojis` column in the shape remote ones have (so every
 * presenter and the ActivityPub Notes and actors read one shape).
 */
export class CustomEmojiService {
  // Built once: drizzle spends more building a query than SQLite running it (src/db/port.ts).
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private storage: MediaStorage,
  ) {
    const { customEmojis } = port.tables;
    this.q = {
      list: port.orm.select().from(customEmojis).orderBy(asc(customEmojis.shortcode)).prepare(),
      find: port.orm.select().from(customEmojis).where(eq(customEmojis.shortcode, sql.placeholder("shortcode"))).prepare(),
      remove: port.orm.delete(customEmojis).where(eq(customEmojis.shortcode, sql.placeholder("shortcode"))).returning().prepare(),
    };
  }

  async list(): Promise<CustomEmojiRow[]> {
    return (await this.q.list.execute()) as CustomEmojiRow[];
  }

  /** Checked as Mastodon checks a local emoji: shortcode, PNG/GIF/WebP by content, at most 256 KB. */
  async add(shortcode: string, image: Uint8Array, options: { category?: string } = {}): Promise<CustomEmojiRow> {
    const errors: string[] = [];
    if (!SHORTCODE.test(shortcode)) errors.push("Shortcode is invalid");
    else if (await this.find(shortcode)) errors.push("Shortcode has already been taken");
    let format: string | undefined;
    try {
      format = FORMATS[(await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS }).metadata()).format ?? ""];
    } catch (e) {
      if (e instanceof SharpUnavailable) throw e;
    }
    if (!format) errors.push("Image content type is invalid");
    if (image.byteLength >= EMOJI_SIZE_LIMIT) errors.push("Image file size must be less than 256 KB");
    if (errors.length) throw validationFailed(...errors);
    // The static image: the first frame as PNG, shrunk to fit 200x200 (Mastodon's static style).
    let still: Buffer;
    try {
      still = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS, animated: false })
        .resize(200, 200, { fit: "inside", withoutEnlargement: true })
        .png()
        .toBuffer();
    } catch {
      throw validationFailed("Image is invalid");
    }
    const imageFile = this.storage.newPath("custom_emojis", format as string);
    const staticFile = this.storage.newPath("custom_emojis", "png");
    try {
      await this.storage.write(imageFile, image);
      await this.storage.write(staticFile, still);
    } catch (e) {
      await this.storage.removeAll([imageFile, staticFile]);
      throw e;
    }
    const category = options.category?.trim() || null;
    const row: CustomEmojiRow = { id: this.ids.next(), shortcode, imageFile, staticFile, category, visibleInPicker: true, createdAt: this.clock.now() };
    let added: boolean;
    try {
      const { customEmojis } = this.port.tables;
      added = this.port.changes(await this.port.orm.insert(customEmojis).values(row).onConflictDoNothing({ target: customEmojis.shortcode })) > 0;
    } catch (e) {
      await this.storage.removeAll([imageFile, staticFile]);
      throw e;
    }
    // Another add of the shortcode beside this one (PostgreSQL) stored it first: refused as if it had come before.
    if (!added) {
      await this.storage.removeAll([imageFile, staticFile]);
      throw validationFailed("Shortcode has already been taken");
    }
    return row;
  }

  /** Deletes the row (in the caller's transaction, if any); its files go with `removeFiles`, once that is committed. */
  async remove(shortcode: string): Promise<CustomEmojiRow> {
    const [gone] = (await this.q.remove.execute({ shortcode })) as CustomEmojiRow[];
    if (!gone) throw notFound();
    return gone;
  }

  /** A removed emoji's files (never rejected: a failure is logged by the storage). */
  removeFiles(row: CustomEmojiRow): Promise<void> {
    return this.storage.removeAll([row.imageFile, row.staticFile]);
  }

  async find(shortcode: string): Promise<CustomEmojiRow | undefined> {
    const [row] = (await this.q.find.execute({ shortcode })) as CustomEmojiRow[];
    return row;
  }

  /** The entity shape (as remote emojis are kept): shortcode, url, static_url, visible_in_picker. */
  entity(row: CustomEmojiRow): CustomEmoji {
    return { shortcode: row.shortcode, url: this.storage.url(row.imageFile), static_url: this.storage.url(row.staticFile), visible_in_picker: row.visibleInPicker };
  }

  /**
   * The local emojis that these texts use, in order of first use (CustomEmoji.from_text): the
   * shortcodes they name, read in one statement (most texts name none, and then nothing is read).
   */
  async inTexts(texts: string[]): Promise<CustomEmoji[]> {
    const codes = new Set<string>();
    for (const text of texts) for (const m of text.matchAll(SCAN)) codes.add(m[1] as string);
    if (codes.size === 0) return [];
    // Raw, `IN (?, ...)` per count (portable, where a list parameter is not), read by rowReader: a builder costs more to build than this to run.
    const rows = await this.port.values(`SELECT ${EMOJI.columns} ${EMOJI.from} WHERE shortcode IN (${[...codes].map(() => "?").join(", ")})`, [...codes]);
    const byCode = new Map(rows.map((r) => EMOJI.map(r)).map((r) => [r.shortcode, r]));
    return [...codes].flatMap((c) => {
      const row = byCode.get(c);
      return row ? [this.entity(row)] : [];
    });
  }
}
