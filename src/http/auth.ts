import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { grants } from "../auth/scopes.ts";
import type { Authentication } from "../services/oauth/tokens.ts";
import { getMeta } from "./request-meta.ts";

export const invalidToken = () =>
  new ApiError(401, "The access token is invalid", {}, {
    "www-authenticate": 'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"',
  });
export const outsideScopes = () => new ApiError(403, "This action is outside the authorized scopes");
export const userRequired = () => new ApiError(422, "This method requires an authenticated user");
export const whitelistRequired = () => new ApiError(401, "This API requires an authenticated user");
/** Api::BaseController#require_user! for a user staff have not approved yet. */
export const pendingApproval = () => new ApiError(403, "Your login is currently pending approval");

/** The token from `Authorization: Bearer`, else the `access_token` query parameter (Doorkeeper's order). */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header) {
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    return m ? (m[1] as string).trim() : null;
  }
  const url = request.url;
  const q = url.indexOf("?");
  if (q >= 0 && url.includes("access_token=", q)) return new URLSearchParams(url.slice(q + 1)).get("access_token");
  return null;
}

/**
 * The request's authentication, as the edge found it before routing (edge.ts: the token's read
 * is asynchronous, these checks are not). A token that was sent but is unknown or revoked is an
 * error even where no token is needed: the client should learn its token died.
 */
export function authentication(_ctx: AppContext, request: Request): Authentication | null {
  const meta = getMeta(request);
  if (meta.refusedToken) throw invalidToken();
  if (meta.auth !== undefined) return meta.auth;
  // Handed to the router without the edge: a token it carries was never read.
  if (bearerToken(request) !== null) throw new Error("the request's token was not authenticated before routing (edge.ts)");
  return null;
}

/** One scope, or several of which any will do (verify_credentials also takes `profile`). */
export type ScopeRequirement = string | readonly string[] | undefined;

function checkScope(auth: Authentication, scope: ScopeRequirement) {
  if (scope === undefined) return;
  const anyOf = typeof scope === "string" ? [scope] : scope;
  if (!anyOf.some((s) => grants(auth.scopes, s))) throw outsideScopes();
}

export interface UserAuth extends Authentication {
  accountId: number;
}

/** A token acting for a user, with `scope` (or a scope that covers it). */
export function requireUser(ctx: AppContext, request: Request, scope?: ScopeRequirement): UserAuth {
  const auth = authentication(ctx, request);
  if (!auth) throw invalidToken();
  checkScope(auth, scope);
  if (auth.accountId === null) throw userRequired();
  // Mastodon's require_user!: a suspended account's login is disabled, a sign-up waits for
  // approval (read with the token, and kept with it: TokenService).
  if (auth.refusal) throw new ApiError(403, auth.refusal);
  return auth as UserAuth;
}

/** Any valid token (an app's own, or a user's), with `scope`. */
export function requireToken(ctx: AppContext, request: Request, scope?: ScopeRequirement): Authentication {
  const auth = authentication(ctx, request);
  if (!auth) throw invalidToken();
  checkScope(auth, scope);
  return auth;
}

/**
 * Public reads: no token is fine (unless the instance is in whitelist mode); a token that is
 * sent must be valid and carry the scope.
 */
export function optionalUser(ctx: AppContext, request: Request, scope?: ScopeRequirement): Authentication | null {
  const auth = authentication(ctx, request);
  if (auth) checkScope(auth, scope);
  if (ctx.config.whitelistMode && (!auth || auth.accountId === null)) throw whitelistRequired();
  // The pages a whitelisted server keeps for members are not for those still waiting to be one.
  if (ctx.config.whitelistMode && auth?.pending) throw pendingApproval();
  return auth;
}

/** For the rate limiter: the account a valid token acts for, else null. Never throws. */
export function peekAccountId(ctx: AppContext, request: Request): number | null {
  try {
    return authentication(ctx, request)?.accountId ?? null;
  } catch {
    return null;
  }
}

/** The viewing account's id, or null for anonymous and app-only callers. */
export function viewerId(auth: Authentication | null): number | null {
  return auth?.accountId ?? null;
}
