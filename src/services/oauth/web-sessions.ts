import { and, eq, gt, lt } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Db } from "../../db/connection.ts";
import { webSessions } from "../../db/schema.ts";
import type { IdGenerator } from "../../ids.ts";
import { digest, randomSecret } from "../../auth/secrets.ts";

export const SESSION_LIFETIME_MS = 14 * 24 * 60 * 60 * 1000;

/** Browser sign-ins for the authorization pages; the cookie holds a secret, the table its digest. */
export class WebSessionService {
  constructor(
    private db: Db,
    private ids: IdGenerator,
    private clock: Clock,
  ) {}

  create(accountId: number): string {
    const secret = randomSecret();
    const now = this.clock.now();
    this.db.delete(webSessions).where(lt(webSessions.expiresAt, now)).run();
    this.db
      .insert(webSessions)
      .values({ id: this.ids.next(), tokenHash: digest(secret), accountId, createdAt: now, expiresAt: now + SESSION_LIFETIME_MS })
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

  /** Signs an account out of every browser (staff suspended it, deleted it, or reset its password). */
  destroyAllFor(accountId: number): void {
    this.db.delete(webSessions).where(eq(webSessions.accountId, accountId)).run();
  }

  destroy(secret: string | undefined) {
    if (!secret) return;
    this.db.delete(webSessions).where(eq(webSessions.tokenHash, digest(secret))).run();
  }
}
