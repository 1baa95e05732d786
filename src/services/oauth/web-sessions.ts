import { and, desc, eq, gt, lt, ne, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { webSessions } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { digest, randomSecret } from "../../auth/secrets.ts";

export const SESSION_LIFETIME_MS = 14 * 24 * 60 * 60 * 1000;

/** Where a sign-in came from, kept for the member to recognise it on the sessions page. */
export interface SignInOrigin {
  userAgent?: string | null;
  ip?: string | null;
}

/** A browser signed in, as the sessions page lists it. */
export interface WebSessionView {
  id: number;
  createdAt: number;
  expiresAt: number;
  userAgent: string;
  ip: string | null;
  /** The session of the browser asking. */
  current: boolean;
}

/** Browser sessions of the sign-in, consent and settings pages (never used by the API); the cookie holds a secret, the table its digest. */
export class WebSessionService {
  /** The port's statements, built once (drizzle spends more building a query than SQLite running it). */
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
  ) {
    const { webSessions: sessions } = port.tables;
    const orm = port.orm;
    this.q = {
      expire: orm.delete(sessions).where(lt(sessions.expiresAt, sql.placeholder("now"))).prepare(),
      insert: orm
        .insert(sessions)
        .values({
          id: sql.placeholder("id"),
          tokenHash: sql.placeholder("tokenHash"),
          accountId: sql.placeholder("accountId"),
          createdAt: sql.placeholder("createdAt"),
          expiresAt: sql.placeholder("expiresAt"),
          userAgent: sql.placeholder("userAgent"),
          ip: sql.placeholder("ip"),
        })
        .prepare(),
      destroy: orm.delete(sessions).where(eq(sessions.tokenHash, sql.placeholder("tokenHash"))).prepare(),
      list: orm
        .select()
        .from(sessions)
        .where(and(eq(sessions.accountId, sql.placeholder("accountId")), gt(sessions.expiresAt, sql.placeholder("now"))))
        .orderBy(desc(sessions.createdAt), desc(sessions.id))
        .prepare(),
      accountFor: orm
        .select({ accountId: sessions.accountId })
        .from(sessions)
        .where(and(eq(sessions.tokenHash, sql.placeholder("tokenHash")), gt(sessions.expiresAt, sql.placeholder("now"))))
        .prepare(),
      destroyAllFor: orm.delete(sessions).where(eq(sessions.accountId, sql.placeholder("accountId"))).prepare(),
      revokeOthers: orm
        .delete(sessions)
        .where(and(eq(sessions.accountId, sql.placeholder("accountId")), ne(sessions.tokenHash, sql.placeholder("keep"))))
        .prepare(),
      revoke: orm.delete(sessions).where(and(eq(sessions.id, sql.placeholder("id")), eq(sessions.accountId, sql.placeholder("accountId")))).prepare(),
    };
  }

  async create(accountId: number, origin: SignInOrigin = {}): Promise<string> {
    const secret = randomSecret();
    const now = this.clock.now();
    await this.q.expire.execute({ now });
    await this.q.insert.execute({
      id: this.ids.next(),
      tokenHash: digest(secret),
      accountId,
      createdAt: now,
      expiresAt: now + SESSION_LIFETIME_MS,
      // As much as anyone needs to tell two browsers apart; a browser may send kilobytes.
      userAgent: (origin.userAgent ?? "").slice(0, 300),
      ip: origin.ip ?? null,
    });
    return secret;
  }

  async accountFor(secret: string | undefined): Promise<number | null> {
    if (!secret || secret.length > 128) return null;
    const [row] = (await this.q.accountFor.execute({ tokenHash: digest(secret), now: this.clock.now() })) as { accountId: number }[];
    return row?.accountId ?? null;
  }

  /** Signs an account out of every browser (staff suspended it, deleted it, or reset its password). */
  async destroyAllFor(accountId: number): Promise<void> {
    await this.q.destroyAllFor.execute({ accountId });
  }

  async destroy(secret: string | undefined) {
    if (!secret) return;
    await this.q.destroy.execute({ tokenHash: digest(secret) });
  }

  /** The account's sessions that have not expired, newest first; `currentSecret` marks the asking browser's. */
  async list(accountId: number, currentSecret?: string): Promise<WebSessionView[]> {
    const current = currentSecret ? digest(currentSecret) : null;
    const rows = (await this.q.list.execute({ accountId, now: this.clock.now() })) as (typeof webSessions.$inferSelect)[];
    return rows.map((r) => ({ id: r.id, createdAt: r.createdAt, expiresAt: r.expiresAt, userAgent: r.userAgent, ip: r.ip, current: r.tokenHash === current }));
  }

  /** Ends one of the account's sessions (Mastodon's Settings::SessionsController#destroy); false when it names none of theirs. */
  async revoke(accountId: number, sessionId: number): Promise<boolean> {
    return this.port.changes(await this.q.revoke.execute({ id: sessionId, accountId })) > 0;
  }

  /** Ends every session of the account but the one of `keepSecret` (Mastodon's clear_other_sessions); answers how many. */
  async revokeOthers(accountId: number, keepSecret: string | undefined): Promise<number> {
    const keep = keepSecret ? digest(keepSecret) : "";
    return this.port.changes(await this.q.revokeOthers.execute({ accountId, keep }));
  }
}
