/** A custom emoji as the CustomEmoji entity shows it (remote ones, at their own server's URL). */
export interface CustomEmoji {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
}

export function emojisOf(row: { emojis: string }): CustomEmoji[] {
  return JSON.parse(row.emojis) as CustomEmoji[];
}
