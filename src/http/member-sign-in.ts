import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { input } from "./input.ts";
import { cookie, FORM_COOKIE, formSession, fromOwnPages, SESSION_COOKIE, signInOrigin, signInThrottled } from "./oauth-forms.ts";
import { errorPage, loginPage, PAGE_HEADERS, pendingPage, twoFactorPage } from "./oauth-pages.ts";
import { limitHeaders, pendingSignIn, secondStep } from "./two-factor-sign-in.ts";
import { str } from "./params.ts";

/** Where a member goes after signing in: a path of this server only (never `//host` or a URL). */
export function safeReturn(value: string | undefined): string {
  return value && value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\") ? value : "/";
}

/**
 * The sign-in of the public pages (`/oauth/sign_in`, linked from the about page and from pages
 * that WHITELIST_MODE keeps for members): the same form, CSRF ticket bound to the browser's
 * form cookie, Origin check and sign-in throttle as the OAuth sign-in, and the same web session
 * cookie. It grants no token: it only lets the browser read the pages as a member.
 */
export function memberSignInRoutes(ctx: AppContext) {
  const { services, config } = ctx;
  const secure = config.publicUrl.startsWith("https://");
  const server = new URL(config.publicUrl).host;

  const page = (body: string, status: number, cookies: (string | undefined)[] = [], extra: Record<string, string> = {}) => {
    const headers = new Headers({ ...PAGE_HEADERS, ...extra });
    for (const c of cookies) if (c) headers.append("set-cookie", c);
    return new Response(body, { status, headers });
  };
  const form = async (request: Request, returnTo: string, status = 200, error?: string, login?: string, extra: Record<string, string> = {}) => {
    const session = formSession(request, secure);
    const csrf = await services.tickets.sign("login", {}, 60 * 60, session.value);
    return page(loginPage({ appName: server, csrf, oauth: { return_to: returnTo }, error, login, member: { server } }), status, [session.setCookie], extra);
  };
  const codeForm = (ticket: string, status = 200, error?: string, extra: Record<string, string> = {}) =>
    page(twoFactorPage({ action: "/oauth/sign_in/two_factor", ticket, error, appName: server, member: true }), status, [], extra);
  const signedIn = async (request: Request, accountId: number, returnTo: string) => {
    const session = await services.webSessions.create(accountId, signInOrigin(request));
    const headers = new Headers({ location: `${config.publicUrl}${returnTo}`, "cache-control": "no-store" });
    headers.append("set-cookie", `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax; Max-Age=1209600${secure ? "; Secure" : ""}`);
    return new Response(null, { status: 303, headers });
  };

  return new Elysia()
    .get("/oauth/sign_in", async (c) => {
      const returnTo = safeReturn(str(input(c).return_to, "return_to"));
      if ((await services.webSessions.accountFor(cookie(c.request, SESSION_COOKIE))) !== null) return Response.redirect(`${config.publicUrl}${returnTo}`, 303);
      return form(c.request, returnTo);
    })
    .post("/oauth/sign_in", async (c) => {
      const p = input(c);
      const returnTo = safeReturn(str(p.return_to, "return_to"));
      if (!fromOwnPages(c.request, config.publicUrl)) return page(errorPage("The request did not come from this server's pages."), 403);
      const token = await services.tickets.verify("login", str(p.authenticity_token, "authenticity_token"));
      if (!token) return form(c.request, returnTo, 422, "Your sign-in form expired. Please try again.");
      if (!services.tickets.isBoundTo(token, cookie(c.request, FORM_COOKIE))) return form(c.request, returnTo, 403, "Your sign-in form was opened in another browser. Please try again.");
      const loginName = str(p.username, "username") ?? "";
      const throttled = await signInThrottled(ctx, c.request, loginName);
      if (throttled) {
        const limits = { "x-ratelimit-limit": throttled.limit, "x-ratelimit-remaining": throttled.remaining, "x-ratelimit-reset": throttled.reset };
        return form(c.request, returnTo, 429, "Too many sign-in attempts. Please try again later.", loginName, limits);
      }
      const accountId = await services.accounts.verifyLogin(loginName, str(p.password, "password") ?? "");
      if (accountId === null) return form(c.request, returnTo, 401, "Invalid username, e-mail address or password.", loginName);
      if ((await services.accounts.getUser(accountId))?.approved === false) return page(pendingPage(), 403);
      if (await services.twoFactor.enabled(accountId)) return codeForm(await pendingSignIn(ctx, accountId, { return_to: returnTo }, cookie(c.request, FORM_COOKIE)!));
      return signedIn(c.request, accountId, returnTo);
    })
    .post("/oauth/sign_in/two_factor", async (c) => {
      const step = await secondStep(ctx, c.request, input(c));
      if (step.kind === "refused") return page(errorPage(step.error), step.status);
      if (step.kind === "restart") return form(c.request, "/", step.status, step.error);
      if (step.kind === "again") return codeForm(step.ticket, step.status, step.error, limitHeaders(step.limits));
      return signedIn(c.request, step.accountId, safeReturn(step.next.return_to));
    });
}
