import { html, type Safe } from "./html.ts";
import { MEMBER_PAGES_STYLE } from "./page-style.ts";

/** What a page tells previews and crawlers about itself. */
export interface PageMeta {
  title: string;
  /** Plain text, for the description meta and previews. */
  description: string;
  canonical: string;
  /** The ActivityPub twin of the page (actor or Note), offered as rel=alternate. */
  activity?: string;
  /** The page's RSS feed, offered as rel=alternate. */
  feed?: string;
  /** The oEmbed endpoint for the page (statuses), offered for discovery. */
  oembed?: string;
  image?: string | null;
  /** The image is the content's own (a picture in the status), not an avatar: a large card. */
  largeImage?: boolean;
  /** og:type: "profile" for accounts, "article" for statuses, "website" otherwise. */
  type: "profile" | "article" | "website";
  siteName: string;
}

/** The stylesheet's path; its content is STYLESHEET below, served with a long cache. */
export const STYLESHEET_PATH = "/web/rookery.css";

/**
 * Content-Security-Policy of every page: no script at all, styles, images and media only from
 * this server (the pages make no third-party request), nothing may frame the page but oEmbed's
 * own view.
 */
export const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; media-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The embeddable view may be framed by any site (that is what oEmbed hands out). */
export const EMBED_CSP = PAGE_CSP.replace("frame-ancestors 'none'", "frame-ancestors *");

/** The shell of every page: landmarks, a skip link, the meta of previews, the stylesheet. */
export function layout(meta: PageMeta, main: Safe, lang = "en"): string {
  const description = meta.description.length > 300 ? `${meta.description.slice(0, 299)}…` : meta.description;
  return html`<!DOCTYPE html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${meta.title}</title>
<meta name="description" content="${description}">
<link rel="canonical" href="${meta.canonical}">
${meta.activity ? html`<link rel="alternate" type="application/activity+json" href="${meta.activity}">` : ""}
${meta.feed ? html`<link rel="alternate" type="application/rss+xml" href="${meta.feed}">` : ""}
${meta.oembed ? html`<link rel="alternate" type="application/json+oembed" href="${meta.oembed}">` : ""}
<meta property="og:site_name" content="${meta.siteName}">
<meta property="og:type" content="${meta.type}">
<meta property="og:title" content="${meta.title}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${meta.canonical}">
${meta.image ? html`<meta property="og:image" content="${meta.image}">` : ""}
<meta name="twitter:card" content="${meta.largeImage ? "summary_large_image" : "summary"}">
<meta name="twitter:title" content="${meta.title}">
<meta name="twitter:description" content="${description}">
${meta.image ? html`<meta name="twitter:image" content="${meta.image}">` : ""}
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="icon" href="/favicon.ico" type="image/png">
<link rel="icon" href="data:,">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site"><a href="/">${meta.siteName}</a></header>
<main id="main">
${main}
</main>
</body>
</html>
`.value;
}

/** One small stylesheet: readable on a phone, light and dark by the reader's setting; the members' pages add theirs. */
export const STYLESHEET = `:root{color-scheme:light dark;--bg:#fff;--fg:#1b1b1f;--muted:#5b5b66;--line:#dedee6;--link:#2b59c3;--card:#f6f6f9}
@media (prefers-color-scheme:dark){:root{--bg:#17171c;--fg:#ececf1;--muted:#a3a3b0;--line:#32323c;--link:#8cb0ff;--card:#202028}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--link)}main{max-width:40rem;margin:0 auto;padding:0 1rem 3rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem}
header.site{max-width:40rem;margin:0 auto;padding:1rem;font-weight:600}header.site a{color:var(--fg);text-decoration:none}
.profile .header{width:100%;aspect-ratio:3/1;object-fit:cover;border-radius:.5rem;background:var(--card)}
.profile .avatar{width:5rem;height:5rem;border-radius:.5rem;margin-top:-2.5rem;border:3px solid var(--bg);background:var(--card)}
.handle,.meta,.counts{color:var(--muted);font-size:.9rem}.counts{display:flex;gap:1rem;list-style:none;padding:0}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.fields dt{font-weight:600}dl.fields dd{margin:0;overflow-wrap:anywhere}
article.status{border-top:1px solid var(--line);padding:1rem 0}article.status.focus{font-size:1.1rem}
article.status header{display:flex;gap:.75rem;align-items:center}article.status header img{width:3rem;height:3rem;border-radius:.4rem}
.content{overflow-wrap:anywhere}.media{display:grid;gap:.5rem;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr))}
.media img,.media video{width:100%;height:auto;border-radius:.4rem}.media audio{width:100%}
details.cw summary{cursor:pointer;color:var(--muted)}.poll ul{list-style:none;padding:0}.poll li{margin:.25rem 0}
.boosted{color:var(--muted);font-size:.9rem;margin:0 0 .5rem}blockquote.quote{border:1px solid var(--line);border-radius:.5rem;margin:.75rem 0;padding:.75rem}nav.pages{display:flex;justify-content:space-between;padding:1rem 0}
${MEMBER_PAGES_STYLE}`;
