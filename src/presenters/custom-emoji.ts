import type { CustomEmoji } from "../models/emojis.ts";

/** REST::CustomEmojiSerializer: `category` only for an emoji that has one. */
export function serializeCustomEmoji(emoji: CustomEmoji, category: string | null) {
  return category === null ? { ...emoji } : { ...emoji, category };
}
