import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ALL_SCOPES } from "../auth/scopes.ts";
import {
  ACCESS_DENIED_DESCRIPTION,
  OAuthError,
  OOB_REDIRECT_URI,
  type AuthorizationRequest,
  type AuthorizeParams,
  type ClientCredentials,
} from "../services/oauth/grants.ts";
import { input } from "./input.ts";
import { cookie, FORM_COOKIE, formSession, fromOwnPages, signInOrigin, signInThrottled } from "./oauth-forms.ts";
import { codePage, consentPage, errorPage, formPostPage, loginPage, PAGE_HEADERS, pendingPage, twoFactorPage } from "./oauth-pages.ts";
import { pendingSignIn, secondStep } from "./two-factor-sign-in.ts";
import { str, type Params } from "./params.ts";
import type { Verdict } from "../infra/rate-limits.ts";

import { SESSION_COOKIE } from "./oauth-forms.ts";
const OAUTH_FIELDS = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "code_challenge", "code_challenge_method"] as const;

function oauthParams(p: Params): AuthorizeParams {
  const out: Record<string, string | undefined> = {};
  for (const k of OAUTH_FIELDS) out[k] = str(p[k], k);
  return out as AuthorizeParams;
}

function html(body: string, status = 200, extra: Record<string, string> = {}, cookies: (string | undefined)[] = []) {
  const headers = new Headers({ ...PAGE_HEADERS, ...extra });
  for (const c of cookies) if (c) headers.append("set-cookie", c);
  return new Response(body, { status, headers });
}

const limitHeaders = (v: Verdict) => ({ "x-ratelimit-limit": v.limit, "x-ratelimit-remaining": v.remaining, "x-ratelimit-reset": v.reset });

function oauthJson(e: OAuthError, state?: string) {
  const body: Record<string, string> = { error: e.error, error_description: e.description };
  if (state) body.state = state;
  return new Response(JSON.stringify(body), {
    status: e.status,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      pragma: "no-cache",
      "www-authenticate": `Bearer realm="Doorkeeper", error="${e.error}", error_description="${e.description}"`,
    },
  });
}

/** Client credentials from `Authorization: Basic base64(id:secret)`, split at the first colon. */
function basicCredentials(request: Request): ClientCredentials {
  const header = request.headers.get("authorization");
  const m = header ? /^Basic\s+(.+)$/.exec(header) : null;
  if (!m) return {};
  let decoded: string;
  try {
    decoded = Buffer.from(m[1] as string, "base64").toString("utf8");
  } catch {
    return {};
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return { clientId: decoded };
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
}

/** The redirect back to the app, with the result in the query, the fragment, or a posted form. */
function redirectResult(request: AuthorizationRequest, result: Record<string, string | undefined>): Response {
  const entries = Object.entries(result).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== "");
  if (request.responseMode === "form_post") {
    return html(formPostPage(request.redirectUri, Object.fromEntries(entries)), 200, {
      "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; form-action *",
    });
  }
  const query = new URLSearchParams(entries).toString();
  let location: string;
  if (request.responseMode === "fragment") location = `${request.redirectUri}#${query}`;
  else location = `${request.redirectUri}${request.redirectUri.includes("?") ? "&" : "?"}${query}`;
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
}

export function oauthRoutes(ctx: AppContext) {
  const { services, config } = ctx;
  const secure = config.publicUrl.startsWith("https:");
  const secureCookie = secure ? "; Secure" : "";
  const foreignPost = () => html(errorPage("The request did not come from this server's pages."), 403);

  const validate = async (params: AuthorizeParams): Promise<AuthorizationRequest | Response> => {
    try {
      return await services.grants.validateAuthorization(params);
    } catch (e) {
      if (e instanceof OAuthError) return html(errorPage(e.description), e.status);
      throw e;
    }
  };

  // Every form a page shows is bound to the browser's form cookie (set here if it had none).
  const consent = async (httpRequest: Request, request: AuthorizationRequest, params: AuthorizeParams, accountId: number, sessionCookie?: string) => {
    const account = await services.accounts.get(accountId);
    if (!account) return html(errorPage("Your session has ended. Please sign in again."), 401);
    const form = formSession(httpRequest, secure);
    const ticket = await services.tickets.sign("consent", { sub: String(accountId), oauth: params }, 10 * 60, form.value);
    return html(
      consentPage({ appName: request.app.name, website: request.app.website, username: account.username, scopes: request.scopes, ticket }),
      200,
      {},
      [sessionCookie, form.setCookie],
    );
  };

  const login = async (
    httpRequest: Request,
    request: AuthorizationRequest,
    params: AuthorizeParams,
    status = 200,
    error?: string,
    loginName?: string,
    headers: Record<string, string> = {},
  ) => {
    const form = formSession(httpRequest, secure);
    const csrf = await services.tickets.sign("login", {}, 60 * 60, form.value);
    return html(loginPage({ appName: request.app.name, csrf, oauth: { ...params }, error, login: loginName }), status, headers, [form.setCookie]);
  };

  const codeForm = (request: AuthorizationRequest, ticket: string, status = 200, error?: string, headers: Record<string, string> = {}) =>
    html(twoFactorPage({ action: "/oauth/authorize/two_factor", ticket, error, appName: request.app.name }), status, headers);

  // The browser is signed in (a web session) and goes on to the consent page.
  const signedIn = async (httpRequest: Request, request: AuthorizationRequest, params: AuthorizeParams, accountId: number) => {
    const session = await services.webSessions.create(accountId, signInOrigin(httpRequest));
    return consent(httpRequest, request, params, accountId, `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax; Max-Age=1209600${secureCookie}`);
  };

  const tooManySignIns = (httpRequest: Request, loginName: string) => signInThrottled(ctx, httpRequest, loginName);

  const decide = async (c: { request: Request; body?: unknown }, deny: boolean) => {
    const p = input(c);
    if (!fromOwnPages(c.request, config.publicUrl)) return foreignPost();
    const ticket = await services.tickets.verify<{ sub: string; oauth: AuthorizeParams; jti?: string; exp?: number }>("consent", str(p.ticket, "ticket"));
    if (!ticket) return html(errorPage("This authorization page has expired. Please start again from the application."), 422);
    if (!services.tickets.isBoundTo(ticket, cookie(c.request, FORM_COOKIE))) {
      return html(errorPage("This authorization page was opened in another browser. Please start again from the application."), 403);
    }
    // One approval gives one answer: a consent page cannot be replayed for more codes.
    if (!services.tickets.claim(ticket.jti, ticket.exp)) {
      return html(errorPage("This authorization page has expired. Please start again from the application."), 422);
    }
    const request = await validate(ticket.oauth);
    if (request instanceof Response) return request;
    if (deny || str(p._method, "_method")?.toLowerCase() === "delete" || str(p.decision, "decision") === "deny") {
      if (request.redirectUri === OOB_REDIRECT_URI) {
        return new Response(JSON.stringify({ error: "access_denied", error_description: ACCESS_DENIED_DESCRIPTION }), {
          status: 400,
          headers: { "content-type": "application/json; charset=utf-8" },
        });
      }
      return redirectResult(request, { error: "access_denied", error_description: ACCESS_DENIED_DESCRIPTION, state: request.state });
    }
    const code = await services.grants.issueCode(request, Number(ticket.sub));
    if (request.redirectUri === OOB_REDIRECT_URI) {
      return new Response(null, { status: 302, headers: { location: `/oauth/authorize/native?code=${encodeURIComponent(code)}`, "cache-control": "no-store" } });
    }
    return redirectResult(request, { code, state: request.state });
  };

  return new Elysia()
    .get("/oauth/authorize", async (c) => {
      const p = input(c);
      const params = oauthParams(p);
      const request = await validate(params);
      if (request instanceof Response) return request;
      const accountId = await services.webSessions.accountFor(cookie(c.request, SESSION_COOKIE));
      if (accountId !== null && str(p.force_login, "force_login") !== "true") return consent(c.request, request, params, accountId);
      return login(c.request, request, params);
    })
    .post("/oauth/authorize/sign_in", async (c) => {
      const p = input(c);
      const params = oauthParams(p);
      const request = await validate(params);
      if (request instanceof Response) return request;
      if (!fromOwnPages(c.request, config.publicUrl)) return foreignPost();
      const token = await services.tickets.verify("login", str(p.authenticity_token, "authenticity_token"));
      if (!token) return login(c.request, request, params, 422, "Your sign-in form expired. Please try again.");
      // A token copied from another browser's form, or sent without the cookie it belongs to.
      if (!services.tickets.isBoundTo(token, cookie(c.request, FORM_COOKIE))) {
        return login(c.request, request, params, 403, "Your sign-in form was opened in another browser. Please try again.");
      }
      const loginName = str(p.username, "username") ?? "";
      const password = str(p.password, "password") ?? "";
      const throttled = await tooManySignIns(c.request, loginName);
      if (throttled) return login(c.request, request, params, 429, "Too many sign-in attempts. Please try again later.", loginName, limitHeaders(throttled));
      const accountId = await services.accounts.verifyLogin(loginName, password);
      if (accountId === null) return login(c.request, request, params, 401, "Invalid username, e-mail address or password.", loginName);
      if ((await services.accounts.getUser(accountId))?.approved === false) return html(pendingPage(), 403);
      if (await services.twoFactor.enabled(accountId)) {
        return codeForm(request, await pendingSignIn(ctx, accountId, { ...params }, cookie(c.request, FORM_COOKIE)!));
      }
      return signedIn(c.request, request, params, accountId);
    })
    .post("/oauth/authorize/two_factor", async (c) => {
      const step = await secondStep(ctx, c.request, input(c));
      if (step.kind === "refused") return html(errorPage(step.error), step.status);
      // Without a good ticket there is no OAuth request to go back to: the app starts again.
      if (step.kind === "restart") return html(errorPage("Your sign-in expired. Please start again from the application."), step.status);
      const params = oauthParams(step.next);
      const request = await validate(params);
      if (request instanceof Response) return request;
      if (step.kind === "again") return codeForm(request, step.ticket, step.status, step.error, step.limits ? limitHeaders(step.limits) : {});
      return signedIn(c.request, request, params, step.accountId);
    })
    .post("/oauth/authorize", (c) => decide(c, false))
    .delete("/oauth/authorize", (c) => decide(c, true))
    .get("/oauth/authorize/native", (c) => {
      const code = str(input(c).code, "code");
      if (!code) return html(errorPage("No authorization code was given."), 400);
      return html(codePage(code));
    })
    .post("/oauth/token", async (c) => {
      const p = input(c);
      if (str(p.grant_type, "grant_type") === "password") {
        const throttled = await tooManySignIns(c.request, str(p.username, "username") ?? "");
        if (throttled) {
          // Mastodon's throttled responder: exactly this type, this body.
          return new Response(JSON.stringify({ error: "Too many requests" }), { status: 429, headers: { "content-type": "application/json", ...limitHeaders(throttled) } });
        }
      }
      try {
        const token = await services.grants.token(
          {
            grant_type: str(p.grant_type, "grant_type"),
            code: str(p.code, "code"),
            redirect_uri: str(p.redirect_uri, "redirect_uri"),
            code_verifier: str(p.code_verifier, "code_verifier"),
            username: str(p.username, "username"),
            password: str(p.password, "password"),
            scope: str(p.scope, "scope"),
            client_id: str(p.client_id, "client_id"),
            client_secret: str(p.client_secret, "client_secret"),
          },
          basicCredentials(c.request),
        );
        return new Response(JSON.stringify(token), {
          headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", pragma: "no-cache" },
        });
      } catch (e) {
        if (e instanceof OAuthError) return oauthJson(e, str(p.state, "state"));
        throw e;
      }
    })
    .post("/oauth/revoke", async (c) => {
      const p = input(c);
      try {
        await services.grants.revoke(str(p.token, "token"), { clientId: str(p.client_id, "client_id"), clientSecret: str(p.client_secret, "client_secret") }, basicCredentials(c.request));
        return {};
      } catch (e) {
        if (e instanceof OAuthError) return oauthJson(e);
        throw e;
      }
    })
    .get("/.well-known/oauth-authorization-server", () => ({
      issuer: `${config.publicUrl}/`,
      authorization_endpoint: `${config.publicUrl}/oauth/authorize`,
      token_endpoint: `${config.publicUrl}/oauth/token`,
      revocation_endpoint: `${config.publicUrl}/oauth/revoke`,
      scopes_supported: ALL_SCOPES,
      response_types_supported: ["code"],
      response_modes_supported: ["query", "fragment", "form_post"],
      grant_types_supported: ["authorization_code", "password", "client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["S256", "plain"],
      service_documentation: "https://docs.joinmastodon.org/",
      app_registration_endpoint: `${config.publicUrl}/api/v1/apps`,
    }));
}
