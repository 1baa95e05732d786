import { html, type Safe } from "./html.ts";
import { STYLESHEET_PATH } from "./layout.ts";

/** A link of an area's navigation; `section` starts a new group with that heading. */
export interface NavItem {
  href: string;
  label: string;
  section?: string;
}

/** A message after a POST (post-redirect-get) or an action that failed. */
export interface Flash {
  text: string;
  kind: "notice" | "alert";
}

/** A page of an area, as a route renders it: its heading and its content. */
export interface PageView {
  title: string;
  body: Safe;
}

export interface MemberPage {
  /** The page's own heading (h1) and the first part of its title. */
  title: string;
  body: Safe;
  /** The area's name: "Settings", "Administration". */
  area: string;
  siteName: string;
  /** The signed-in account, as it is shown in the header: `@alice`. */
  who: string;
  nav: NavItem[];
  /** The path whose nav link is marked current. */
  current: string;
  /** The form ticket of the page, for the sign-out button. */
  csrf: string;
  flash?: Flash | null;
  lang?: string;
}

/** The hidden field that carries a form's ticket (the CSRF protection checks it on every POST). */
export function csrfField(csrf: string): Safe {
  return html`<input type="hidden" name="authenticity_token" value="${csrf}">`;
}

/**
 * The shell of the signed-in pages (/settings, /admin): the public pages' stylesheet and
 * landmarks, a header with who is signed in and a sign-out button, the area's navigation and
 * the page with its notice. No script anywhere: every page is a plain form.
 */
export function memberLayout(page: MemberPage): string {
  const groups: { heading?: string; items: NavItem[] }[] = [];
  for (const item of page.nav) {
    if (item.section !== undefined || groups.length === 0) groups.push({ heading: item.section, items: [] });
    groups[groups.length - 1]!.items.push(item);
  }
  const flash = page.flash
    ? html`<p id="flash" class="notice${page.flash.kind === "alert" ? " alert" : ""}" role="${page.flash.kind === "alert" ? "alert" : "status"}">${page.flash.text}</p>`
    : "";
  return html`<!DOCTYPE html>
<html lang="${page.lang ?? "en"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${page.title} - ${page.area} - ${page.siteName}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="icon" href="/favicon.ico" type="image/png">
</head>
<body class="member">
<a class="skip" href="#main">Skip to content</a>
<header class="site">
<a href="/">${page.siteName}</a>
<span class="who">Signed in as <bdi>${page.who}</bdi></span>
<form class="inline" method="post" action="/settings/sign_out">${csrfField(page.csrf)}<button type="submit" class="secondary">Sign out</button></form>
</header>
<div class="member-grid">
<nav class="area" aria-label="${page.area}">
${groups.map(
  (g) => html`${g.heading ? html`<h2>${g.heading}</h2>` : ""}<ul>
${g.items.map((item) => html`<li><a href="${item.href}"${item.href === page.current ? html` aria-current="page"` : ""}>${item.label}</a></li>
`)}</ul>
`,
)}</nav>
<main id="main">
<h1>${page.title}</h1>
${flash}
${page.body}
</main>
</div>
</body>
</html>
`.value;
}

/** A page for a browser that may not see what it asked for (403) or asked for nothing there (404). */
export function memberErrorPage(title: string, message: string, siteName: string): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} - ${siteName}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body class="member">
<header class="site"><a href="/">${siteName}</a></header>
<main id="main">
<h1>${title}</h1>
<p id="flash" class="notice alert" role="alert">${message}</p>
<p><a href="/settings">Back to your settings</a></p>
</main>
</body>
</html>
`.value;
}
