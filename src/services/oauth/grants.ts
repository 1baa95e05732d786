import { and, eq, isNull, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import type { ApplicationRow, authorizationCodes } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { digest, randomSecret, safeEqual, sha256Base64Url } from "../../auth/secrets.ts";
import { DEFAULT_SCOPES, isSubset, parseScopes, unknownScopes } from "../../auth/scopes.ts";
import type { AccountService } from "../accounts/accounts.ts";
import { isPrintableAscii, OOB_REDIRECT_URI, redirectTarget, type ApplicationService } from "./applications.ts";
import { redirectUrisOf } from "../../models/applications.ts";
import type { IssuedToken, TokenService } from "./tokens.ts";

export const CODE_LIFETIME_MS = 10 * 60 * 1000;
const MAX_STATE_LENGTH = 2048;

/** An RFC 6749 error with Doorkeeper's wording. */
export class OAuthError extends Error {
  constructor(
    public error: string,
    public description: string,
    public status = 400,
  ) {
    super(description);
  }
}

const DESCRIPTIONS = {
  invalid_client:
    "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
  invalid_grant:
    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.",
  invalid_scope: "The requested scope is invalid, unknown, or malformed.",
  unsupported_grant_type: "The authorization grant type is not supported by the authorization server.",
  invalid_redirect_uri: "The redirect uri included is not valid.",
  unsupported_response_type: "The authorization server does not support this response type.",
  unsupported_response_mode: "The authorization server does not support this response mode.",
  invalid_code_challenge_method: "The code challenge method must be S256 or plain.",
  access_denied: "The resource owner or authorization server denied the request.",
  unauthorized_client: "You are not authorized to revoke this token",
} as const;

export const oauthError = (name: keyof typeof DESCRIPTIONS, status?: number) =>
  new OAuthError(name, DESCRIPTIONS[name], status ?? (name === "invalid_client" ? 401 : name === "unauthorized_client" ? 403 : 400));

export const missingParameter = (name: string) => new OAuthError("invalid_request", `Missing required parameter: ${name}.`);

export const ACCESS_DENIED_DESCRIPTION = DESCRIPTIONS.access_denied;

/** A validated /oauth/authorize request, ready to be shown for consent. */
export interface AuthorizationRequest {
  app: ApplicationRow;
  /** Where the browser goes back to: the registered URI as stored. */
  redirectUri: string;
  /** The redirect_uri as the app sent it; the token request must repeat it (RFC 6749 section 4.1.3). */
  requestedRedirectUri: string;
  scopes: string[];
  state: string | undefined;
  responseMode: "query" | "fragment" | "form_post";
  codeChallenge: string | undefined;
  codeChallengeMethod: "S256" | "plain" | undefined;
}

export interface AuthorizeParams {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  response_mode?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

export interface TokenParams {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  username?: string;
  password?: string;
  scope?: string;
  client_id?: string;
  client_secret?: string;
}

export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  scope: string;
  created_at: number;
}

/** The token endpoint, authorization codes and consent: Doorkeeper's part of Mastodon. */
export class GrantService {
  /** Statements built once (drizzle spends more building a query than SQLite running it). */
  private q;

  constructor(
    private db: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private applications: ApplicationService,
    private tokens: TokenService,
    private accounts: AccountService,
    /** Whether an account signs in with a second factor: the password grant cannot carry one. */
    private requiresSecondFactor: (accountId: number) => boolean | Promise<boolean>,
  ) {
    const { authorizationCodes: codes } = db.tables;
    const orm = db.orm;
    this.q = {
      insert: orm
        .insert(codes)
        .values({
          id: sql.placeholder("id"),
          codeHash: sql.placeholder("codeHash"),
          applicationId: sql.placeholder("applicationId"),
          accountId: sql.placeholder("accountId"),
          redirectUri: sql.placeholder("redirectUri"),
          scopes: sql.placeholder("scopes"),
          codeChallenge: sql.placeholder("codeChallenge"),
          codeChallengeMethod: sql.placeholder("codeChallengeMethod"),
          createdAt: sql.placeholder("createdAt"),
          expiresAt: sql.placeholder("expiresAt"),
        })
        .prepare(),
      byHash: orm.select().from(codes).where(eq(codes.codeHash, sql.placeholder("codeHash"))).prepare(),
      claim: orm
        .update(codes)
        .set({ usedAt: sql.placeholder("now") as unknown as number })
        .where(and(eq(codes.id, sql.placeholder("id")), isNull(codes.usedAt)))
        .prepare(),
      gave: orm
        .update(codes)
        .set({ tokenId: sql.placeholder("tokenId") as unknown as number })
        .where(eq(codes.id, sql.placeholder("id")))
        .prepare(),
    };
  }

  /** Doorkeeper's PreAuthorization checks, in its order; the first failure wins. */
  async validateAuthorization(p: AuthorizeParams): Promise<AuthorizationRequest> {
    if (!p.client_id) throw missingParameter("client_id");
    const app = await this.applications.findByClientId(p.client_id);
    if (!app) throw oauthError("invalid_client");
    // Control characters (CR/LF, tab) are refused, not dropped as URL parsing would: Doorkeeper's
    // URI parser refuses them too, and the redirect must never carry them into a header.
    if (!p.redirect_uri || !isPrintableAscii(p.redirect_uri)) throw oauthError("invalid_redirect_uri");
    const redirectUri = redirectTarget(p.redirect_uri, redirectUrisOf(app));
    // A stored URI from before registration refused non-ASCII cannot go into a Location header.
    if (redirectUri === undefined || !isPrintableAscii(redirectUri)) throw oauthError("invalid_redirect_uri");
    if (!p.response_type) throw missingParameter("response_type");
    if (p.response_type !== "code") throw oauthError("unsupported_response_type");
    const responseMode = p.response_mode || "query";
    if (responseMode !== "query" && responseMode !== "fragment" && responseMode !== "form_post") {
      throw oauthError("unsupported_response_mode");
    }
    const scopes = this.requestedScopes(p.scope, app);
    if (p.state && p.state.length > MAX_STATE_LENGTH) throw new OAuthError("invalid_request", `The state parameter is too long (at most ${MAX_STATE_LENGTH} characters).`);
    let method: "S256" | "plain" | undefined;
    if (p.code_challenge) {
      const m = p.code_challenge_method || "plain";
      if (m !== "S256" && m !== "plain") throw oauthError("invalid_code_challenge_method");
      // RFC 7636: 43 to 128 characters of the unreserved set.
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(p.code_challenge)) throw new OAuthError("invalid_request", "The code challenge is malformed.");
      method = m;
    }
    return {
      app,
      redirectUri,
      requestedRedirectUri: p.redirect_uri,
      scopes,
      state: p.state || undefined,
      responseMode,
      codeChallenge: p.code_challenge || undefined,
      codeChallengeMethod: method,
    };
  }

  /** Scopes asked for, or the default (`read`, when the app has it); must fit the app. */
  private requestedScopes(scope: string | undefined, app: ApplicationRow): string[] {
    const registered = parseScopes(app.scopes);
    let requested = parseScopes(scope);
    if (requested.length === 0) requested = registered.includes(DEFAULT_SCOPES) ? [DEFAULT_SCOPES] : [];
    if (requested.length === 0 || unknownScopes(requested).length > 0 || !isSubset(requested, registered)) {
      throw oauthError("invalid_scope");
    }
    return requested;
  }

  async issueCode(request: AuthorizationRequest, accountId: number): Promise<string> {
    const code = randomSecret();
    const now = this.clock.now();
    await this.q.insert.execute({
      id: this.ids.next(),
      codeHash: digest(code),
      applicationId: request.app.id,
      accountId,
      redirectUri: request.requestedRedirectUri,
      scopes: request.scopes.join(" "),
      codeChallenge: request.codeChallenge ?? null,
      codeChallengeMethod: request.codeChallengeMethod ?? null,
      createdAt: now,
      expiresAt: now + CODE_LIFETIME_MS,
    });
    return code;
  }

  /** POST /oauth/token. */
  async token(p: TokenParams, basic: ClientCredentials): Promise<TokenResponse> {
    const grantType = p.grant_type;
    if (!grantType) throw missingParameter("grant_type");
    if (grantType === "authorization_code") return this.authorizationCodeGrant(p, basic);
    if (grantType === "password") return this.passwordGrant(p, basic);
    if (grantType === "client_credentials") return this.clientCredentialsGrant(p, basic);
    throw oauthError("unsupported_grant_type");
  }

  private async client(p: TokenParams, basic: ClientCredentials): Promise<ApplicationRow> {
    // A Basic header with a client id wins over body parameters (Doorkeeper's order).
    const creds = basic.clientId ? basic : { clientId: p.client_id, clientSecret: p.client_secret };
    const app = await this.applications.authenticateClient(creds.clientId, creds.clientSecret);
    if (!app) throw oauthError("invalid_client");
    return app;
  }

  private async respond(applicationId: number, accountId: number | null, scopes: string[]): Promise<TokenResponse> {
    return tokenBody(await this.tokens.issue(applicationId, accountId, scopes), scopes);
  }

  private async authorizationCodeGrant(p: TokenParams, basic: ClientCredentials): Promise<TokenResponse> {
    if (!p.code) throw missingParameter("code");
    const [found] = (await this.q.byHash.execute({ codeHash: digest(p.code) })) as (typeof authorizationCodes.$inferSelect)[];
    const grant = found?.usedAt === null ? found : undefined;
    if (grant?.codeChallenge && !p.code_verifier) throw missingParameter("code_verifier");
    if (!p.redirect_uri) throw missingParameter("redirect_uri");
    const app = await this.client(p, basic);
    if (found && found.usedAt !== null && found.applicationId === app.id && found.tokenId !== null) {
      // RFC 6749 section 4.1.2: a code presented twice may have been stolen; what it gave is taken back.
      await this.tokens.revokeById(found.tokenId);
    }
    if (!grant || grant.applicationId !== app.id || grant.expiresAt <= this.clock.now()) throw oauthError("invalid_grant");
    if (grant.redirectUri !== p.redirect_uri) throw oauthError("invalid_grant");
    if (grant.codeChallenge) {
      const verifier = p.code_verifier as string;
      const expected = grant.codeChallengeMethod === "S256" ? sha256Base64Url(verifier) : verifier;
      if (!safeEqual(expected, grant.codeChallenge)) throw oauthError("invalid_grant");
    } else if (p.code_verifier) {
      throw oauthError("invalid_grant");
    }
    // Single use even under concurrent redemption: only one UPDATE can flip used_at.
    // The claim, the token and the code's link to it are one transaction: a failure between them
    // leaves the code unused rather than spent on a token that does not exist.
    return this.db.transaction(async () => {
      const claimed = await this.q.claim.execute({ id: grant.id, now: this.clock.now() });
      if (this.db.changes(claimed) !== 1) throw oauthError("invalid_grant");
      const scopes = parseScopes(grant.scopes);
      const issued = await this.tokens.issue(app.id, grant.accountId, scopes);
      await this.q.gave.execute({ id: grant.id, tokenId: issued.auth.tokenId });
      return tokenBody(issued, scopes);
    });
  }

  private async passwordGrant(p: TokenParams, basic: ClientCredentials): Promise<TokenResponse> {
    const app = await this.client(p, basic);
    const accountId = await this.accounts.verifyLogin(p.username ?? "", p.password ?? "");
    // Mastodon's resource_owner_from_credentials answers no one for an account with
    // otp_required_for_login, so Doorkeeper answers as for a wrong password: invalid_grant.
    if (accountId === null || (await this.requiresSecondFactor(accountId))) throw oauthError("invalid_grant");
    return this.respond(app.id, accountId, this.requestedScopes(p.scope, app));
  }

  private async clientCredentialsGrant(p: TokenParams, basic: ClientCredentials): Promise<TokenResponse> {
    const app = await this.client(p, basic);
    return this.respond(app.id, null, this.requestedScopes(p.scope, app));
  }

  /** POST /oauth/revoke (RFC 7009). */
  async revoke(token: string | undefined, p: ClientCredentials, basic: ClientCredentials): Promise<void> {
    const creds = basic.clientId ? basic : p;
    const app = await this.applications.authenticateClient(creds.clientId, creds.clientSecret);
    if (!app) throw oauthError("unauthorized_client");
    if (!token) return;
    if ((await this.tokens.revoke(token, app.id)) === "foreign") throw oauthError("unauthorized_client");
  }
}

export { OOB_REDIRECT_URI };

function tokenBody({ accessToken, auth }: IssuedToken, scopes: string[]): TokenResponse {
  return { access_token: accessToken, token_type: "Bearer", scope: scopes.join(" "), created_at: Math.floor(auth.createdAt / 1000) };
}
