import { eq } from "drizzle-orm";
import type { DatabasePort } from "../../db/port.ts";
import { hashPassword, verifyPassword } from "../../auth/secrets.ts";
import type { WebSessionService } from "../oauth/web-sessions.ts";
import { ValidationErrors } from "./validation.ts";

export interface PasswordChange {
  current?: string;
  password?: string;
  confirmation?: string;
}

/**
 * A member changes their password (Devise's update_with_password, as Mastodon's account
 * settings use it): the current password is required, the new one has Mastodon's length
 * (8 to 72) and its confirmation must match. Then every other browser signed in is signed out
 * (Mastodon's clear_other_sessions); apps keep their tokens, as in Mastodon, and are listed to
 * be revoked one by one.
 */
export class Passwords {
  constructor(
    private db: DatabasePort,
    private webSessions: WebSessionService,
  ) {}

  /** Answers how many other sessions were ended. */
  async change(accountId: number, change: PasswordChange, keepSession: string | undefined): Promise<number> {
    const { users } = this.db.tables;
    const [row] = await this.db.orm.select({ hash: users.passwordHash }).from(users).where(eq(users.accountId, accountId)).limit(1);
    if (!row) throw new Error("user vanished");
    const current = change.current ?? "";
    const password = change.password ?? "";
    const errors = new ValidationErrors();
    // Always one verification, so that a blank answer costs what a wrong one does.
    const matches = await verifyPassword(current.slice(0, 1024) || "x", row.hash);
    if (current === "") errors.add("current_password", "Current password", "BLANK", "can't be blank");
    else if (!matches || current.length > 1024) errors.add("current_password", "Current password", "INVALID", "is invalid");
    if (password === "") errors.add("password", "Password", "BLANK", "can't be blank");
    else if (password.length < 8) errors.add("password", "Password", "TOO_SHORT", "is too short (minimum is 8 characters)");
    else if (password.length > 72) errors.add("password", "Password", "TOO_LONG", "is too long (maximum is 72 characters)");
    if ((change.confirmation ?? "") !== password) errors.add("password_confirmation", "Password confirmation", "INVALID", "doesn't match Password");
    errors.throwIfAny(false);
    const passwordHash = await hashPassword(password);
    await this.db.orm.update(users).set({ passwordHash }).where(eq(users.accountId, accountId));
    return this.webSessions.revokeOthers(accountId, keepSession);
  }
}
