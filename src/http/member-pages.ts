import type { AppContext } from "../context.ts";
import type { AccountRow, UserRow } from "../db/schema.ts";
import { ApiError } from "../errors.ts";
import { memberErrorPage, memberLayout, type Flash, type NavItem, type PageView } from "../web/member-layout.ts";
import { input } from "./input.ts";
import { cookie, fromOwnPages, SESSION_COOKIE } from "./oauth-forms.ts";
import { str, type Params } from "./params.ts";

/**
 * The machinery of the signed-in pages (/settings, /admin): who is signed in (the web session
 * of /oauth/sign_in), what their role lets them see, the ticket every form carries, the notice
 * a POST leaves for the page it redirects to, and the layout. Route modules (settings-*.ts,
 * admin-*.ts) give it a page to render or an action to do and call services only.
 */

/** Mastodon's roles, simplified (users.role); each may do what the ones before it may. */
export type Role = "user" | "moderator" | "admin" | "owner";
const RANK: Record<Role, number> = { user: 0, moderator: 1, admin: 2, owner: 3 };

/** Whether `role` (as stored; unknown reads as user) is at least `need`. */
export function hasRole(role: string, need: Role): boolean {
  return (RANK[role as Role] ?? 0) >= RANK[need];
}

export interface Viewer {
  account: AccountRow;
  user: UserRow;
  role: Role;
  /** The session cookie's secret: this browser's sign-in (the sessions page marks it). */
  session: string;
}

/** What a page is rendered from. */
export interface PageRequest {
  viewer: Viewer;
  request: Request;
  /** The query's parameters. */
  params: Params;
  /** The ticket for the page's forms (csrfField). */
  csrf: string;
}

export type { PageView };
export type Render = (page: PageRequest) => PageView | Promise<PageView>;

export interface ActionRequest {
  viewer: Viewer;
  request: Request;
  /** The form's fields (and the query's). */
  params: Params;
}

/** What an action did: the notice shown on the page it redirects to (the page it came from unless `to`). */
export interface Done {
  /** None for an action that leaves the pages (signing out). */
  notice?: string;
  to?: string;
  /** Cookies to set with the redirect (a new session after a password change). */
  cookies?: string[];
  /**
   * A page to answer with at once (with the notice) instead of the redirect: what must be shown
   * once and never stored (new recovery codes), which a page after the redirect could not show.
   */
  show?: PageView;
}

export type Act = (action: ActionRequest) => Done | Promise<Done>;

export interface PageArea {
  /** Its name, in the title and the navigation's label. */
  name: string;
  /** Its first page, where a refused ticket's page and a signed-out POST lead. */
  root: string;
  /** The least role that sees the area at all. */
  role: Role;
  /** The navigation, each link with the least role that sees it (the area's otherwise). */
  nav: (NavItem & { role?: Role })[];
}

/** Page tickets: bound to the browser's session, valid for a day (a form left open over lunch still posts). */
const TICKET = "page";
const TICKET_LIFETIME_S = 24 * 60 * 60;
const FLASH_COOKIE = "_rookery_flash";

export const MEMBER_PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "private, no-store",
  "x-frame-options": "DENY",
  // Not no-referrer: browsers then post forms with `Origin: null`, which the origin check refuses.
  "referrer-policy": "same-origin",
  // No script at all: the pages are forms; styles and images from this server only.
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
};

export class MemberPages {
  private secure: boolean;

  constructor(
    private ctx: AppContext,
    private area: PageArea,
  ) {
    this.secure = ctx.config.publicUrl.startsWith("https://");
  }

  /** The signed-in viewer, or null (no session, an expired one, an account gone). */
  async viewerOf(request: Request): Promise<Viewer | null> {
    const session = cookie(request, SESSION_COOKIE);
    const accountId = await this.ctx.services.webSessions.accountFor(session);
    if (accountId === null || session === undefined) return null;
    const [account, user] = await Promise.all([this.ctx.services.accounts.get(accountId), this.ctx.services.accounts.getUser(accountId)]);
    if (!account || !user) return null;
    return { account, user, role: (user.role in RANK ? user.role : "user") as Role, session };
  }

  /**
   * The viewer when they may see what needs `role` (the area's by default); otherwise the answer
   * to give: the sign-in (coming back here afterwards) or a 403 page.
   */
  async guard(request: Request, role: Role = this.area.role): Promise<Viewer | Response> {
    const viewer = await this.viewerOf(request);
    if (!viewer) {
      const url = new URL(request.url);
      const back = request.method === "GET" ? `${url.pathname}${url.search}` : this.area.root;
      return this.redirect(`/oauth/sign_in?return_to=${encodeURIComponent(back)}`);
    }
    if (!hasRole(viewer.role, role)) return this.refuse(403, "Forbidden", "You are not allowed to see this page.");
    return viewer;
  }

  /** GET of a page. */
  async show(c: { request: Request }, render: Render, role?: Role): Promise<Response> {
    const viewer = await this.guard(c.request, role);
    if (viewer instanceof Response) return viewer;
    const flash = await this.takeFlash(c.request);
    return this.renderPage(c.request, viewer, render, 200, flash.message, flash.clear);
  }

  /**
   * POST of a form: signed in, from this server's pages (Origin), with a ticket minted for this
   * session, by a viewer with the role; then the action, and a redirect (303) to the page with
   * its notice. A refusal of the action's (ApiError) shows the page again with the error and
   * the error's status; nothing was done.
   */
  async act(c: { request: Request; body?: unknown }, act: Act, render: Render, role?: Role): Promise<Response> {
    const viewer = await this.guard(c.request, role);
    if (viewer instanceof Response) return viewer;
    if (!fromOwnPages(c.request, this.ctx.config.publicUrl)) return this.refuse(403, "Forbidden", "The request did not come from this server's pages.");
    let params: Params;
    try {
      params = input(c);
    } catch (e) {
      if (e instanceof ApiError) return this.renderPage(c.request, viewer, render, e.status, { kind: "alert", text: e.message });
      throw e;
    }
    const ticket = await this.ctx.services.tickets.verify<{ sub?: string }>(TICKET, typeof params.authenticity_token === "string" ? params.authenticity_token : undefined);
    if (!ticket) return this.renderPage(c.request, viewer, render, 422, { kind: "alert", text: "Your form expired or was incomplete. Please try again." });
    if (!this.ctx.services.tickets.isBoundTo(ticket, viewer.session) || ticket.sub !== String(viewer.account.id)) {
      return this.refuse(403, "Forbidden", "This form was opened in another browser or sign-in. Please open the page again.");
    }
    let done: Done;
    try {
      done = await act({ viewer, request: c.request, params });
    } catch (e) {
      if (e instanceof ApiError) return this.renderPage(c.request, viewer, render, e.status, { kind: "alert", text: e.message });
      throw e;
    }
    if (done.show) {
      const page = done.show;
      return this.renderPage(c.request, viewer, () => page, 200, done.notice === undefined ? null : { kind: "notice", text: done.notice });
    }
    const to = done.to ?? new URL(c.request.url).pathname;
    const flash = done.notice === undefined ? [] : [await this.flashCookie({ kind: "notice", text: done.notice })];
    return this.redirect(to, [...flash, ...(done.cookies ?? [])]);
  }

  /** A page of this server's (303 after a POST: the browser GETs it). */
  redirect(path: string, cookies: string[] = []): Response {
    const headers = new Headers({ location: `${this.ctx.config.publicUrl}${path}`, "cache-control": "no-store" });
    for (const c of cookies) headers.append("set-cookie", c);
    return new Response(null, { status: 303, headers });
  }

  refuse(status: number, title: string, message: string): Response {
    return new Response(memberErrorPage(title, message, this.ctx.config.instanceTitle), { status, headers: MEMBER_PAGE_HEADERS });
  }

  /** A ticket for the viewer's forms: bound to their session cookie and naming their account. */
  ticketFor(viewer: Viewer): Promise<string> {
    return this.ctx.services.tickets.sign(TICKET, { sub: String(viewer.account.id) }, TICKET_LIFETIME_S, viewer.session);
  }

  private async renderPage(request: Request, viewer: Viewer, render: Render, status: number, flash: Flash | null, clearFlash?: string): Promise<Response> {
    const csrf = await this.ticketFor(viewer);
    const view = await render({ viewer, request, params: request.method === "GET" ? input({ request }) : {}, csrf });
    const path = new URL(request.url).pathname;
    const nav = this.area.nav.filter((item) => hasRole(viewer.role, item.role ?? this.area.role));
    // The link of the page, or of the section it is in (/settings/imports/1 marks Import).
    const current = nav.map((n) => n.href).filter((href) => path === href || path.startsWith(`${href}/`)).sort((a, b) => b.length - a.length)[0] ?? path;
    const body = memberLayout({
      title: view.title,
      body: view.body,
      area: this.area.name,
      siteName: this.ctx.config.instanceTitle,
      who: `@${viewer.account.username}`,
      nav,
      current,
      csrf,
      flash,
    });
    const headers = new Headers(MEMBER_PAGE_HEADERS);
    if (clearFlash) headers.append("set-cookie", clearFlash);
    return new Response(body, { status, headers });
  }

  /** The notice left by the POST before the redirect, signed so that no one else can word one; read once. */
  private async flashCookie(flash: Flash): Promise<string> {
    const value = await this.ctx.services.tickets.sign("flash", { text: flash.text, kind: flash.kind }, 5 * 60);
    return `${FLASH_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=300${this.secure ? "; Secure" : ""}`;
  }

  private async takeFlash(request: Request): Promise<{ message: Flash | null; clear?: string }> {
    const value = cookie(request, FLASH_COOKIE);
    if (value === undefined) return { message: null };
    const clear = `${FLASH_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${this.secure ? "; Secure" : ""}`;
    const payload = await this.ctx.services.tickets.verify<{ text?: unknown; kind?: unknown }>("flash", value);
    if (!payload || typeof payload.text !== "string") return { message: null, clear };
    return { message: { text: payload.text, kind: payload.kind === "alert" ? "alert" : "notice" }, clear };
  }
}

/** A text field of a form, trimmed; undefined when absent. */
export function field(params: Params, name: string): string | undefined {
  return str(params[name], name)?.trim();
}

/** A password as typed: never trimmed (a space may be part of it). */
export function secret(params: Params, name: string): string | undefined {
  return str(params[name], name);
}
