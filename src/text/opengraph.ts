import type { Parser as HtmlParser } from "htmlparser2";

/** The HTML parser, loaded at the first page summarized (a link card), not at start-up. */
let loadedParser: typeof HtmlParser | null = null;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Parser = () => (loadedParser ??= (require("htmlparser2") as { Parser: typeof HtmlParser }).Parser);
import { httpUrlOrNull, REMOTE_URL_MAX } from "../net/http-url.ts";

/** What a page says of itself for previews: OpenGraph, Twitter card and plain HTML meta. */
export interface PageSummary {
  title: string;
  description: string;
  image: string | null;
  imageDescription: string;
  imageWidth: number;
  imageHeight: number;
  siteName: string;
  type: string;
  canonical: string | null;
  language: string | null;
  authorName: string;
  publishedAt: string | null;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/**
 * Reads the head of an HTML page with a real parser (htmlparser2, which sanitize-html already
 * uses): `og:*` first, then `twitter:*`, then `<title>` and `<meta name=description>`, as
 * Mastodon's LinkDetailsExtractor prefers them. Values come back as plain text; URLs are made
 * absolute against the page's own URL and only http(s) ones are kept.
 */
export function summarize(bytes: Uint8Array, pageUrl: string): PageSummary {
  const meta = new Map<string, string>();
  let title = "";
  let inTitle = false;
  let canonical: string | null = null;
  let language: string | null = null;
  let done = false;
  const parser = new (Parser())(
    {
      onopentag(name, attrs) {
        if (done) return;
        if (name === "html" && attrs.lang) language = attrs.lang.trim().slice(0, 16) || null;
        if (name === "title") inTitle = true;
        if (name === "meta") {
          const key = (attrs.property ?? attrs.name ?? "").trim().toLowerCase();
          if (key && attrs.content !== undefined && !meta.has(key)) meta.set(key, attrs.content);
        }
        if (name === "link" && (attrs.rel ?? "").toLowerCase().split(/\s+/).includes("canonical") && attrs.href) canonical = attrs.href;
        // The head is all a preview needs.
        if (name === "body") done = true;
      },
      ontext(text) {
        if (inTitle && !done) title += text;
      },
      onclosetag(name) {
        if (name === "title") inTitle = false;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(decoder.decode(bytes));
  parser.end();
  const first = (...keys: string[]) => keys.map((k) => meta.get(k)?.trim()).find((v) => v) ?? "";
  const url = (value: string) => {
    if (!value || value.length > REMOTE_URL_MAX) return null;
    try {
      return httpUrlOrNull(new URL(value, pageUrl));
    } catch {
      return null;
    }
  };
  const size = (key: string) => Math.max(0, Math.min(Number.parseInt(meta.get(key) ?? "0", 10) || 0, 100_000));
  return {
    title: first("og:title", "twitter:title") || title.trim().replace(/\s+/g, " "),
    description: first("og:description", "twitter:description", "description"),
    image: url(first("og:image", "og:image:url", "og:image:secure_url", "twitter:image")),
    imageDescription: first("og:image:alt", "twitter:image:alt"),
    imageWidth: size("og:image:width"),
    imageHeight: size("og:image:height"),
    siteName: first("og:site_name"),
    type: first("og:type"),
    canonical: canonical ? url(canonical) : null,
    language,
    authorName: first("author", "article:author"),
    publishedAt: first("article:published_time") || null,
  };
}
