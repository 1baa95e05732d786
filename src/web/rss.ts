import { escapeHtml } from "../text/format.ts";
import type { StatusEntity } from "./pages.ts";

const MEDIA_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  mp4: "video/mp4",
  webm: "video/webm",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  m4a: "audio/mp4",
};

/** The media type of a file we named (the server names its files by what they are), else a generic one. */
function mediaTypeOf(url: string): string {
  const ext = /\.([a-z0-9]+)(?:\?|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? "";
  return MEDIA_TYPES[ext] ?? "application/octet-stream";
}

const x = (text: string) => escapeHtml(text);

/**
 * An RSS 2.0 feed of statuses, as Mastodon's: each item links to the status page, carries its
 * HTML as the description (escaped, as RSS wants), its content warning as the title, and its
 * media as enclosures (the length is not known without reading the file: 0, as RSS allows).
 */
export function rssFeed(channel: { title: string; link: string; description: string; self: string; image?: string }, statuses: StatusEntity[]): string {
  const items = statuses.map((s) => {
    const link = s.url ?? s.uri;
    const enclosures = s.media_attachments
      .filter((m) => m.url)
      .map((m) => `<enclosure url="${x(m.url!)}" type="${mediaTypeOf(m.url!)}" length="0"/>`)
      .join("");
    return `<item><guid isPermaLink="true">${x(link)}</guid><link>${x(link)}</link><pubDate>${new Date(s.created_at).toUTCString()}</pubDate>${
      s.spoiler_text ? `<title>${x(s.spoiler_text)}</title>` : ""
    }<description>${x(s.content)}</description>${enclosures}</item>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
<title>${x(channel.title)}</title>
<link>${x(channel.link)}</link>
<description>${x(channel.description)}</description>
<atom:link href="${x(channel.self)}" rel="self" type="application/rss+xml"/>
${channel.image ? `<image><url>${x(channel.image)}</url><title>${x(channel.title)}</title><link>${x(channel.link)}</link></image>` : ""}
${items.join("\n")}
</channel>
</rss>
`;
}
