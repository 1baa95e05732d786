import type sanitizeHtml from "sanitize-html";

/**
 * sanitize-html (with postcss and htmlparser2, 3 MB of an idle server) is loaded at the first
 * remote HTML to clean, by require: a server that has not federated yet never needs it.
 */
let loaded: typeof sanitizeHtml | null = null;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sanitizer = () => (loaded ??= require("sanitize-html") as typeof sanitizeHtml);

/**
 * HTML received from other servers (a remote profile's note, its field values), cleaned the
 * way Mastodon cleans it before showing it: its `Sanitize::Config::MASTODON_STRICT`
 * (app/lib/sanitize_config.rb). What survives:
 *
 * - the elements of that config: paragraphs and line breaks, links, spans, the inline
 *   formatting (b strong i em u s del sub sup code abbr), pre and blockquote, headings h1-h5,
 *   lists, ruby annotations; `lang` on any of them;
 * - links whose href is absolute with one of Mastodon's link protocols, given
 *   `rel="nofollow noopener" target="_blank"` (keeping only `tag` of what they said); a link without such an href
 *   (none, relative, `javascript:`, `data:`...) becomes its bare text; with `httpLinksOnly`
 *   (a profile's field values) only http(s) links stay;
 * - classes that carry meaning in federated HTML (microformats `h-*`, `p-*`, `u-*`, `dt-*`,
 *   `e-*`; `mention`, `hashtag`; `ellipsis`, `invisible`; `quote-inline`) on a, span and p;
 * - an image becomes a link to it reading "[🖼  alt]", as Mastodon shows it.
 *
 * Every other element is dropped and its text kept (block ones leave a space, so words do
 * not run together), except those whose content is not text (script, style, iframe, svg,
 * math...), which go whole. Comments go; all text is escaped again.
 *
 * Not reproduced: Mastodon turns MathML carrying a TeX or plain-text annotation into that
 * text; here MathML goes whole, like other non-text content.
 */
export function sanitizeRemoteHtml(html: string, options: { httpLinksOnly?: boolean } = {}): string {
  const protocols = options.httpLinksOnly ? HTTP_PROTOCOLS : LINK_PROTOCOLS;
  const state = { textOnlyDepth: 0 };
  const cleaned = sanitizer()(html, {
    ...OPTIONS,
    allowedSchemes: [...protocols],
    // A link with an unacceptable href keeps only its text (Mastodon replaces the node with
    // its text): everything opened inside it is stripped down to text as well.
    onOpenTag(name, attribs) {
      if (state.textOnlyDepth > 0) state.textOnlyDepth++;
      else if (name === "a" && linkProtocol(attribs.href, protocols) === undefined) state.textOnlyDepth = 1;
    },
    onCloseTag() {
      if (state.textOnlyDepth > 0) state.textOnlyDepth--;
    },
    transformTags: {
      ...TRANSFORMS,
      img: imageLink(protocols),
      "*": (tagName, attribs) => {
        if (state.textOnlyDepth > 0 && ALLOWED_TAGS.has(tagName)) return { tagName: STRIP, attribs: {} };
        if (tagName === GAP || tagName === STRIP) return { tagName, attribs: {} };
        return { tagName, attribs: cleanAttributes(tagName, attribs, protocols) };
      },
    },
  });
  return cleaned
    .replaceAll(`<${GAP}>`, " ")
    .replaceAll(`</${GAP}>`, " ")
    .replaceAll(`<${STRIP}>`, "")
    .replaceAll(`</${STRIP}>`, "");
}

/** The protocols Mastodon keeps on links (LINK_PROTOCOLS). */
const LINK_PROTOCOLS: ReadonlySet<string> = new Set(["http", "https", "dat", "dweb", "ipfs", "ipns", "ssb", "gopher", "xmpp", "magnet", "gemini"]);
/**
 * Ours, for a remote profile's field values: a field is read as the account's link to
 * somewhere (a site, a page), and every address taken from another server to show as a link
 * is http(s) (src/net/http-url.ts).
 */
const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(["http", "https"]);

const ELEMENTS = [
  "p", "br", "span", "a", "abbr", "del", "s", "pre", "blockquote", "code", "b", "strong", "u", "sub", "sup",
  "i", "em", "h1", "h2", "h3", "h4", "h5", "ul", "ol", "li", "ruby", "rt", "rp",
];

/** Elements removed with their content (Sanitize's `remove_contents` default, plus form text). */
const NON_TEXT = ["iframe", "math", "noembed", "noframes", "noscript", "plaintext", "script", "style", "svg", "xmp", "textarea", "option", "title", "template"];

/**
 * Block elements that are not kept: their content stays, with a space on either side
 * (Sanitize's `whitespace_elements`). They are renamed to the GAP marker.
 *
 * The two markers are allowed tags without attributes, emitted as `<rookery-gap>` and
 * `<rookery-strip>` and replaced afterwards (by spaces, by nothing); no text can produce them,
 * since all text is escaped. They are allowed rather than discarded because sanitize-html
 * forgets to clear a renamed tag's name when it discards it, and would close a later element
 * at the same depth under that name.
 */
const SPACED = ["address", "article", "aside", "dd", "div", "dl", "dt", "footer", "h6", "header", "hgroup", "hr", "nav", "section", "main", "figure", "figcaption", "table", "tr", "td", "th", "caption"];
const GAP = "rookery-gap";
/** The element goes, its text stays. */
const STRIP = "rookery-strip";

const ALLOWED_TAGS = new Set([...ELEMENTS, GAP, STRIP]);

const MICROFORMAT_AND_SEMANTIC_CLASSES = [/^(h|p|u|dt|e)-/, /^(mention|hashtag)$/, /^(ellipsis|invisible)$/, /^quote-inline$/];

/** sanitize-html 2.18 reads `allowedEmptyAttributes`; its published types (2.16) lack it. */
const OPTIONS: sanitizeHtml.IOptions & { allowedEmptyAttributes: string[] } = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: {
    "*": ["lang"],
    a: ["href", "rel", "class", "title", "translate", "target"],
    abbr: ["title"],
    span: ["class", "translate"],
    blockquote: ["cite"],
    ol: ["start", "reversed"],
    li: ["value"],
    p: ["class"],
  },
  allowedClasses: {
    a: MICROFORMAT_AND_SEMANTIC_CLASSES,
    span: MICROFORMAT_AND_SEMANTIC_CLASSES,
    p: MICROFORMAT_AND_SEMANTIC_CLASSES,
  },
  allowedEmptyAttributes: ["reversed"],
  // Checked again by the library after our own check (cleanAttributes, linkProtocol); set per call.
  allowedSchemes: [...LINK_PROTOCOLS],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ["href", "cite", "src"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  nonTextTags: NON_TEXT,
  selfClosing: ["br"],
  parseStyleAttributes: false,
  // Deeply nested markup is flattened to text past this depth rather than kept.
  nestingLimit: 64,
};

const TRANSFORMS: Record<string, sanitizeHtml.Transformer> = {
  ...Object.fromEntries(SPACED.map((tag) => [tag, () => ({ tagName: GAP, attribs: {} })])),
};

/** Mastodon shows an image as a link to it: "[🖼  alt]", or the start of its address. */
function imageLink(protocols: ReadonlySet<string>): sanitizeHtml.Transformer {
  return (_tagName, attribs): sanitizeHtml.Tag => {
    const src = attribs.src ?? "";
    const alt = attribs.alt?.trim();
    const label = `[🖼  ${alt ? alt : shortUrl(src)}]`;
    if (linkProtocol(src, protocols) === undefined) return { tagName: STRIP, attribs: {}, text: label };
    return { tagName: "a", attribs: { href: src }, text: label };
  };
}

/** The lowercased protocol of an absolute href with one of `protocols`, or undefined. */
function linkProtocol(href: string | undefined, protocols: ReadonlySet<string>): string | undefined {
  if (href === undefined) return undefined;
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(href);
  if (!match) return undefined; // none, relative, protocol-relative, or leading junk
  const protocol = match[1]!.toLowerCase();
  if (!protocols.has(protocol)) return undefined;
  if ((protocol === "http" || protocol === "https") && !URL.canParse(href)) return undefined;
  return protocol;
}

function cleanAttributes(tagName: string, attribs: sanitizeHtml.Attributes, protocols: ReadonlySet<string>): sanitizeHtml.Attributes {
  const out: sanitizeHtml.Attributes = { ...attribs };
  if (out.translate !== undefined && out.translate !== "no") delete out.translate;
  if (tagName === "a") {
    // Mastodon's LINK_REL_TRANSFORMER: of what the sender said only `tag` stays (hashtag links).
    const tag = (attribs.rel ?? "").split(/\s+/).includes("tag") ? ["tag"] : [];
    out.rel = [...tag, "nofollow", "noopener"].join(" ");
    out.target = "_blank";
  }
  if (tagName === "blockquote" && out.cite !== undefined && linkProtocol(out.cite, protocols) === undefined) delete out.cite;
  return out;
}

function shortUrl(url: string): string {
  const rest = url.replace(/^https?:\/\/(www\.)?/, "");
  return rest.length > 30 ? `${rest.slice(0, 30)}…` : rest;
}
