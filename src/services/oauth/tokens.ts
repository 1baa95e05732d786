import { and, eq, isNull, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { accessTokens } from "../../db/schema.ts";
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

// The aliases quoted: PostgreSQL folds unquoted names to lower case. The booleans are SQLite's
// 0/1 or PostgreSQL's true/false: refusalOf reads them by truth only.
const LOOKUP = `SELECT t.id, t.token_hash AS "tokenHash", t.application_id AS "applicationId", t.account_id AS "accountId", t.scopes, t.created_at AS "createdAt",
        a.id IS NOT NULL AS found, a.suspended_at IS NOT NULL AS suspended, u.approved AS approved
 FROM oauth_access_tokens t LEFT JOIN accounts a ON a.id = t.account_id LEFT JOIN users u ON u.account_id = t.account_id
 WHERE t.token_hash = ? AND t.revoked_at IS NULL`;

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
   * SQLite's data_version (DatabasePort.otherWriters), which changes when another connection
   * commits: the command line revokes tokens too (suspending an account, resetting its
   * password), and a token it revoked must not live on in this cache. One pragma a lookup, no
   * table read. Null on PostgreSQL (see the constructor).
   */
  private otherWriters: (() => number) | null;
  private seenVersion = -1;
  /** Moves whenever the cache forgets something: a read begun before it is not kept (authenticate). */
  private forgets = 0;
  /** The port's statements, built once (drizzle spends more building a query than SQLite running it). */
  private q;

  /**
   * On SQLite the cache checks the port's `otherWriters` (data_version: a pragma of the
   * connection, no table read) before each hit; on PostgreSQL another process's changes reach
   * it through `forgetAll` (PgCacheGenerations).
   */
  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private events: EventBus,
  ) {
    const { accessTokens: tokens, authorizationCodes: codes } = port.tables;
    const orm = port.orm;
    this.q = {
      insert: orm
        .insert(tokens)
        .values({
          id: sql.placeholder("id"),
          tokenHash: sql.placeholder("tokenHash"),
          applicationId: sql.placeholder("applicationId"),
          accountId: sql.placeholder("accountId"),
          scopes: sql.placeholder("scopes"),
          createdAt: sql.placeholder("createdAt"),
        })
        .prepare(),
      byHash: orm.select().from(tokens).where(eq(tokens.tokenHash, sql.placeholder("tokenHash"))).prepare(),
      byId: orm.select().from(tokens).where(eq(tokens.id, sql.placeholder("id"))).prepare(),
      revoke: orm
        .update(tokens)
        .set({ revokedAt: sql.placeholder("now") as unknown as number })
        .where(eq(tokens.id, sql.placeholder("id")))
        .prepare(),
      liveOfApp: orm
        .select()
        .from(tokens)
        .where(and(eq(tokens.accountId, sql.placeholder("accountId")), eq(tokens.applicationId, sql.placeholder("applicationId")), isNull(tokens.revokedAt)))
        .prepare(),
      liveOf: orm
        .select()
        .from(tokens)
        .where(and(eq(tokens.accountId, sql.placeholder("accountId")), isNull(tokens.revokedAt)))
        .prepare(),
      useCodesOfApp: orm
        .update(codes)
        .set({ usedAt: sql.placeholder("now") as unknown as number })
        .where(and(eq(codes.accountId, sql.placeholder("accountId")), eq(codes.applicationId, sql.placeholder("applicationId")), isNull(codes.usedAt)))
        .prepare(),
    };
    this.otherWriters = port.otherWriters;
  }

  async issue(applicationId: number, accountId: number | null, scopes: string[]): Promise<IssuedToken> {
    const accessToken = randomSecret();
    const row = {
      id: this.ids.next(),
      tokenHash: digest(accessToken),
      applicationId,
      accountId,
      scopes: scopes.join(" "),
      createdAt: this.clock.now(),
    };
    await this.q.insert.execute(row);
    return { accessToken, auth: toAuth(row) };
  }

  /**
   * Who the token speaks for, or null. Asked once per request that carries a token, before
   * routing (src/http/edge.ts), so that the routes' checks (src/http/auth.ts) stay synchronous.
   */
  async authenticate(accessToken: string): Promise<Authentication | null> {
    if (accessToken.length === 0 || accessToken.length > 512) return null;
    const hash = digest(accessToken);
    const cached = this.cachedOf(hash);
    // A refused user's token asks again each time (few do, and approval must show at once);
    // an allowed one is refused only through a change that forgets it (forgetAccount, revokeRow).
    if (cached && !cached.refusal) return cached;
    const forgotten = this.forgets;
    const row = await this.port.get<TokenLookup>(LOOKUP, [hash]);
    if (!row) {
      if (cached) this.drop(hash);
      return null;
    }
    const auth = toAuth(row);
    auth.refusal = refusalOf(row);
    if (auth.refusal === PENDING) auth.pending = true;
    // Something was forgotten while the row was read (a revocation, a suspension): the row may
    // predate it, so it answers this request but is not kept.
    if (forgotten !== this.forgets) return auth;
    if (this.cache.size >= CACHE_LIMIT) this.drop(this.cache.keys().next().value as string);
    this.cache.set(hash, auth);
    if (auth.accountId !== null) {
      let hashes = this.byAccount.get(auth.accountId);
      if (!hashes) this.byAccount.set(auth.accountId, (hashes = new Set()));
      hashes.add(hash);
    }
    return auth;
  }

  /**
   * `authenticate` when the cache answers, without a promise: the edge asks this first, so that
   * a signed-in request whose token is kept pays no await (undefined: ask `authenticate`).
   */
  known(accessToken: string): Authentication | undefined {
    if (accessToken.length === 0 || accessToken.length > 512) return undefined;
    const cached = this.cachedOf(digest(accessToken));
    return cached && !cached.refusal ? cached : undefined;
  }

  /** The cache's entry, once the cache is known to be current (another connection's commit empties it). */
  private cachedOf(hash: string): Authentication | undefined {
    const version = this.otherWriters?.() ?? -1;
    if (version !== this.seenVersion) {
      this.forgetAll();
      this.seenVersion = version;
    }
    return this.cache.get(hash);
  }

  private drop(hash: string) {
    this.forgets++;
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
    this.forgets++;
    for (const hash of this.byAccount.get(accountId) ?? []) this.cache.delete(hash);
    this.byAccount.delete(accountId);
  }

  /** Another process changed tokens it could not name (PgCacheGenerations): every one is read again. */
  forgetAll() {
    this.forgets++;
    this.cache.clear();
    this.byAccount.clear();
  }

  /**
   * RFC 7009: revokes the token when it belongs to the calling app. An unknown or already
   * revoked token is "unknown" (the caller still answers success); another app's is "foreign".
   */
  async revoke(accessToken: string, applicationId: number): Promise<"revoked" | "unknown" | "foreign"> {
    const [row] = (await this.q.byHash.execute({ tokenHash: digest(accessToken) })) as TokenRow[];
    if (!row || row.revokedAt !== null) return "unknown";
    if (row.applicationId !== applicationId) return "foreign";
    await this.revokeRow(row);
    return "revoked";
  }

  /** Revokes a token by its id (a replayed authorization code takes back what it gave). */
  async revokeById(tokenId: number) {
    const [row] = (await this.q.byId.execute({ id: tokenId })) as TokenRow[];
    if (row && row.revokedAt === null) await this.revokeRow(row);
  }

  /** The apps with live tokens of the account, the most recently let in first. */
  async authorizedApps(accountId: number): Promise<AuthorizedApp[]> {
    // Each token's scopes are joined in JavaScript: SQLite's group_concat and PostgreSQL's
    // string_agg differ, and an account holds a few tokens.
    const rows = await this.port.all<{ applicationId: number; name: string; website: string | null; scopes: string; createdAt: number }>(
      `SELECT a.id AS "applicationId", a.name, a.website, t.scopes, t.created_at AS "createdAt"
       FROM oauth_access_tokens t JOIN applications a ON a.id = t.application_id
       WHERE t.account_id = ? AND t.revoked_at IS NULL ORDER BY t.id`,
      [accountId],
    );
    const apps = new Map<number, AuthorizedApp & { lastAt: number; all: string[] }>();
    for (const r of rows) {
      const app = apps.get(r.applicationId);
      if (!app) {
        apps.set(r.applicationId, { applicationId: r.applicationId, name: r.name, website: r.website, scopes: [], authorizedAt: r.createdAt, lastAt: r.createdAt, tokens: 1, all: [r.scopes] });
        continue;
      }
      app.authorizedAt = Math.min(app.authorizedAt, r.createdAt);
      app.lastAt = Math.max(app.lastAt, r.createdAt);
      app.tokens++;
      app.all.push(r.scopes);
    }
    return [...apps.values()]
      .sort((a, b) => b.lastAt - a.lastAt || b.applicationId - a.applicationId)
      .map(({ lastAt: _, all, ...r }) => ({ ...r, scopes: [...new Set(parseScopes(all.join(" ")))] }));
  }

  /**
   * Takes back everything an app holds of the account (Doorkeeper's revoke_all_for, as
   * Mastodon's authorised-apps page does): its live tokens, and the codes it was given and has
   * not exchanged yet. Answers how many tokens were revoked; 0 when it held none.
   */
  async revokeApp(accountId: number, applicationId: number): Promise<number> {
    const rows = (await this.q.liveOfApp.execute({ accountId, applicationId })) as TokenRow[];
    await this.q.useCodesOfApp.execute({ accountId, applicationId, now: this.clock.now() });
    for (const row of rows) await this.revokeRow(row);
    return rows.length;
  }

  /** Revokes every live token of an account (staff suspended it, deleted it, or reset its password). */
  async revokeAllFor(accountId: number): Promise<number> {
    const rows = (await this.q.liveOf.execute({ accountId })) as TokenRow[];
    for (const row of rows) await this.revokeRow(row);
    return rows.length;
  }

  private async revokeRow(row: TokenRow) {
    await this.q.revoke.execute({ id: row.id, now: this.clock.now() });
    await this.revoked(row);
  }

  /** What follows a token's revocation once it is written. */
  private async revoked(row: TokenRow) {
    this.drop(row.tokenHash);
    // Its push subscriptions go with it, its streams are closed (consequences.ts).
    await this.events.emit({ type: "token.revoked", tokenId: row.id, accountId: row.accountId });
  }
}

type TokenRow = typeof accessTokens.$inferSelect;

interface TokenLookup {
  id: number;
  tokenHash: string;
  applicationId: number;
  accountId: number | null;
  scopes: string;
  createdAt: number;
  found: number | boolean;
  suspended: number | boolean;
  approved: number | boolean | null;
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
