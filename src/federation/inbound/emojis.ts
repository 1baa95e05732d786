import type { DocumentLoader } from "@fedify/fedify";
import { Emoji, Image } from "@fedify/fedify/vocab";
import type { CustomEmoji } from "../../models/emojis.ts";
import { httpUrlOrNull } from "../../net/http-url.ts";

/** Emojis read from one object at most. */
export const MAX_EMOJIS = 50;
/** Mastodon's CustomEmoji::SHORTCODE_RE_FRAGMENT. */
const SHORTCODE = /^[a-zA-Z0-9_]{2,}$/;

/**
 * A custom emoji tag (toot:Emoji) as clients show it: its shortcode without the colons and
 * its image at its own server's URL (not downloaded); null for anything unusable.
 */
export async function customEmojiOf(tag: Emoji, loader: { documentLoader?: DocumentLoader; contextLoader?: DocumentLoader }): Promise<CustomEmoji | null> {
  const shortcode = (tag.name?.toString() ?? "").replace(/^:|:$/g, "");
  if (!SHORTCODE.test(shortcode)) return null;
  const icon = await tag.getIcon({ ...loader, suppressError: true });
  if (!(icon instanceof Image)) return null;
  // An image clients load: an emoji anywhere but at an http(s) address is dropped.
  const url = httpUrlOrNull(icon.url instanceof URL ? icon.url : (icon.url?.href ?? null));
  if (!url) return null;
  return { shortcode, url, static_url: url, visible_in_picker: false };
}

/** The custom emojis among an object's tags, once per shortcode. */
export async function customEmojisOf(object: { getTags(options?: object): AsyncIterable<unknown> }, loader: { documentLoader?: DocumentLoader; contextLoader?: DocumentLoader }): Promise<CustomEmoji[]> {
  const found = new Map<string, CustomEmoji>();
  for await (const tag of object.getTags({ ...loader, suppressError: true })) {
    if (!(tag instanceof Emoji) || found.size >= MAX_EMOJIS) continue;
    const emoji = await customEmojiOf(tag, loader);
    if (emoji && !found.has(emoji.shortcode)) found.set(emoji.shortcode, emoji);
  }
  return [...found.values()];
}
