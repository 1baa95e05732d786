import { and, desc, eq, gt, lt, ne } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
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
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
  ) {}

  create(accountId: number, origin: SignInOrigin = {}): string {
    const secret = randomSecret();
    const now = this.clock.now();
    this.db.delete(webSessions).where(lt(webSessions.expiresAt, now)).run();
    this.db
      .insert(webSessions)
      .values({
        id: this.ids.next(),
        tokenHash: digest(secret),
        accountId,
        createdAt: now,
        expiresAt: now + SESSION_LIFETIME_MS,
        // As much as anyone needs to tell two browsers apart; a browser may send kilobytes.
        userAgent: (origin.userAgent ?? "").slice(0, 300),
        ip: origin.ip ?? null,
      })
      .run();
    return secret;
  }

  accountFor(secret: string | undefined): number | null {
    if (!secret || secret.length > 128) return null;
    const row = this.db
      .select({ accountId: webSessions.accountId })
      .from(webSessions)
      .where(and(eq(webSessions.tokenHash, digest(secret)), gt(webSessions.expiresAt, this.clock.now())))
      .get();
    return row?.accountId ?? null;
  }

  destroy(secret: string | undefined) {
    if (!secret) return;
    this.db.delete(webSessions).where(eq(webSessions.tokenHash, digest(secret))).run();
  }

  /** The account's sessions that have not expired, newest first; `currentSecret` marks the asking browser's. */
  list(accountId: number, currentSecret?: string): WebSessionView[] {
    const current = currentSecret ? digest(currentSecret) : null;
    return this.db
      .select()
      .from(webSessions)
      .where(and(eq(webSessions.accountId, accountId), gt(webSessions.expiresAt, this.clock.now())))
      .orderBy(desc(webSessions.createdAt), desc(webSessions.id))
      .all()
      .map((r) => ({ id: r.id, createdAt: r.createdAt, expiresAt: r.expiresAt, userAgent: r.userAgent, ip: r.ip, current: r.tokenHash === current }));
  }

  /** Ends one of the account's sessions (Mastodon's Settings::SessionsController#destroy); false when it names none of theirs. */
  revoke(accountId: number, sessionId: number): boolean {
    return this.db.delete(webSessions).where(and(eq(webSessions.id, sessionId), eq(webSessions.accountId, accountId))).returning({ id: webSessions.id }).all().length > 0;
  }

  /** Ends every session of the account but the one of `keepSecret` (Mastodon's clear_other_sessions); answers how many. */
  revokeOthers(accountId: number, keepSecret: string | undefined): number {
    const keep = keepSecret ? digest(keepSecret) : "";
    return this.db.delete(webSessions).where(and(eq(webSessions.accountId, accountId), ne(webSessions.tokenHash, keep))).returning({ id: webSessions.id }).all().length;
  }
}
