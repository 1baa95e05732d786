import { and, count, eq, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.ts";
import type { DatabasePort } from "../../db/port.ts";
import { ApiError } from "../../errors.ts";
import type { IdGenerator } from "../../ids.ts";
import { base32Encode, matchTotp, newTotpSecret, otpauthUri } from "../../auth/totp.ts";
import { digest, verifyPassword } from "../../auth/secrets.ts";

/** What keeps the authenticator secrets unreadable in the database (TokenSeal over two-factor.key). */
export interface SecretSeal {
  seal(secret: string): string;
  open(sealed: string): string | null;
}

/** An enrolment waiting for its first code: what the authenticator app is given. */
export interface Enrolment {
  secret: string;
  uri: string;
}

export interface TwoFactorState {
  enabled: boolean;
  enabledAt: number | null;
  recoveryCodesLeft: number;
}

export type SecondFactor = "otp" | "recovery";

/** The key file, in the data directory, the secrets are sealed under (back it up with the database). */
export const TWO_FACTOR_KEY_FILE = "two-factor.key";
/** Mastodon's otp_number_of_backup_codes. */
export const RECOVERY_CODE_COUNT = 10;
/** Mastodon's words (users.invalid_otp_token) for a sign-in code that is wrong. */
export const INVALID_CODE = "Invalid two-factor code.";
/** The sign-in step's refusal: a code is good once, so one just used (to turn two-factor on, say) is refused until the next. */
export const INVALID_SIGN_IN_CODE = `${INVALID_CODE} Each code works once: if you have just used this one, wait for the next.`;
/** Mastodon's words (two_factor_authentication.wrong_code) for a setup code that is wrong. */
export const WRONG_SETUP_CODE = "The entered code was invalid! Are server time and device time correct?";

/**
 * Two-factor sign-in with an authenticator app (TOTP) and recovery codes, as Mastodon's
 * otp_required_for_login: enrolment shows a secret, the first code from the app turns it on and
 * gives ten recovery codes, shown once. A code is good once: the step it was accepted for is
 * kept, and no code of that step or an earlier one is accepted again. A recovery code is good once.
 *
 * Recovery codes are 80 random bits kept as SHA-256 digests, as this server keeps its tokens:
 * nothing that random can be found from its digest, and a slow hash (argon2) would make each
 * sign-in attempt cost ten slow verifications for no gain. Unlike the secret, they do not depend
 * on two-factor.key: a server that lost the key still lets its members in with them.
 */
export class TwoFactor {
  // Built once (src/db/port.ts): drizzle spends more building a query than SQLite running it.
  private q;

  constructor(
    private port: DatabasePort,
    private ids: IdGenerator,
    private clock: Clock,
    private seal: SecretSeal,
    /** Who the codes are for in the app's list: the server's domain, as Mastodon's local_domain. */
    private issuer: string,
  ) {
    const { twoFactorRecoveryCodes, twoFactorSecrets, users } = port.tables;
    const orm = port.orm;
    const accountId = sql.placeholder("accountId");
    this.q = {
      secret: orm.select().from(twoFactorSecrets).where(eq(twoFactorSecrets.accountId, accountId)).prepare(),
      enabled: orm
        .select({ id: twoFactorSecrets.accountId })
        .from(twoFactorSecrets)
        .where(and(eq(twoFactorSecrets.accountId, accountId), isNotNull(twoFactorSecrets.enabledAt)))
        .prepare(),
      codesLeft: orm
        .select({ n: count().mapWith(Number) })
        .from(twoFactorRecoveryCodes)
        .where(and(eq(twoFactorRecoveryCodes.accountId, accountId), isNull(twoFactorRecoveryCodes.usedAt)))
        .prepare(),
      password: orm.select({ hash: users.passwordHash }).from(users).where(eq(users.accountId, accountId)).prepare(),
      spendStep: orm
        .update(twoFactorSecrets)
        .set({ lastUsedStep: sql.placeholder("step") as unknown as number })
        .where(
          and(
            eq(twoFactorSecrets.accountId, accountId),
            or(isNull(twoFactorSecrets.lastUsedStep), lt(twoFactorSecrets.lastUsedStep, sql.placeholder("step") as unknown as number)),
          ),
        )
        .prepare(),
      spendCode: orm
        .update(twoFactorRecoveryCodes)
        .set({ usedAt: sql.placeholder("now") as unknown as number })
        .where(
          and(
            eq(twoFactorRecoveryCodes.accountId, accountId),
            eq(twoFactorRecoveryCodes.codeDigest, sql.placeholder("digest") as unknown as string),
            isNull(twoFactorRecoveryCodes.usedAt),
          ),
        )
        .prepare(),
    };
  }

  private async secretRow(accountId: number) {
    const [row] = await this.q.secret.execute({ accountId });
    return row;
  }

  async state(accountId: number): Promise<TwoFactorState> {
    const row = await this.secretRow(accountId);
    const [counted] = await this.q.codesLeft.execute({ accountId });
    const enabledAt = row?.enabledAt ?? null;
    return { enabled: enabledAt !== null, enabledAt, recoveryCodesLeft: enabledAt === null ? 0 : (counted?.n ?? 0) };
  }

  /** Whether signing in needs a code (the password grant is refused then, as Mastodon refuses it). */
  async enabled(accountId: number): Promise<boolean> {
    return (await this.q.enabled.execute({ accountId })).length > 0;
  }

  /**
   * What a sign-in waiting for its code depends on: it changes when the password does or two-factor
   * is turned off and on, and the waiting sign-in then starts over (Mastodon's attempt_user_updated_at).
   */
  async stamp(accountId: number): Promise<string> {
    const [user] = await this.q.password.execute({ accountId });
    const row = await this.secretRow(accountId);
    return digest(`${user?.hash ?? ""}|${row?.enabledAt ?? ""}`).slice(0, 22);
  }

  /** Starts (or starts again) an enrolment with a new secret; refused while two-factor is on. */
  async begin(accountId: number, username: string): Promise<Enrolment> {
    if (await this.enabled(accountId)) throw new ApiError(422, "Two-factor authentication is already enabled.");
    const secret = newTotpSecret();
    const sealedSecret = this.seal.seal(secret);
    const { twoFactorSecrets } = this.port.tables;
    await this.port.orm
      .insert(twoFactorSecrets)
      .values({ accountId, sealedSecret, createdAt: this.clock.now() })
      .onConflictDoUpdate({ target: twoFactorSecrets.accountId, set: { sealedSecret, createdAt: this.clock.now(), lastUsedStep: null } });
    return { secret, uri: otpauthUri(this.issuer, username, secret) };
  }

  /** The enrolment waiting for its first code, or null (none begun, or two-factor already on). */
  async pending(accountId: number, username: string): Promise<Enrolment | null> {
    const row = await this.secretRow(accountId);
    if (!row || row.enabledAt !== null) return null;
    const secret = this.seal.open(row.sealedSecret);
    return secret === null ? null : { secret, uri: otpauthUri(this.issuer, username, secret) };
  }

  /** The first code from the app turns two-factor on; answers the recovery codes, to be shown once. */
  async confirm(accountId: number, code: string | undefined): Promise<string[]> {
    const row = await this.secretRow(accountId);
    if (!row || row.enabledAt !== null) throw new ApiError(422, "Set up two-factor authentication again: there is no setup waiting for a code.");
    const secret = this.seal.open(row.sealedSecret);
    const step = secret === null ? null : matchTotp(secret, normalise(code ?? ""), this.clock.now());
    if (step === null) throw new ApiError(422, WRONG_SETUP_CODE);
    const { twoFactorSecrets } = this.port.tables;
    return this.port.transaction(async () => {
      const enabled = await this.port.orm
        .update(twoFactorSecrets)
        .set({ enabledAt: this.clock.now(), lastUsedStep: step })
        .where(and(eq(twoFactorSecrets.accountId, accountId), isNull(twoFactorSecrets.enabledAt), eq(twoFactorSecrets.sealedSecret, row.sealedSecret)));
      // Another tab began again or confirmed meanwhile: this code was for a secret no longer waiting.
      if (this.port.changes(enabled) !== 1) throw new ApiError(422, WRONG_SETUP_CODE);
      return this.replaceRecoveryCodes(accountId);
    });
  }

  /**
   * The second step of a sign-in: a code from the app (six digits) or a recovery code. Answers
   * which it was, or null; either is spent by the answer.
   */
  async verify(accountId: number, code: string | undefined): Promise<SecondFactor | null> {
    const attempt = normalise(code ?? "");
    if (attempt === "" || attempt.length > 64) return null;
    if (/^\d{6}$/.test(attempt)) return (await this.useTotp(accountId, attempt)) ? "otp" : null;
    return (await this.useRecoveryCode(accountId, attempt)) ? "recovery" : null;
  }

  /** Turns two-factor off, proven by the account's password or a code (either kind); refused otherwise. */
  async disable(accountId: number, proof: { password?: string; code?: string }): Promise<void> {
    if (!(await this.enabled(accountId))) throw new ApiError(422, "Two-factor authentication is not enabled.");
    await this.prove(accountId, proof);
    const { twoFactorRecoveryCodes, twoFactorSecrets } = this.port.tables;
    await this.port.transaction(async () => {
      await this.port.orm.delete(twoFactorRecoveryCodes).where(eq(twoFactorRecoveryCodes.accountId, accountId));
      await this.port.orm.delete(twoFactorSecrets).where(eq(twoFactorSecrets.accountId, accountId));
    });
  }

  /** New recovery codes in place of the old (all of which stop working), proven as for disabling. */
  async regenerateRecoveryCodes(accountId: number, proof: { password?: string; code?: string }): Promise<string[]> {
    if (!(await this.enabled(accountId))) throw new ApiError(422, "Two-factor authentication is not enabled.");
    await this.prove(accountId, proof);
    return this.port.transaction(() => this.replaceRecoveryCodes(accountId));
  }

  /** Turns two-factor off without a proof: for the operator of a member who lost both app and codes (in the caller's transaction, if any). */
  async reset(accountId: number): Promise<boolean> {
    const { twoFactorRecoveryCodes, twoFactorSecrets } = this.port.tables;
    return this.port.transaction(async () => {
      await this.port.orm.delete(twoFactorRecoveryCodes).where(eq(twoFactorRecoveryCodes.accountId, accountId));
      return this.port.changes(await this.port.orm.delete(twoFactorSecrets).where(eq(twoFactorSecrets.accountId, accountId))) > 0;
    });
  }

  private async prove(accountId: number, proof: { password?: string; code?: string }) {
    const code = proof.code?.trim() ?? "";
    if (code !== "") {
      if ((await this.verify(accountId, code)) === null) throw new ApiError(422, INVALID_CODE);
      return;
    }
    const password = proof.password ?? "";
    const [row] = await this.q.password.execute({ accountId });
    // One verification whatever was given, so that a blank password costs what a wrong one does.
    const matches = row ? await verifyPassword(password.slice(0, 1024) || "x", row.hash) : false;
    if (password === "" || !matches) throw new ApiError(422, "Enter your current password or a two-factor code to confirm.");
  }

  private async useTotp(accountId: number, code: string): Promise<boolean> {
    const row = await this.secretRow(accountId);
    if (!row || row.enabledAt === null) return false;
    const secret = this.seal.open(row.sealedSecret);
    if (secret === null) return false;
    const step = matchTotp(secret, code, this.clock.now(), row.lastUsedStep);
    if (step === null) return false;
    // Only one of two requests racing with the same code moves the step on.
    return this.port.changes(await this.q.spendStep.execute({ accountId, step })) === 1;
  }

  private async useRecoveryCode(accountId: number, code: string): Promise<boolean> {
    if (!(await this.enabled(accountId))) return false;
    return this.port.changes(await this.q.spendCode.execute({ accountId, digest: digest(code), now: this.clock.now() })) === 1;
  }

  private async replaceRecoveryCodes(accountId: number): Promise<string[]> {
    const { twoFactorRecoveryCodes } = this.port.tables;
    await this.port.orm.delete(twoFactorRecoveryCodes).where(eq(twoFactorRecoveryCodes.accountId, accountId));
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => base32Encode(randomBytes(10)).toLowerCase());
    await this.port.orm.insert(twoFactorRecoveryCodes).values(codes.map((code) => ({ id: this.ids.next(), accountId, codeDigest: digest(code) })));
    // Shown in groups of four: "abcd-efgh-ijkl-mnop"; typed back with or without the dashes.
    return codes.map((code) => code.match(/.{4}/g)!.join("-"));
  }
}

/** A code as typed: spaces and dashes (as recovery codes are shown) left out, any case. */
function normalise(code: string): string {
  return code.replace(/[\s-]+/g, "").toLowerCase();
}
