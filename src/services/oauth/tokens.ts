import { and, eq, isNull } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { accessTokens, authorizationCodes } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { digest, randomSecret } from "../../auth/secrets.ts";
import { parseScopes } from "../../auth/scopes.ts";
import type { EventBus } from "../../infra/events.ts";

/** Who a bearer token speaks for. */
export interface Authentication {
  tokenId: number;
  applicationId: number;
  /** Null for an app-only (client_credentials) token. */
  accountId: number | null;
  scopes: string[];
  createdAt: number;
}

export interface IssuedToken {
  accessToken: string;
  auth: Authentication;
}

const CACHE_LIMIT = 10_000;

/** An app an account has let in, as the authorised-apps page lists it (Mastodon's /oauth/authorized_applications). */
export interface AuthorizedApp {
  applicationId: number;
  name: string;
  website: string | null;
  /** Every scope its live tokens hold, once each. */
  scopes: string[];
  /** When it was first let in (its oldest live token). */
  authorizedAt: number;
  tokens: number;
}

export class TokenService {
  /** token digest -> authentication; a hit saves the one query every API request makes. */
  private cache = new Map<string, Authentication>();

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {}

  issue(applicationId: number, accountId: number | null, scopes: string[]): IssuedToken {
    const accessToken = randomSecret();
    const row = {
      id: this.ids.next(),
      tokenHash: digest(accessToken),
      applicationId,
      accountId,
      scopes: scopes.join(" "),
      createdAt: this.clock.now(),
    };
    this.db.insert(accessTokens).values(row).run();
    return { accessToken, auth: toAuth(row) };
  }

  authenticate(accessToken: string): Authentication | null {
    if (accessToken.length === 0 || accessToken.length > 512) return null;
    const hash = digest(accessToken);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const row = this.db
      .select()
      .from(accessTokens)
      .where(and(eq(accessTokens.tokenHash, hash), isNull(accessTokens.revokedAt)))
      .get();
    if (!row) return null;
    const auth = toAuth(row);
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(hash, auth);
    return auth;
  }

  /**
   * RFC 7009: revokes the token when it belongs to the calling app. An unknown or already
   * revoked token is "unknown" (the caller still answers success); another app's is "foreign".
   */
  revoke(accessToken: string, applicationId: number): "revoked" | "unknown" | "foreign" {
    const row = this.db.select().from(accessTokens).where(eq(accessTokens.tokenHash, digest(accessToken))).get();
    if (!row || row.revokedAt !== null) return "unknown";
    if (row.applicationId !== applicationId) return "foreign";
    this.revokeRow(row);
    return "revoked";
  }

  /** Revokes a token by its id (a replayed authorization code takes back what it gave). */
  revokeById(tokenId: number) {
    const row = this.db.select().from(accessTokens).where(eq(accessTokens.id, tokenId)).get();
    if (row && row.revokedAt === null) this.revokeRow(row);
  }

  /** The apps with live tokens of the account, the most recently let in first. */
  authorizedApps(accountId: number): AuthorizedApp[] {
    const rows = this.db.$client
      .query<{ applicationId: number; name: string; website: string | null; scopes: string; authorizedAt: number; lastAt: number; tokens: number }, [number]>(
        `SELECT a.id AS applicationId, a.name, a.website, group_concat(t.scopes, ' ') AS scopes, min(t.created_at) AS authorizedAt, max(t.created_at) AS lastAt, count(*) AS tokens
         FROM oauth_access_tokens t JOIN applications a ON a.id = t.application_id
         WHERE t.account_id = ? AND t.revoked_at IS NULL GROUP BY a.id ORDER BY lastAt DESC, a.id DESC`,
      )
      .all(accountId);
    return rows.map(({ lastAt: _, ...r }) => ({ ...r, scopes: [...new Set(parseScopes(r.scopes))] }));
  }

  /**
   * Takes back everything an app holds of the account (Doorkeeper's revoke_all_for, as
   * Mastodon's authorised-apps page does): its live tokens, and the codes it was given and has
   * not exchanged yet. Answers how many tokens were revoked; 0 when it held none.
   */
  revokeApp(accountId: number, applicationId: number): number {
    const rows = this.db
      .select()
      .from(accessTokens)
      .where(and(eq(accessTokens.accountId, accountId), eq(accessTokens.applicationId, applicationId), isNull(accessTokens.revokedAt)))
      .all();
    this.db
      .update(authorizationCodes)
      .set({ usedAt: this.clock.now() })
      .where(and(eq(authorizationCodes.accountId, accountId), eq(authorizationCodes.applicationId, applicationId), isNull(authorizationCodes.usedAt)))
      .run();
    for (const row of rows) this.revokeRow(row);
    return rows.length;
  }

  private revokeRow(row: typeof accessTokens.$inferSelect) {
    this.db.update(accessTokens).set({ revokedAt: this.clock.now() }).where(eq(accessTokens.id, row.id)).run();
    this.cache.delete(row.tokenHash);
    // Its push subscriptions go with it, its streams are closed (consequences.ts).
    this.events.emit({ type: "token.revoked", tokenId: row.id, accountId: row.accountId });
  }
}

function toAuth(row: { id: number; applicationId: number; accountId: number | null; scopes: string; createdAt: number }): Authentication {
  return {
    tokenId: row.id,
    applicationId: row.applicationId,
    accountId: row.accountId,
    scopes: parseScopes(row.scopes),
    createdAt: row.createdAt,
  };
}
