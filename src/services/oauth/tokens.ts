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
  /**
   * The user signed up under REGISTRATIONS=approval and staff have not approved them yet: the
   * token was issued (as Mastodon issues it), but every request that needs a user is refused.
   */
  pending?: boolean;
  /**
   * Why the token's user may not use the API now (Mastodon's require_user!), or null: a
   * suspended or deleted account's login is disabled, a sign-up waits for approval. Read with
   * the token, in the same statement.
   */
  refusal?: string | null;
}

const DISABLED = "Your login is currently disabled";
const PENDING = "Your login is currently pending approval";

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
  /**
   * token digest -> authentication with its user's standing (suspended, pending, deleted): a hit
   * saves the statement every API request would make. A token revoked here leaves it at once;
   * an account whose standing changes here has its tokens forgotten (forgetAccount, from the
   * events that change it: consequences.ts); another connection's commit empties it.
   */
  private cache = new Map<string, Authentication>();
  /** The cache's digests by account, so that forgetting an account's tokens reads only those. */
  private byAccount = new Map<number, Set<string>>();
  /**
   * SQLite's data_version, which changes when another connection commits: the command line
   * revokes tokens too (suspending an account, resetting its password), and a token it revoked
   * must not live on in this cache. One pragma a lookup, no table read.
   */
  private dataVersion;
  private seenVersion = -1;
  private lookup;

  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {
    this.dataVersion = db.$client.query<{ data_version: number }, []>("PRAGMA data_version");
    this.lookup = db.$client.query<TokenLookup, [string]>(
      `SELECT t.id, t.token_hash AS tokenHash, t.application_id AS applicationId, t.account_id AS accountId, t.scopes, t.created_at AS createdAt,
              a.id IS NOT NULL AS found, a.suspended_at IS NOT NULL AS suspended, u.approved AS approved
       FROM oauth_access_tokens t LEFT JOIN accounts a ON a.id = t.account_id LEFT JOIN users u ON u.account_id = t.account_id
       WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
    );
  }

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
    const version = this.dataVersion.get()?.data_version ?? -1;
    if (version !== this.seenVersion) {
      this.cache.clear();
      this.byAccount.clear();
      this.seenVersion = version;
    }
    const hash = digest(accessToken);
    const cached = this.cache.get(hash);
    // A refused user's token asks again each time (few do, and approval must show at once);
    // an allowed one is refused only through a change that forgets it (forgetAccount, revokeRow).
    if (cached && !cached.refusal) return cached;
    const row = this.lookup.get(hash);
    if (!row) {
      if (cached) this.drop(hash);
      return null;
    }
    const auth = toAuth(row);
    auth.refusal = refusalOf(row);
    if (auth.refusal === PENDING) auth.pending = true;
    if (this.cache.size >= CACHE_LIMIT) this.drop(this.cache.keys().next().value as string);
    this.cache.set(hash, auth);
    if (auth.accountId !== null) {
      let hashes = this.byAccount.get(auth.accountId);
      if (!hashes) this.byAccount.set(auth.accountId, (hashes = new Set()));
      hashes.add(hash);
    }
    return auth;
  }

  private drop(hash: string) {
    const auth = this.cache.get(hash);
    if (!auth) return;
    this.cache.delete(hash);
    const hashes = auth.accountId === null ? undefined : this.byAccount.get(auth.accountId);
    if (hashes && (hashes.delete(hash), hashes.size === 0)) this.byAccount.delete(auth.accountId!);
  }

  /**
   * The account's standing changed (suspended, unsuspended, deleted, approved, its profile):
   * its tokens are read again on their next use.
   */
  forgetAccount(accountId: number) {
    for (const hash of this.byAccount.get(accountId) ?? []) this.cache.delete(hash);
    this.byAccount.delete(accountId);
  }

  /** Another process changed tokens it could not name (PgCacheGenerations): every one is read again. */
  forgetAll() {
    this.cache.clear();
    this.byAccount.clear();
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

  /** Revokes every live token of an account (staff suspended it, deleted it, or reset its password). */
  revokeAllFor(accountId: number): number {
    const rows = this.db
      .select()
      .from(accessTokens)
      .where(and(eq(accessTokens.accountId, accountId), isNull(accessTokens.revokedAt)))
      .all();
    for (const row of rows) this.revokeRow(row);
    return rows.length;
  }

  private revokeRow(row: typeof accessTokens.$inferSelect) {
    this.db.update(accessTokens).set({ revokedAt: this.clock.now() }).where(eq(accessTokens.id, row.id)).run();
    this.drop(row.tokenHash);
    // Its push subscriptions go with it, its streams are closed (consequences.ts).
    this.events.emit({ type: "token.revoked", tokenId: row.id, accountId: row.accountId });
  }
}

interface TokenLookup {
  id: number;
  tokenHash: string;
  applicationId: number;
  accountId: number | null;
  scopes: string;
  createdAt: number;
  found: number;
  suspended: number;
  approved: number | null;
}

/**
 * Mastodon's require_user!, in its order: a sign-up waiting for approval is told so first; a
 * suspended or deleted account's login is disabled.
 */
function refusalOf(row: TokenLookup): string | null {
  if (row.accountId === null) return null;
  if (!row.found || row.approved === null) return DISABLED;
  if (!row.approved) return PENDING;
  return row.suspended ? DISABLED : null;
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
