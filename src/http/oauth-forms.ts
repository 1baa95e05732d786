import { randomSecret } from "../auth/secrets.ts";
import type { AppContext } from "../context.ts";
import type { Verdict } from "../infra/rate-limits.ts";
import { formatIp } from "../net/ip.ts";
import type { SignInOrigin } from "../services/oauth/web-sessions.ts";
import { getMeta } from "./request-meta.ts";

/**
 * What ties a form post of the authorization pages to the browser the form was shown in.
 * The form cookie is a random value the page's tickets are bound to (TicketSigner.isBoundTo);
 * the Origin check refuses posts that did not come from our own pages at all.
 */

export const FORM_COOKIE = "_rookery_form";
/** The signed-in browser (a web session), set by the sign-in forms. */
export const SESSION_COOKIE = "_rookery_session";
const FORM_COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export function cookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    // Our cookie values are base64url: nothing to decode, and a malformed one is just wrong.
    if (k === name) return v.join("=");
  }
  return undefined;
}

export interface FormSession {
  /** The value the page's tickets are bound to. */
  value: string;
  /** Set-Cookie for a browser that did not have the cookie yet. */
  setCookie?: string;
}

/**
 * The browser's form cookie, or a new one. Kept while it exists so that several open tabs
 * stay valid; a browser-session cookie, scoped to the pages that post forms.
 */
export function formSession(request: Request, secure: boolean, scope: { name: string; path: string } = { name: FORM_COOKIE, path: "/oauth" }): FormSession {
  const existing = cookie(request, scope.name);
  if (existing !== undefined && FORM_COOKIE_VALUE.test(existing)) return { value: existing };
  const value = randomSecret();
  return { value, setCookie: `${scope.name}=${value}; Path=${scope.path}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}` };
}

/**
 * Whether a form post came from this server's pages: browsers send Origin with every form
 * post, and our Referrer-Policy (same-origin) keeps Referer for those that do not. A post
 * with neither, with `Origin: null`, or from another site is refused.
 */
export function fromOwnPages(request: Request, publicUrl: string): boolean {
  let source = request.headers.get("origin");
  if (source === null) {
    const referer = request.headers.get("referer");
    if (referer === null) return false;
    try {
      source = new URL(referer).origin;
    } catch {
      return false;
    }
  }
  if (source === publicUrl) return true;
  // Served under another name than PUBLIC_URL (a LAN address): the browser still names the host it posted to.
  const host = request.headers.get("host");
  return host !== null && (source === `http://${host}` || source === `https://${host}`);
}

/** Counts a password about to be checked; the verdict when it is one too many (null otherwise). */
export async function signInThrottled(ctx: AppContext, request: Request, loginName: string): Promise<Verdict | null> {
  if (!ctx.config.rateLimits) return null;
  const verdict = await ctx.services.signInLimits.check({ method: "POST", path: "", ip: getMeta(request).ip, accountId: null, login: await ctx.services.accounts.signInKey(loginName) });
  return verdict?.limited ? verdict : null;
}

/** The browser and address a sign-in came from, kept with its session for the sessions page. */
export function signInOrigin(request: Request): SignInOrigin {
  const ip = getMeta(request).ip;
  return { userAgent: request.headers.get("user-agent"), ip: ip ? formatIp(ip) : null };
}
